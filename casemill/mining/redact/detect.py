"""Detectors of personal data in free text (the known fields that hold it in records are
`fields`'s).

Postal codes and cities are found where a record's field holds them (`zip`, `city`...), and in
text only right after a street address ("12 Main St, Springfield, IL 62701"): no text detector
looks for them elsewhere (every 5-digit number, every capitalised word); the redactor searches
text for the values found. States and countries are kept.

Text detectors (one combined pattern, one pass a text): emails, phone numbers (with separators,
a leading `+`, or named as a phone number), payment card numbers (13-19 digits that pass the Luhn
check), street addresses (a house number, a street name and a street-type word), user ids in the
tau-bench shape (`mia_li_3668`) and customer ids in Casemill's (`C1001`), payment methods' ids in
the tau-bench shape (`credit_card_7815826`), and a name the customer gives ("my name is ...").
What makes an address, and the city and postal code after one, is `places`'s; what announces a
name, `names`'s. Order, reservation, item and product ids are not personal data and are left
alone so cases stay checkable.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache
from itertools import compress

from casemill.mining.redact.names import NAME_HINTS, name_after, uncued_names
from casemill.mining.redact.numbers import VALID, scan_ids
from casemill.mining.redact.places import AFTER_NUMBER, POSTCODE_AFTER, address_ok, city_after

KINDS = (
    "email", "phone", "card", "address", "postcode", "city", "name", "user_id", "payment", "dob",
    "iban", "account", "ip", "passport", "ssn", "sin", "nino", "last4",
)  # fmt: skip

# a phone number's separator: a space, dot or hyphen (and maybe a line break after it), or a
# line break alone (a number wrapped across lines)
_SEP = r"(?:[ .-]\s?|\r?\n)"
_CARD_SEP = r"(?:[ \t-]|\r?\n)"

EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}")
# Everything else that starts with a digit, a `+` or a `(`: cards (also right after a `.` or
# `-`: `No.4111...`, `cc-4111...`), phones (North American with or without a country code,
# international with a `+`, with or without separators, and national ones of spaced groups,
# `020 7946 0111`: `_digit_values` keeps those of 10 to 12 digits), addresses.
DIGITS = re.compile(
    r"(?<![\w+])(?=[\d+(])(?:"
    rf"(?P<card>\d(?:{_CARD_SEP}?\d){{12,18}}(?![\w-]))"
    r"|(?<![.-])(?:"
    rf"(?P<phone>(?:\+\d{{1,3}}[ .-]?|\d[ .-])?(?:\(\d{{3}}\){_SEP}?|\d{{3}}{_SEP})\d{{3}}{_SEP}\d{{4}}(?!\w)"
    rf"|\+\d{{1,3}}(?:{_SEP}\d{{1,8}}){{2,5}}(?![\w-])"
    r"|\+\d{8,15}(?![\w-])"
    r"|\d{2,5}(?: \d{2,6}){1,3}(?![\w-]))"
    rf"|(?P<address>\d{{1,6}}{AFTER_NUMBER})"
    r"))"
)
_PAYMENT_SOURCE = r"(?:credit_card|debit_card|gift_card|certificate|paypal|bank_account)"
# (a payment method's id of the tau-bench shape, `gift_card_1234`, is not a user id)
USER_ID = re.compile(rf"\b(?!{_PAYMENT_SOURCE}_\d)[a-z]+_[a-z]+_\d{{4}}\b|\bC\d{{4,6}}\b")
_C_ID = re.compile(r"C(?<!\wC)\d{4,6}\b")
# a payment method's id in the tau-bench shape (`credit_card_7815826`, `gift_card_8190333`)
PAYMENT_ID = re.compile(rf"(?<!\w){_PAYMENT_SOURCE}_\d{{4,}}\b")
_TAU_TAIL = re.compile(r"_[a-z]+_\d{4}\b")  # a tau-bench id from its first underscore on

# The patterns above define what is found; `_scan` finds exactly their matches (a test checks
# it) through faster forms. Python's `re` skips ahead only to a pattern's first literal or
# character set, and those patterns start with a look-behind, `\b` or a run of word characters,
# so as written every position of a text is a start to try.
# DIGITS with its first character consumed up front (and checked again by look-behinds); its
# alternatives in DIGITS's order for each first character.
_DIGITS_FAST = re.compile(
    r"[\d+(](?<![\w+][\d+(])(?:"
    rf"(?P<card>(?<=\d)(?:{_CARD_SEP}?\d){{12,18}}(?![\w-]))"
    r"|(?<![.-].)(?:"
    rf"(?P<phone>(?<=\+)\d{{1,3}}[ .-]?(?:\(\d{{3}}\){_SEP}?|\d{{3}}{_SEP})\d{{3}}{_SEP}\d{{4}}(?!\w)"
    rf"|(?<=\d)[ .-](?:\(\d{{3}}\){_SEP}?|\d{{3}}{_SEP})\d{{3}}{_SEP}\d{{4}}(?!\w)"
    rf"|(?<=\()\d{{3}}\){_SEP}?\d{{3}}{_SEP}\d{{4}}(?!\w)"
    rf"|(?<=\d)\d{{2}}{_SEP}\d{{3}}{_SEP}\d{{4}}(?!\w)"
    rf"|(?<=\+)\d{{1,3}}(?:{_SEP}\d{{1,8}}){{2,5}}(?![\w-])"
    r"|(?<=\+)\d{8,15}(?![\w-])"
    r"|(?<=\d)\d{1,4}(?: \d{2,6}){1,3}(?![\w-]))"
    rf"|(?P<address>(?<=\d)\d{{0,5}}{AFTER_NUMBER})"
    r"))"
)


_PHONE_AFTER = re.compile(r"[^\d\n\x00]{0,15}(\d{10,11})(?!\d)")
_PHONE_HINTS = ("phone", "mobile", "cell", "call me", "text me", "number")
_HAS_DIGIT = re.compile(r"\d")


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


# a text longer than this (instructions repeated in every conversation) is scanned alone and
# its findings remembered; shorter ones are scanned in batches (`scan_many`)
LONG = 2048


def scan(text: str) -> Iterator[tuple[str, str]]:
    """(kind, value) for every piece of personal data the detectors find in `text`."""
    if len(text) > LONG:
        yield from _scan_cached(text)
    else:
        yield from _scan(text)


@lru_cache(maxsize=256)
def _scan_cached(text: str) -> tuple[tuple[str, str], ...]:
    return tuple(_scan(text))


def _emails_at(text: str) -> list[tuple[int, str]]:
    """EMAIL's matches with where each starts, found from each `@` back to the start of its
    local part."""
    found = []
    end = 0  # where the last match ended: the next cannot start before it
    at = text.find("@")
    while at != -1:
        start = at
        while start > end and ((c := text[start - 1]).isalnum() or c in "._%+-"):
            start -= 1
        m = EMAIL.match(text, start) if start < at else None
        if m is not None:
            found.append((start, m.group(0)))
            end = m.end()
        at = text.find("@", max(at + 1, end))
    return found


def is_word(ch: str) -> bool:
    """Whether `ch` is a word character (what `\\w` and `\\b` go by)."""
    return ch.isalnum() or ch == "_"


def _user_ids_at(text: str) -> list[tuple[int, str]]:
    """USER_ID's matches with where each starts, in order: customer ids, and tau-bench ids
    found from their first underscore back to the start of the word."""
    found = [(m.start(), m.group(0)) for m in _C_ID.finditer(text)] if "C" in text else []
    for m in _TAU_TAIL.finditer(text):
        start = m.start()
        while start > 0 and "a" <= text[start - 1] <= "z":
            start -= 1
        if start < m.start() and not (start > 0 and is_word(text[start - 1])):
            value = text[start : m.end()]
            if PAYMENT_ID.fullmatch(value) is None:
                found.append((start, value))
    found.sort()
    return found


def _scan(text: str) -> list[tuple[str, str]]:
    return [(kind, value) for _, kind, value in _scan_at(text)]


def _scan_at(text: str, luhn: bool = True) -> list[tuple[int, str, str]]:
    """(where, kind, value) of everything the detectors find in `text`, `where` being where
    the value starts; card numbers only pass when their digits pass the Luhn check unless
    `luhn` is False (then every candidate the pattern finds is given)."""
    found: list[tuple[int, str, str]] = []
    if "@" in text:
        found += [(at, "email", value) for at, value in _emails_at(text)]
    digits = _HAS_DIGIT.search(text) is not None
    if digits:
        found += _digit_values(text, luhn)
        found += [(at, "user_id", value) for at, value in _user_ids_at(text)]
        if "_" in text:
            found += [(m.start(), "payment", m.group(0)) for m in PAYMENT_ID.finditer(text)]
    low = text.lower()
    ids = scan_ids(text, low, digits)
    found += ids if not luhn else [f for f in ids if valid(f[1], f[2])]
    if digits:
        for hint in _PHONE_HINTS:
            at = low.find(hint)
            while at != -1:
                m = _PHONE_AFTER.match(text, at + len(hint))
                if m:
                    found.append((m.start(1), "phone", m.group(1)))
                at = low.find(hint, at + 1)
    for hint in NAME_HINTS:
        at = low.find(hint)
        while at != -1:  # after the hint, unless the hint is the end of a longer word
            if not (at > 0 and low[at - 1].isalnum()):
                name = name_after(text, at + len(hint))
                if name is not None:
                    found.append((name[0], "name", name[1]))
            at = low.find(hint, at + 1)
    named = {where for where, kind, _ in found if kind == "name"}
    found += [f for f in uncued_names(text) if f[0] not in named]  # (said once: found once)
    return found


def valid(kind: str, value: str) -> bool:
    """Whether a candidate's digits pass its kind's check (a card's Luhn check, an IBAN's
    check digits...); kinds without one always do."""
    if kind == "card":
        return card_ok(value)
    check = VALID.get(kind)
    return check is None or check(value)


def card_ok(value: str) -> bool:
    """Whether a candidate card number (digits, spaces and dashes) passes the Luhn check."""
    plain = "".join(ch for ch in value if ch.isdigit())
    return 13 <= len(plain) <= 19 and luhn_ok(plain)


def _digit_values(text: str, luhn: bool = True) -> list[tuple[int, str, str]]:
    found = []
    for m in _DIGITS_FAST.finditer(text):
        kind = m.lastgroup
        value = m.group(0)
        if kind == "card":
            if not luhn or card_ok(value):
                found.append((m.start(), "card", value))
        elif kind == "address":
            if address_ok(value):
                found.append((m.start(), "address", value))
                if text.startswith(",", m.end()) and (city := city_after(text, m.end())):
                    found.append((city[0], "city", city[1]))
                    code = POSTCODE_AFTER.match(text, city[0] + len(city[1]))
                    if code is not None:
                        found.append((code.start("zip"), "postcode", code.group("zip")))
        elif kind == "phone" and phone_ok(value):
            found.append((m.start(), "phone", value))
    return found


def phone_ok(value: str) -> bool:
    """Whether a candidate phone number has the digits of one: 8 or more, and 10 to 12 when
    written as groups of digits and spaces alone (`020 7946 0111`; not `10 20 30`)."""
    digits = sum(ch.isdigit() for ch in value)
    if value.replace(" ", "").isdigit():
        return 10 <= digits <= 12
    return digits >= 8


# What the detectors find depends on where a text has digits, not on which digits (but for the
# Luhn check of a card number, made on the value): a text's shape (every digit 1-9 made 0) holds
# the findings of every text of that shape. Record values and phrases recur from conversation to
# conversation with other ids and numbers in them, so a text's findings are remembered by shape:
# (start, end, kind) of each, card numbers before their Luhn check. Emptied when full.
_FOUND: dict[str, tuple[tuple[int, int, str], ...]] = {}
_FOUND_MAX = 32768
_SHAPE = bytes.maketrans(b"123456789", b"000000000")


def shape(text: str) -> str:
    """`text` with every ASCII digit made 0 (UTF-8 holds no byte of a digit but the digit)."""
    raw = text.encode("utf-8", "surrogatepass").translate(_SHAPE)
    return raw.decode("utf-8", "surrogatepass")


def scan_many(
    texts: list[str], sep: str = "\x00", joined: str | None = None
) -> list[tuple[str, str]]:
    """(kind, value) for what the detectors find in each of `texts`: texts of a shape seen
    before answered from memory, the others scanned together in one pass, joined by `sep`
    (`joined`, when the caller has it), which no detector matches across; texts holding `sep`
    or longer than `LONG` are scanned alone (`scan`). Values come in another order than text by
    text."""
    found: list[tuple[str, str]] = []
    if not texts:
        return found
    shapes = shape(sep.join(texts) if joined is None else joined).split(sep)
    if len(shapes) != len(texts):  # some texts hold the separator
        found = scan_many([t for t in texts if sep not in t], sep)
        for text in texts:
            if sep in text:
                found += scan(text)
        return found
    known = list(map(_FOUND.get, shapes))  # None for a shape not seen, () for no findings
    for i in compress(range(len(known)), known):
        text = texts[i]
        for start, end, kind in known[i]:
            value = text[start:end]
            if valid(kind, value):
                found.append((kind, value))
    fresh = [i for i, spans in enumerate(known) if spans is None]
    if fresh and any(len(shapes[i]) > LONG for i in fresh):  # never remembered
        for i in fresh:
            if len(shapes[i]) > LONG:
                found += scan(texts[i])
        fresh = [i for i in fresh if len(shapes[i]) <= LONG]
    if not fresh:
        return found
    starts, at = [], 0
    for i in fresh:
        starts.append(at)
        at += len(texts[i]) + 1
    each: dict[int, list[tuple[int, int, str]]] = {}
    for where, kind, value in _scan_at(sep.join([texts[i] for i in fresh]), luhn=False):
        n = bisect_right(starts, where) - 1
        start = where - starts[n]
        each.setdefault(n, []).append((start, start + len(value), kind))
        if valid(kind, value):
            found.append((kind, value))
    if len(_FOUND) + len(fresh) > _FOUND_MAX:
        _FOUND.clear()
    for n, i in enumerate(fresh):
        _FOUND[shapes[i]] = tuple(each[n]) if n in each else ()
    return found
