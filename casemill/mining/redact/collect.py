"""The first pass of redaction: the personal data one conversation holds, collected.

Known fields of structured records (tool results and arguments that are JSON: profiles,
addresses with their postal codes and cities, passengers, payment methods, ids), the signed-in
customer named in a support system turn, and what the text detectors (`detect`) find in every
text. `redactor` then replaces every value collected.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from typing import Any

import orjson

from casemill.mining.redact.detect import scan, scan_many
from casemill.mining.redact.fields import (
    FIELD_KINDS,
    PERSON_KEYS,
    PERSON_MARKERS,
    PLAIN_ADDRESS_KEYS,
    is_payment_method,
    kind_by_meaning,
    looks_like_name,
)
from casemill.mining.redact.surrogates import ZIP

AUTH = re.compile(r"Authenticated customer:\s*(\S+)\s*\(([^,()\x00]+),\s*([^()\s\x00]+)\)")
SEP = "\x00"  # joins texts scanned or replaced in one pass; no detector matches across it
TAU_ID = re.compile(r"^([a-z]+)_([a-z]+)_(\d{4})$")
NAME_PARTS = {"first_name": "first", "last_name": "last"}
NAME_TOKEN = re.compile(r"[^\W\d_][^\W\d_'-]*(?:['-][^\W\d_]+)*")
WORDS = re.compile(r"\w+")  # the words of a text (what `\b` goes by)
CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# kinds whose value a record may hold as a JSON number (a phone, a card, an id, a zip code)
NUMERIC_KINDS = frozenset(
    {"phone", "card", "user_id", "payment", "postcode", "account", "ssn", "sin", "last4"}
)
# kinds of keys found by meaning whose string must hold digits to be one (`account`: a bank
# account's number, not `"account": "premium"`)
NEEDS_DIGITS = frozenset({"account", "ip", "passport", "ssn", "sin", "last4", "iban", "dob"})


class Collector:
    """What one conversation holds: raw values by kind, and name tokens as first or last names;
    fed record by record (`walk`) and text by text (`text`, `texts`)."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}  # raw value -> kind
        self.first: set[str] = set()  # name tokens used as a first name
        self.last: set[str] = set()
        self.strings: list[str] = []  # strings of structured records, scanned in one pass
        self.capitals: set[str] = set()  # name tokens written in capitals as a name

    def add(self, kind: str, value: str) -> None:
        value = value.strip()
        if len(value) < 2 or not value[0].isalnum() and not any(ch.isalnum() for ch in value):
            return  # punctuation alone ("{}", "--") is no personal data; replaced, it breaks JSON
        if kind == "name":
            self.add_name(value)
        elif value.isdigit() and len(value) < 5 and kind in ("user_id", "payment", "account"):
            return  # an id of a few digits (customer 42): replaced everywhere it would turn
            # every 42 of the conversation, amounts and quantities, into another number
        elif kind in NEEDS_DIGITS and not any(ch.isdigit() for ch in value):
            return
        else:
            self.values.setdefault(value, kind)
            if kind == "postcode" and len(value) > 5 and ZIP.fullmatch(value):
                # a ZIP+4's zip, which the customer types alone (see `_surrogate`)
                self.values.setdefault(value[:5], kind)
            m = TAU_ID.match(value) if kind == "user_id" else None
            if m:
                self.first.add(m.group(1).lower())
                self.last.add(m.group(2).lower())

    def add_name(self, full: str, part: str | None = None) -> None:
        tokens = [t for t in NAME_TOKEN.findall(full) if len(t) >= 2]
        if full.isupper():
            self.capitals.update(t.lower() for t in tokens)
        for i, token in enumerate(tokens):
            is_first = part == "first" or (part is None and i == 0 and len(tokens) > 1)
            into = self.first if is_first else self.last
            into.add(token.lower())
            if "-" in token:  # Garcia-Lopez: each part is the name too, typed alone (Ms. Lopez)
                into.update(p.lower() for p in token.split("-") if len(p) >= 3)
            folded = fold(token)
            if folded != token.lower() and len(folded) >= 2:  # siobhán, o'sullivan typed as
                into.add(folded)  # siobhan, osullivan (in an email or a conversation id)
        for a, b in zip(tokens, tokens[1:], strict=False):  # Ní Bhriain squashed: nibhriain
            self.last.add(fold(a) + fold(b))

    def text(self, text: str) -> None:
        if not text:
            return
        for kind, value in scan(text):
            self.add(kind, value)
        self.signed_in(text)

    def texts(self, texts: list[str]) -> None:
        """`text` over many texts, as if they were one text joined by the separator (short ones
        remembered by shape)."""
        joined = SEP.join(texts)
        for kind, value in scan_many(texts, SEP, joined):
            self.add(kind, value)
        self.signed_in(joined)

    def signed_in(self, text: str) -> None:
        if "Authenticated customer" in text:
            for m in AUTH.finditer(text):
                self.add("user_id", m.group(1))
                self.add_name(m.group(2))
                self.add("email", m.group(3))

    def walk(self, value: Any) -> None:
        """Known fields of a structured record; its other strings (values, and keys that are
        not identifiers) are kept in `strings` for one pass of the text detectors."""
        self._items([value])

    def _record(self, value: dict, person: bool = False) -> None:
        """A record's known fields; `person`: the record is a person's whatever it holds (it
        sits under a key such as `customer`)."""
        strings = self.strings
        for key, item in value.items():
            if type(key) is str and not key.isidentifier():
                strings.append(key)  # a key that may be data: `{"ana@example.com": ...}`
            if item is None:
                continue
            if isinstance(item, str):
                field_ = _FIELDS.get(key) or _field(key)
                action = field_[0]
                if not action:
                    pass
                elif action == "name":
                    self.add_name(item, field_[1])
                elif action == "person":  # a name when the record is a person's
                    if person or not PERSON_MARKERS.isdisjoint(value):
                        self.add_name(item)
                elif action == "person_record":  # a person's record, but not as one
                    pass
                elif action == "party":  # a third party's name (`recipient`), or their record
                    if looks_like_name(item):
                        self.add_name(item)
                elif action == "plain_address":
                    if not item.startswith("{"):
                        self.add("address", item)
                elif action == "id":  # a payment method's id when the record is one
                    if is_payment_method(value):
                        self.add("payment", item)
                else:
                    self.add(action, item)
                strings.append(item)
                if item[:1] in ("{", "["):  # a record serialised into a string of another
                    inner = parse_json(item)
                    if inner is None:
                        inner = parse_literal(item)
                    if inner is not None:
                        self._items([inner])
            elif isinstance(item, dict):
                if key == "payment_methods":  # payment methods keyed by their ids (tau-bench)
                    for method_id in item:
                        self.add("payment", method_id)
                action = (_FIELDS.get(key) or _field(key))[0]
                self._record(item, action in ("person_record", "party"))
            elif isinstance(item, list):
                self._items(item)
            elif type(item) is int:
                action = (_FIELDS.get(key) or _field(key))[0]
                if action in NUMERIC_KINDS:  # a phone, card, id or zip written as a JSON number
                    self.add(action, str(item))

    def _items(self, value: list) -> None:
        for item in value:
            if isinstance(item, dict):
                self._record(item)
            elif isinstance(item, list):
                self._items(item)
            elif isinstance(item, str):
                self.strings.append(item)


# what `_Collector.walk` does with a string under a key: (action, name part), remembered per key
_FIELDS: dict[Any, tuple[str, str | None]] = {}


def _field(key: Any) -> tuple[str, str | None]:
    lowered = normal_key(key) if isinstance(key, str) else ""
    kind = FIELD_KINDS.get(lowered)
    if kind == "name":
        found = ("name", NAME_PARTS.get(lowered))
    elif kind:
        found = (kind, None)
    elif lowered == "name":  # a person's name when the record is a person's
        found = ("person", None)
    elif lowered in PLAIN_ADDRESS_KEYS:  # a plain address, not one serialised as JSON
        found = ("plain_address", None)
    elif lowered in PERSON_KEYS:  # a dict under it is a person's record
        found = (kind_by_meaning(lowered) or "person_record", None)
    elif lowered == "id":  # a payment method's id when the record is one
        found = ("id", None)
    elif lowered in ("full", "fullname", "display_name"):  # a person record's name
        found = ("person", None)
    else:
        found = (kind_by_meaning(lowered) or "", None)
    if len(_FIELDS) >= 4096:  # keys of logs are few; bound them anyway
        _FIELDS.clear()
    _FIELDS[key] = found
    return found


def fold(token: str) -> str:
    """A name token as typed without accents, apostrophes or hyphens, lowered (`O'Sullivan`:
    `osullivan`, `Siobhán`: `siobhan`)."""
    plain = unicodedata.normalize("NFKD", token)
    return "".join(ch for ch in plain if ch.isalnum() and not unicodedata.combining(ch)).lower()


def normal_key(key: str) -> str:
    """A record's key in snake case: `firstName`, `First-Name` and `first name` are
    `first_name`."""
    return CAMEL.sub("_", key).lower().replace("-", "_").replace(" ", "_")


def parse_literal(text: str) -> Any:
    """A tool result written as a Python literal (`{'first_name': 'Ann'}`, what `str(dict)`
    gives), or None; only tried on results that look like one and are not JSON."""
    head = text.lstrip()[:1]
    if head not in ("{", "[") or len(text) > 1_000_000:
        return None
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def parse_json(text: str) -> Any:
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
