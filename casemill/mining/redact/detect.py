"""Detectors of personal data in free text, and the known fields that hold it in records.

Postal codes and cities are found where a record's field holds them (`zip`, `city`...), and in
text only right after a street address ("12 Main St, Springfield, IL 62701"): no text detector
looks for them elsewhere (every 5-digit number, every capitalised word); the redactor searches
text for the values found. States and countries are kept.

Text detectors (one combined pattern, one pass a text): emails, phone numbers (with separators,
a leading `+`, or named as a phone number), payment card numbers (13-19 digits that pass the Luhn
check), street addresses (a house number, a street name and a street-type word), user ids in the
tau-bench shape (`mia_li_3668`) and customer ids in Casemill's (`C1001`), payment methods' ids in
the tau-bench shape (`credit_card_7815826`), and a name the customer gives ("my name is ...").
Order, reservation, item and product ids are not personal data and are left alone so cases stay
checkable.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache
from itertools import compress

KINDS = (
    "email", "phone", "card", "address", "postcode", "city", "name", "user_id", "payment", "dob",
)  # fmt: skip

_STREET_TYPES = (
    "street|st|avenue|ave|road|rd|drive|dr|lane|ln|boulevard|blvd|way|court|ct|place|pl|terrace|"
    "parkway|pkwy|circle|cir|highway|hwy|square|sq|trail|trl|alley|crescent|close"
)
# the other street types of Faker's US addresses (Infinite Loop, Sunset Vista, Maple Crossing):
# ordinary words too, so only written capitalised
_TITLED_STREET_TYPES = (
    "Branch|Bridge|Brook|Brooks|Burg|Burgs|Bypass|Camp|Canyon|Cape|Causeway|Center|Centers|"
    "Circles|Cliff|Cliffs|Club|Common|Corner|Corners|Course|Courts|Cove|Coves|Creek|Crest|"
    "Crossing|Crossroad|Curve|Dale|Dam|Divide|Drives|Estate|Estates|Expressway|Extension|"
    "Extensions|Fall|Falls|Ferry|Field|Fields|Flat|Flats|Ford|Fords|Forest|Forge|Forges|Fork|"
    "Forks|Fort|Freeway|Garden|Gardens|Gateway|Glen|Glens|Green|Greens|Grove|Groves|Harbor|"
    "Harbors|Haven|Heights|Hill|Hills|Hollow|Inlet|Island|Islands|Isle|Junction|Junctions|Key|"
    "Keys|Knoll|Knolls|Lake|Lakes|Land|Landing|Light|Lights|Loaf|Lock|Locks|Lodge|Loop|Mall|"
    "Manor|Manors|Meadow|Meadows|Mews|Mill|Mills|Mission|Motorway|Mount|Mountain|Mountains|"
    "Neck|Orchard|Oval|Overpass|Park|Parks|Parkways|Pass|Passage|Path|Pike|Pine|Pines|Plain|"
    "Plains|Plaza|Point|Points|Port|Ports|Prairie|Radial|Ramp|Ranch|Rapid|Rapids|Rest|Ridge|"
    "Ridges|River|Roads|Route|Row|Rue|Run|Shoal|Shoals|Shore|Shores|Skyway|Spring|Springs|"
    "Spur|Spurs|Squares|Station|Stravenue|Stream|Streets|Summit|Throughway|Trace|Track|"
    "Trafficway|Tunnel|Turnpike|Underpass|Union|Unions|Valley|Valleys|Via|Viaduct|View|Views|"
    "Village|Villages|Ville|Vista|Walk|Walks|Wall|Ways|Well|Wells"
)
_UNIT = r"(?:,?\s+(?i:apt|apartment|suite|ste|unit|floor|fl|#)\.?\s*#?\s*[A-Za-z0-9-]+)?"
_WORD = r"[A-Za-z][A-Za-z'-]*\.?"
_STREET = rf"(?:(?i:{_STREET_TYPES})|{_TITLED_STREET_TYPES})\b\.?{_UNIT}"
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
    rf"|(?P<address>\d{{1,6}}[A-Za-z]?\s+(?:{_WORD}\s+){{0,3}}{_WORD}\s+{_STREET})"
    r"))"
)
_PAYMENT_SOURCE = r"(?:credit_card|debit_card|gift_card|certificate|paypal|bank_account)"
# (a payment method's id of the tau-bench shape, `gift_card_1234`, is not a user id)
USER_ID = re.compile(rf"\b(?!{_PAYMENT_SOURCE}_\d)[a-z]+_[a-z]+_\d{{4}}\b|\bC\d{{4,6}}\b")

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
    rf"|(?P<address>(?<=\d)\d{{0,5}}[A-Za-z]?\s+(?:{_WORD}\s+){{0,3}}{_WORD}\s+{_STREET})"
    r"))"
)
# A city written right after a street address ("1457 Birchwood Avenue, Tacoma."): after ", ",
# one to three capitalised words, ending at punctuation, the end of a line or text, a state
# (its name or 2-letter code) or a postal code; not a state or country itself, nor a word such
# as Please (the words end where a lower-case word follows: "..., Please send it" is no city).
US_STATES = (
    "Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|"
    "Hawaii|Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|"
    "Massachusetts|Michigan|Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|"
    "New Hampshire|New Jersey|New Mexico|New York|North Carolina|North Dakota|Ohio|Oklahoma|"
    "Oregon|Pennsylvania|Rhode Island|South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont|"
    "Virginia|Washington|West Virginia|Wisconsin|Wyoming|District of Columbia"
)
_CITY_WORD = r"(?:(?:St|Ste|Ft|Mt)\.\s?)?[A-Z][a-z]+(?:['’-][A-Za-z][a-z]+)*"
CITY_AFTER = re.compile(
    rf",[ \t]*(?P<city>{_CITY_WORD}(?: {_CITY_WORD}){{0,2}}?)"
    r"(?=[ \t]*(?:[,.;!?\r\n\x00]|\Z)"
    rf"|[ \t]+(?:(?:{US_STATES})(?![\w'’-])|[A-Z]{{2}}(?![\w'’-])|\d{{5}}(?![\w-])))"
)
_STATE_NAMES = frozenset(s.lower() for s in US_STATES.split("|"))
# what makes a state's name a city (New York, NY): a state's code or a postal code after it
_THEN_CODE = re.compile(r"[ \t]*,?[ \t]*(?:[A-Z]{2}(?![\w'’-])|\d{5}(?![\w-]))")
_NOT_CITIES = frozenset(
    {
        "united states", "usa", "america", "canada", "mexico", "united kingdom", "england",
        "please", "thanks", "thank you", "thank", "yes", "no", "sorry", "hi", "hello", "ok",
        "okay", "and", "but", "so", "also", "then", "best", "regards", "cheers", "sincerely",
    }
)  # fmt: skip


# a postal code after a street address's city: its state (name or code) first, if any
POSTCODE_AFTER = re.compile(
    rf"[ \t]*,?[ \t]*(?:(?:{US_STATES}|[A-Z]{{2}})[ \t]*,?[ \t]*)?"
    r"(?P<zip>\d{5}(?:-\d{4})?)(?![\w-])"
)


def city_after(text: str, end: int) -> tuple[int, str] | None:
    """Where a city written right after a street address ending at `end` starts, and the
    city (`CITY_AFTER`), or None."""
    m = CITY_AFTER.match(text, end)
    if m is None:
        return None
    city = m.group("city")
    low = city.lower()
    if low in _NOT_CITIES or (low in _STATE_NAMES and not _THEN_CODE.match(text, m.end())):
        return None
    return m.start("city"), city


_C_ID = re.compile(r"C(?<!\wC)\d{4,6}\b")
# a payment method's id in the tau-bench shape (`credit_card_7815826`, `gift_card_8190333`)
PAYMENT_ID = re.compile(rf"(?<!\w){_PAYMENT_SOURCE}_\d{{4,}}\b")
_TAU_TAIL = re.compile(r"_[a-z]+_\d{4}\b")  # a tau-bench id from its first underscore on
# what a name follows in text: the customer giving it, a title, a letter's sign-off
_NAME_HINTS = (
    "my name is",
    "this is",
    "i am",
    "i'm",
    "mr.",
    "mrs.",
    "ms.",
    "dr.",
    "mr",
    "mrs",
    "ms",
    "miss",
    "sincerely,",
    "regards,",
    "name's",
    "named",
    "my wife",
    "my husband",
    "my partner",
    "my son",
    "my daughter",
    "my mother",
    "my father",
    "my mom",
    "my dad",
    "my brother",
    "my sister",
)
# up to two words after a hint: letters of any script, with inner apostrophes and hyphens
# (O'Brien, Garcia-Lopez); `_is_name_word` says which are a name's
_LETTERS = r"[^\W\d_](?:[^\W\d_]|['’-](?=[^\W\d_]))*"
_NAME_AFTER = re.compile(rf"\s+({_LETTERS})(?:\s+({_LETTERS}))?")


def _is_name_word(word: str) -> bool:
    """A name's word: capitalised and not all capitals (McDonald, José, Łukasz, O'Brien), or
    of a script without capitals (王伟)."""
    if len(word) < 2:
        return False
    head = word[0]
    if head.isupper():
        return not word.isupper()
    return not head.islower()


def _name_after(text: str, at: int) -> tuple[int, str] | None:
    """Where the name a hint ending at `at` is followed by starts, and the name: one or two
    name words (`_is_name_word`), the first not a word such as Sorry or Hello."""
    m = _NAME_AFTER.match(text, at)
    if m is None or not _is_name_word(first := m.group(1)) or first in _NOT_NAMES:
        return None
    second = m.group(2)
    end = m.end(2) if second is not None and _is_name_word(second) else m.end(1)
    return m.start(1), text[m.start(1) : end]


_PHONE_AFTER = re.compile(r"[^\d\n\x00]{0,15}(\d{10,11})(?!\d)")
_PHONE_HINTS = ("phone", "mobile", "cell", "call me", "text me", "number")
_HAS_DIGIT = re.compile(r"\d")

_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "on",
        "in",
        "of",
        "to",
        "for",
        "my",
        "your",
        "our",
        "is",
        "are",
        "and",
        "or",
        "at",
        "by",
        "with",
        "from",
        "this",
        "that",
        "it",
        "was",
        "be",
        "been",
        "has",
        "have",
        "had",
        "day",
        "days",
        "item",
        "items",
        "box",
        "boxes",
        "order",
        "orders",
    ]
)
_NOT_NAMES = frozenset(
    [
        "Dr",
        "Mr",
        "Mrs",
        "Ms",
        "Miss",
        "Sorry",
        "Not",
        "Just",
        "Trying",
        "Looking",
        "Calling",
        "Writing",
        "Here",
        "Happy",
        "Glad",
        "Still",
        "Going",
        "Unable",
        "Very",
        "So",
        "The",
        "A",
        "An",
        "Hi",
        "Hello",
        "Back",
        "Done",
        "Ready",
        "Sure",
        "Fine",
        "Good",
        "Ok",
        "Okay",
        "Afraid",
        "Interested",
    ]
)


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


def _address_ok(text: str) -> bool:
    words = text.split()
    return not any(w.lower().strip(".,") in _STOP for w in words[1:-1])


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
    if digits:
        for hint in _PHONE_HINTS:
            at = low.find(hint)
            while at != -1:
                m = _PHONE_AFTER.match(text, at + len(hint))
                if m:
                    found.append((m.start(1), "phone", m.group(1)))
                at = low.find(hint, at + 1)
    for hint in _NAME_HINTS:
        at = low.find(hint)
        while at != -1:  # after the hint, unless the hint is the end of a longer word
            if not (at > 0 and low[at - 1].isalnum()):
                name = _name_after(text, at + len(hint))
                if name is not None:
                    found.append((name[0], "name", name[1]))
            at = low.find(hint, at + 1)
    return found


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
            if _address_ok(value):
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
            if kind != "card" or card_ok(value):
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
        if kind != "card" or card_ok(value):
            found.append((kind, value))
    if len(_FOUND) + len(fresh) > _FOUND_MAX:
        _FOUND.clear()
    for n, i in enumerate(fresh):
        _FOUND[shapes[i]] = tuple(each[n]) if n in each else ()
    return found


# Keys of structured records (tool results, arguments) whose string values are personal data.
FIELD_KINDS: dict[str, str] = {
    "email": "email",
    "email_address": "email",
    "phone": "phone",
    "phone_number": "phone",
    "mobile": "phone",
    "telephone": "phone",
    "mobile_number": "phone",
    "mobile_phone": "phone",
    "cell": "phone",
    "cell_phone": "phone",
    "phone_no": "phone",
    "contact_number": "phone",
    "first_name": "name",
    "last_name": "name",
    "full_name": "name",
    "customer_name": "name",
    "passenger_name": "name",
    "contact_name": "name",
    "cardholder_name": "name",
    "card_holder": "name",
    "cardholder": "name",
    "account_holder": "name",
    "recipient_name": "name",
    "given_name": "name",
    "family_name": "name",
    "surname": "name",
    "middle_name": "name",
    "username": "user_id",
    "user_name": "user_id",
    "street1": "address",
    "street2": "address",
    "address1": "address",
    "address2": "address",
    "street": "address",
    "street_address": "address",
    "line1": "address",
    "line2": "address",
    "address_line1": "address",
    "address_line2": "address",
    "address_line_1": "address",
    "address_line_2": "address",
    "street_line1": "address",
    "street_line2": "address",
    "zip": "postcode",
    "zipcode": "postcode",
    "zip_code": "postcode",
    "postal_code": "postcode",
    "postcode": "postcode",
    "post_code": "postcode",
    "city": "city",
    "town": "city",
    "user_id": "user_id",
    "customer_id": "user_id",
    "account_id": "user_id",
    "member_id": "user_id",
    "client_id": "user_id",
    "account_number": "user_id",
    "customer_number": "user_id",
    "card_number": "card",
    "card": "card",
    "card_no": "card",
    "cc_number": "card",
    "credit_card_number": "card",
    "payment_id": "payment",
    "payment_method_id": "payment",
    "dob": "dob",
    "date_of_birth": "dob",
    "birthdate": "dob",
    "birth_date": "dob",
}

# Keys whose plain string value is an address (one not serialised as JSON: a dict under them is
# a record walked on its own).
PLAIN_ADDRESS_KEYS = frozenset(
    {"address", "shipping_address", "billing_address", "home_address", "mailing_address"}
)
# Keys under which an object is a person's (`{"customer": {"name": ...}}`), so that its plain
# `name` is a person's name, as when the object holds one of `PERSON_MARKERS`.
PERSON_KEYS = frozenset(
    {
        "customer",
        "user",
        "passenger",
        "contact",
        "recipient",
        "cardholder",
        "account_holder",
        "buyer",
        "sender",
        "guest",
        "traveler",
        "traveller",
        "member",
        "profile",
    }
)

# What marks an object as a payment method, so that its `id` is a payment method's id: one of
# these keys, or one of the sources under its `source`, `kind` or `type`.
PAYMENT_MARKERS = frozenset({"last4", "last_four", "brand", "card_brand", "exp_month", "expiry"})
PAYMENT_SOURCES = frozenset(
    {"credit_card", "debit_card", "gift_card", "certificate", "paypal", "card", "bank_account"}
)


def is_payment_method(record: dict) -> bool:
    if not PAYMENT_MARKERS.isdisjoint(record):
        return True
    return any(
        isinstance(kind := record.get(key), str) and kind in PAYMENT_SOURCES
        for key in ("source", "kind", "type")
    )


# Keys that mark an object as a person, so that its plain `name` is a person's name (a line
# item's `name` is a product).
PERSON_MARKERS = frozenset(
    {
        "email",
        "phone",
        "phone_number",
        "dob",
        "date_of_birth",
        "payment_methods",
        "address",
        "first_name",
        "last_name",
        "membership",
        "saved_passengers",
    }
)
