"""Detectors of national, bank and network identifiers, dates of birth, obfuscated emails and a
card's last four digits in free text (`detect` runs them with its own).

What is checked and by what:

- IBANs (`GB82 WEST 1234 5698 7654 32`, with or without spaces): their ISO 7064 check digits and
  country format, by python-stdnum (`stdnum.iban`);
- US Social Security numbers (`536-90-4399`, and 9 bare digits after "ssn" or "social
  security"): the area, group and serial rules, by python-stdnum (`stdnum.us.ssn`);
- Canadian Social Insurance numbers (9 digits after "sin" or "social insurance"): the Luhn
  check, by python-stdnum (`stdnum.ca.sin`);
- UK National Insurance numbers (`QQ 12 34 56 C`): the prefixes HMRC never issues are refused,
  as Presidio's `UkNinoRecognizer` pattern does (python-stdnum has no module for them);
- IPv4 and IPv6 addresses: parsed by the standard library's `ipaddress`;
- passport numbers: 6 to 9 letters and digits (at least two digits) after "passport";
- dates of birth: a date after "born", "DOB", "date of birth" or "birthday", in the forms
  `04/02/1960`, `14.03.1987`, `1987-03-14`, `September 10, 1996` and `10 September 1996`
  (a date without such a word is a date of travel or delivery, and kept);
- obfuscated emails (`name(at)web.de`, `x dot monty at gmail dot com`): a domain ending in a
  known top-level domain after `(at)`, `[at]` or ` at `;
- a card's last four digits after "ending", "ends in", "last four" or "last 4" (`card ending
  4417`): redacted so that they agree with the surrogate card (`assign`).

Presidio's recognizers find the same shapes; they are not imported at run time because
importing `presidio_analyzer` loads spaCy (seconds per process, and most of the mining
throughput): its patterns and context words are used here, with python-stdnum's checksums.
Every pattern finds candidates by where a text has digits; `valid` checks a candidate's digits,
so a candidate can be remembered by the text's shape (`detect.scan_many`) and checked again.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import date

from stdnum import iban as _iban
from stdnum.ca import sin as _sin
from stdnum.us import ssn as _ssn

MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
DATE = re.compile(
    r"(?P<num>\d{1,2}(?P<sep>[/.-])\d{1,2}(?P=sep)(?:\d{4}|\d{2}))(?![\w/.-]\d)"
    r"|(?P<iso>\d{4}-\d{2}-\d{2})(?!\w)"
    rf"|(?P<mdy>(?i:{_MONTH})\.? \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}})(?!\w)"
    rf"|(?P<dmy>\d{{1,2}}(?:st|nd|rd|th)? (?i:{_MONTH})\.?,? \d{{4}})(?!\w)"
)
_DOB_CUES = ("born", "dob", "date of birth", "birthday", "birth date", "birthdate")
_DOB_GAP = re.compile(r"[^\d\n\x00]{0,24}?(?=\d|(?i:" + _MONTH + r"))")

# The patterns start with the character they consume first, then look behind it: Python's `re`
# skips ahead to a pattern's first character set only when the pattern starts with one.
# IBANs and UK National Insurance numbers (prefixes never issued refused by `_nino_ok`).
LETTERS = re.compile(
    r"[A-Z](?<![\w][A-Z])(?:"
    r"(?P<iban>[A-Z]\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?)"
    r"|(?P<nino>(?<=[A-CEGHJ-PR-TW-Z])[A-CEGHJ-NPR-TW-Z](?: ?\d{2}){3} ?[A-D])"
    r")(?!\w)"
)
# US SSNs written with hyphens, IPv4 addresses
DIGITS = re.compile(
    r"\d(?<![\w.-]\d)(?:"
    r"(?P<ssn>\d{2}-\d{2}-\d{4}(?![\w-]))"
    r"|(?P<ip>\d{0,2}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?!\w|\.\d))"
    r")"
)
# 9 digits, an SSN or a SIN when a word before says which
NINE = re.compile(r"\d(?<![\w-]\d)\d{2}([ -]?)\d{2,3}\1\d{3,4}(?![\w-])")
_SSN_CUES = ("ssn", "social security")
_SIN_CUES = ("sin ", "sin:", "sin#", "sin is", "social insurance")
_NINO_NEVER = ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ")
PASSPORT_AFTER = re.compile(
    r"[^\w\n\x00]{0,3}(?:(?:no|number|num|#)\.?\s*)?(?:is\s+)?[:#]?\s*([A-Z0-9]{6,9})\b", re.I
)
_LAST4_AFTER = re.compile(r"(?:\s+(?:in|with|of|are|is|:))?\s*[:#*xX.\s-]*(\d{4})(?!\d)")
_LAST4_CUES = ("ending", "ends in", "last four", "last 4", "last digits")

TLDS = "com|org|net|edu|gov|io|co|de|uk|fr|es|it|nl|ca|au|us|info|me|ie|ch|at|be|se|no|dk|pl"
_DOT = r"(?:\s?\.\s?|\s+dot\s+|\s?[\(\[]dot[\)\]]\s?)"
_AT = r"(?:\s?[\(\[]at[\)\]]\s?|\s+at\s+)"
_WORDS = r"[\w%+-]+"
OBFUSCATED_DOMAIN = re.compile(rf"{_AT}(?:[A-Za-z0-9-]+{_DOT})+(?i:{TLDS})(?![\w])", re.IGNORECASE)
OBFUSCATED_LOCAL = re.compile(rf"(?<![\w.])(?:{_WORDS}{_DOT})*{_WORDS}\Z")


def _cued(low: str, cues: tuple[str, ...], after: re.Pattern[str], text: str, group: int = 1):
    """Where a value `after` finds right after one of `cues` (in `low`, `text` lowered) starts,
    and the value."""
    for cue in cues:
        at = low.find(cue)
        while at != -1:
            if not (at > 0 and low[at - 1].isalnum()):
                m = after.match(text, at + len(cue))
                if m is not None:
                    yield m.start(group), m.group(group)
            at = low.find(cue, at + 1)


def _dates_of_birth(text: str, low: str) -> list[tuple[int, str, str]]:
    found = []
    for cue in _DOB_CUES:
        at = low.find(cue)
        while at != -1:
            gap = _DOB_GAP.match(text, at + len(cue))
            if gap is not None:
                m = DATE.match(text, gap.end())
                if m is not None:
                    found.append((m.start(), "dob", m.group(0)))
            at = low.find(cue, at + 1)
    return found


def _nearest(low: str, at: int, cues: tuple[str, ...], before: int = 40) -> int:
    """Where the last of `cues` in the `before` characters before `at` is, or -1."""
    start = max(0, at - before)
    return max(low.rfind(cue, start, at) for cue in cues)


def _obfuscated_emails(text: str, low: str) -> list[tuple[int, str, str]]:
    found = []
    for anchor in ("(at)", "[at]", " at "):
        at = low.find(anchor)
        while at != -1:
            m = OBFUSCATED_DOMAIN.match(text, at)
            if m is not None:
                local = OBFUSCATED_LOCAL.search(text, max(0, at - 80), at)
                if local is not None:
                    found.append((local.start(), "email", text[local.start() : m.end()]))
            at = low.find(anchor, at + 1)
    return found


def scan_ids(text: str, low: str, digits: bool) -> list[tuple[int, str, str]]:
    """(where, kind, value) of the identifiers, dates of birth and obfuscated emails in
    `text` (`low`: it lowered; `digits`: whether it holds a digit), before `valid`."""
    found: list[tuple[int, str, str]] = []
    if "(at)" in low or "[at]" in low or " at " in low:
        found += _obfuscated_emails(text, low)
    if not digits:
        return found
    for m in LETTERS.finditer(text):
        kind = m.lastgroup
        if kind == "iban" or m.group(0)[:2] not in _NINO_NEVER:
            found.append((m.start(), kind, m.group(0)))
    found += [(m.start(), m.lastgroup, m.group(0)) for m in DIGITS.finditer(text)]
    if ":" in text:
        found += _ipv6(text)
    if any(cue in low for cue in _SSN_CUES + _SIN_CUES):
        for m in NINE.finditer(text):
            ssn_at = _nearest(low, m.start(), _SSN_CUES)
            sin_at = _nearest(low, m.start(), _SIN_CUES)
            if max(ssn_at, sin_at) >= 0:
                found.append((m.start(), "ssn" if ssn_at > sin_at else "sin", m.group(0)))
    if "passport" in low:
        for at, value in _cued(low, ("passport",), PASSPORT_AFTER, text):
            if sum(ch.isdigit() for ch in value) >= 2:
                found.append((at, "passport", value))
    found += [(at, "last4", value) for at, value in _cued(low, _LAST4_CUES, _LAST4_AFTER, text)]
    found += _dates_of_birth(text, low)
    return found


_HEX = frozenset("0123456789abcdefABCDEF:")
_TWO_COLONS = re.compile(r":[0-9A-Fa-f]{0,4}:")


def _ipv6(text: str) -> list[tuple[int, str, str]]:
    """Candidate IPv6 addresses: runs of hex digits and colons around two colons (found from
    the colons: a pattern that could start anywhere would try every position)."""
    found: list[tuple[int, str, str]] = []
    end = 0
    for m in _TWO_COLONS.finditer(text):
        if m.start() < end:
            continue
        start, end = m.start(), m.end()
        while start > 0 and text[start - 1] in _HEX:
            start -= 1
        while end < len(text) and text[end] in _HEX:
            end += 1
        if (start and (text[start - 1].isalnum() or text[start - 1] == "_")) or (
            end < len(text) and (text[end].isalnum() or text[end] == "_")
        ):
            continue
        value = text[start:end]
        if any(ch.isdigit() for ch in value):
            found.append((start, "ip", value))
    return found


def iban_ok(value: str) -> bool:
    return _iban.is_valid(value)


def ssn_ok(value: str) -> bool:
    return _ssn.is_valid(value)


def sin_ok(value: str) -> bool:
    return _sin.is_valid(value)


def ip_ok(value: str) -> bool:
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return False
    if address.version == 6:  # a time (12:30:45) or a ratio is no IPv6 address
        return value.count(":") >= 2 and sum(ch.isalnum() for ch in value) >= 4
    return not value.startswith("0.")


def dob_ok(value: str) -> bool:
    return parse_date(value) is not None


def parse_date(value: str) -> tuple[date, str] | None:
    """The date `value` writes and its form (`num-dmy`, `num-mdy`, `iso`, `mdy`, `dmy`), or
    None when it is no valid date."""
    m = DATE.fullmatch(value)
    if m is None:
        return None
    try:
        if m.group("iso"):
            return date.fromisoformat(value), "iso"
        if m.group("num"):
            a, b, year = re.split(r"[/.-]", value)
            y = int(year) + (1900 if len(year) == 2 else 0)
            if int(a) > 12:
                return date(y, int(b), int(a)), "num-dmy"
            return date(y, int(a), int(b)), "num-mdy"
        word = next(w for w in re.findall(r"[A-Za-z]{3,}", value))
        month = next(i for i, name in enumerate(MONTHS, 1) if name.startswith(word.lower()))
        numbers = [int(w) for w in re.findall(r"\d+", value)]
        return date(numbers[-1], month, numbers[0]), "mdy" if m.group("mdy") else "dmy"
    except (ValueError, StopIteration):
        return None


VALID = {"iban": iban_ok, "ssn": ssn_ok, "sin": sin_ok, "ip": ip_ok, "dob": dob_ok}
