"""Detectors of personal data in free text, and the known fields that hold it in records.

Text detectors (one combined pattern, one pass a text): emails, phone numbers (with separators,
a leading `+`, or named as a phone number), payment card numbers (13-19 digits that pass the Luhn
check), street addresses (a house number, a street name and a street-type word), user ids in the
tau-bench shape (`mia_li_3668`) and customer ids in Casemill's (`C1001`), and a name the customer
gives ("my name is ..."). Order, reservation, item and product ids are not personal data and are
left alone so cases stay checkable.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

KINDS = ("email", "phone", "card", "address", "name", "user_id", "dob")

_STREET_TYPES = (
    "street|st|avenue|ave|road|rd|drive|dr|lane|ln|boulevard|blvd|way|court|ct|place|pl|terrace|"
    "parkway|pkwy|circle|cir|highway|hwy|square|sq|trail|trl|alley|crescent|close"
)
_UNIT = r"(?:,?\s+(?i:apt|apartment|suite|ste|unit|floor|fl|#)\.?\s*#?\s*[A-Za-z0-9-]+)?"
_WORD = r"[A-Za-z][A-Za-z'-]*\.?"

PATTERN = re.compile(
    r"(?P<email>[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})"
    r"|(?P<card>(?<![\w.-])\d(?:[ -]?\d){12,18}(?![\w-]))"
    r"|(?P<phone>(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}(?!\w)"
    r"|(?<![\w+])\+\d{1,3}(?:[ .-]\d{1,5}){2,5}(?![\w-]))"
    r"|(?P<phone_ctx>(?i:phone|mobile|cell|call me|text me|number)[^\d\n]{0,15}"
    r"(?P<phone_num>\d{10,11})(?!\d))"
    rf"|(?P<address>(?<![\w-])\d{{1,6}}[A-Za-z]?\s+(?:{_WORD}\s+){{0,3}}{_WORD}\s+"
    rf"(?i:{_STREET_TYPES})\b\.?{_UNIT})"
    r"|(?P<user_id>\b[a-z]+_[a-z]+_\d{4}\b|\bC\d{4,6}\b)"
    r"|(?P<name_ctx>(?i:my name is|this is|i am|i'm)\s+(?P<given>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?))"
)

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


def scan(text: str) -> Iterator[tuple[str, str]]:
    """(kind, value) for every piece of personal data the detectors find in `text`."""
    if len(text) > 2048:
        yield from _scan_cached(text)
    else:
        yield from _scan(text)


@lru_cache(maxsize=256)
def _scan_cached(text: str) -> tuple[tuple[str, str], ...]:
    return tuple(_scan(text))


def _scan(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for m in PATTERN.finditer(text):
        kind = m.lastgroup
        if kind == "card":
            value = m.group("card")
            digits = value.replace(" ", "").replace("-", "")
            if 13 <= len(digits) <= 19 and luhn_ok(digits):
                found.append(("card", value))
        elif kind == "phone_ctx":
            found.append(("phone", m.group("phone_num")))
        elif kind == "name_ctx":
            given = m.group("given")
            if given.split()[0] not in _NOT_NAMES:
                found.append(("name", given))
        elif kind == "address":
            if _address_ok(m.group("address")):
                found.append(("address", m.group("address")))
        elif kind is not None:
            found.append((kind, m.group(kind)))
    return found


# Keys of structured records (tool results, arguments) whose string values are personal data.
FIELD_KINDS: dict[str, str] = {
    "email": "email",
    "email_address": "email",
    "phone": "phone",
    "phone_number": "phone",
    "mobile": "phone",
    "telephone": "phone",
    "first_name": "name",
    "last_name": "name",
    "full_name": "name",
    "customer_name": "name",
    "passenger_name": "name",
    "contact_name": "name",
    "street1": "address",
    "street2": "address",
    "address1": "address",
    "address2": "address",
    "street": "address",
    "street_address": "address",
    "line1": "address",
    "line2": "address",
    "user_id": "user_id",
    "customer_id": "user_id",
    "account_id": "user_id",
    "member_id": "user_id",
    "card_number": "card",
    "dob": "dob",
    "date_of_birth": "dob",
    "birthdate": "dob",
    "birth_date": "dob",
}

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
