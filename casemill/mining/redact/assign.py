"""The surrogate of every value collected from one conversation (`collect`): the table that
`replace` then applies.

Names come first (an email or a tau-bench user id of a name is made of that name's surrogate);
a phone or card number written twice with other separators gets one surrogate; a city or street
line never shows a word of a raw name or city. Every surrogate is drawn from the pools
(`surrogates`) by the raw value and avoiding every raw value of the conversation.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from casemill.mining.redact import shapes
from casemill.mining.redact.collect import NAME_TOKEN, TAU_ID, WORDS, Collector
from casemill.mining.redact.surrogates import ZIP, Surrogates

C_ID = re.compile(r"^C(\d{4,6})$")
TRAILING_DIGITS = re.compile(r"([A-Za-z_-]*?)(\d+)")  # a label, then digits: `gift_card_8190333`
# names that are also everyday words (Will, May, Price, Rose): replaced where written with a
# capital only, so "I will need it" and a tool result's "price" stay as they are
WORD_NAMES = frozenset({
    "amber", "april", "art", "august", "bill", "bishop", "black", "brown", "bud", "buck",
    "cash", "chase", "cliff", "crystal", "dale", "dawn", "dean", "drew", "earl", "faith",
    "fox", "frank", "gay", "gene", "glen", "grace", "grant", "gray", "green", "guy", "hall",
    "hope", "hunter", "iris", "ivy", "jack", "jade", "jay", "jewel", "joy", "june", "king",
    "lance", "lane", "lily", "long", "mark", "marsh", "mason", "may", "miles", "mill",
    "miller", "nick", "noble", "page", "park", "pat", "penny", "pierce", "pike", "price",
    "ray", "reed", "rich", "rob", "rose", "ruby", "rush", "sage", "savage", "short", "sky",
    "stone", "summer", "sunny", "trace", "victor", "wade", "ward", "white", "will", "winter",
    "wolf", "wood", "young"
})  # fmt: skip


_SHAPED = {
    "iban": shapes.iban, "ssn": shapes.ssn, "sin": shapes.sin, "nino": shapes.nino, "ip": shapes.ip,
}  # fmt: skip


def _digits(value: str) -> str:
    return "".join(ch for ch in value if ch.isdigit())


def _area_code(phone: str) -> bool:
    """Whether a surrogate phone number, `(###) 555-01##`, has an area code a real one could
    have (not starting with 0 or 1): its digits then also make a JSON number."""
    return phone[1] not in "01"


class Assigner:
    """The surrogates of one conversation's values (`map`: lowered raw -> (kind, surrogate)),
    and what `replace` needs to tell a name from a word or a code; `build` fills them."""

    def __init__(self, sur: Surrogates):
        self.sur = sur
        self.map: dict[str, tuple[str, str]] = {}  # lowered raw -> (kind, surrogate)
        self.originals: dict[str, str] = {}  # lowered raw -> the value as first seen
        self.values: frozenset[str] = frozenset()  # the collected values, lowered
        # name tokens whose capitals the records use as codes: kept where written in capitals
        self.codes: frozenset[str] = frozenset()
        self.word_names: frozenset[str] = frozenset()  # of WORD_NAMES: kept if not capitalised
        self._c_avoid: frozenset[str] | None = None
        self._digits_avoid: frozenset[str] | None = None
        self.cities: list[str] = []  # the raw cities, lowered
        self.addresses: list[str] = []  # the raw street lines and units, lowered
        self._raw_words: frozenset[str] | None = None  # words of raw names and cities

    def build(self, c: Collector, is_code: Callable[[str], bool]) -> None:
        """A surrogate for every value `c` collected; `is_code` says whether the records hold
        a short name token or city in capitals as a string of its own (a code: MIA)."""
        sur, mapping, originals = self.sur, self.map, self.originals
        p, pick = sur.pools, sur.pick
        first, last = c.first, c.last
        lowered = {value: value.lower() for value in c.values}
        self.values = frozenset(lowered.values())
        raws = self.values | first | last
        names: dict[str, str] = {}
        short = [t for t in first | last if len(t) < 5 and t not in c.capitals]
        cities = [value for value, kind in c.values.items() if kind == "city"]
        self.addresses = [lowered[value] for value, kind in c.values.items() if kind == "address"]
        if cities:
            self.cities = [lowered[value] for value in cities]
            short += [lowered[v] for v in cities if len(v) < 5 and not v.isupper()]
        if short:
            self.codes = frozenset(t for t in short if is_code(t.upper()))
        self.word_names = WORD_NAMES.intersection(first | last)
        for token in sorted(first | last):
            surrogate = pick("name", token, p.first if token in first else p.last, raws)
            names[token] = surrogate
            mapping[token] = ("name", surrogate)
            originals[token] = token
        by_digits: dict[str, str] = {}
        for kind, value in sorted([(kind, value) for value, kind in c.values.items()]):
            key = lowered[value]
            if key in mapping:
                continue
            if kind == "phone" or kind == "card":
                digits = _digits(value)
                surrogate = by_digits.get(digits)
                if surrogate is None:
                    surrogate = by_digits[digits] = self._surrogate(kind, value, names, raws)
                if value.isdigit():  # written without separators, maybe as a JSON number
                    surrogate = _digits(surrogate)
            else:
                surrogate = self._surrogate(kind, value, names, raws)
            mapping[key] = (kind, surrogate)
            originals[key] = value

    def _surrogate(self, kind: str, value: str, names: dict[str, str], raws: frozenset[str]) -> str:
        p, s = self.sur.pools, self.sur
        shaped = self._shaped(kind, value, raws)
        if shaped is not None:
            return shaped
        if kind == "email":
            if "@" not in value:  # obfuscated: `name(at)web.de`, written so again
                plain = shapes.deobfuscate(value)
                return shapes.obfuscated(value, self._surrogate(kind, plain, names, raws))
            local = [t.lower() for t in NAME_TOKEN.findall(value.split("@")[0])]
            first = names.get(local[0]) if local else None
            last = names.get(local[1]) if len(local) > 1 else None
            first = (first or s.pick("email-first", value, p.first, raws)).lower()
            last = (last or s.pick("email-last", value, p.last, raws)).lower()
            number = s.number("email", value, 2, raws)
            return f"{first}.{last}{number}@{p.domain[int(number) % len(p.domain)]}"
        if kind == "phone":
            return s.pick("phone", _digits(value), p.phone, raws, _area_code)
        if kind == "card":
            card = s.pick("card", _digits(value), p.card, raws)
            sep = " " if " " in value else "-" if "-" in value else ""
            return sep.join(card[i : i + 4] for i in range(0, len(card), 4)) if sep else card
        if kind == "address":
            pool = p.street if value[:1].isdigit() else p.unit
            return s.pick("address", value, pool, raws, self._street_fits(names, p.street_words))
        if kind == "dob":
            return shapes.date_of_birth(s, value, p.dob, raws)
        if kind == "postcode":
            zip4 = ZIP.fullmatch(value) if len(value) > 5 else None
            if zip4 is not None:  # the surrogate of its zip (built before: sorted first) and 4
                plus4 = s.number("postcode4", value, 4, raws)
                return f"{self.map[value[:5]][1]}{zip4.group(1)}{plus4}"
            return s.postcode(value, raws)
        if kind == "city":
            return s.pick("city", value, p.city, raws, self._fits(names, p.city_words))
        if kind == "payment":
            return self._payment_id(value)
        return self._user_id(value, names, raws)

    def _shaped(self, kind: str, value: str, raws: frozenset[str]) -> str | None:
        """The surrogate of a value of a kind `shapes` draws (or a card's last four digits),
        or None for the other kinds."""
        s = self.sur
        if kind in _SHAPED:
            return _SHAPED[kind](s, value, raws)
        if kind in ("passport", "account"):
            return s.shaped(kind, value, raws)
        if kind != "last4":
            return None
        for key, (other, surrogate) in self.map.items():  # built before: sorted first
            if other == "card" and _digits(key)[-4:] == value:
                return _digits(surrogate)[-4:]  # the text agrees with the surrogate card
        return s.number("last4", value, 4, raws)

    def _payment_id(self, value: str) -> str:
        """A payment method's id of the same shape: a label and digits (`credit_card_7815826`,
        `PM1`) keeps its label, the digits drawn again; any other (an opaque token such as
        `pm_1NaXyZ2`) has each letter and digit drawn again."""
        m = TRAILING_DIGITS.fullmatch(value)
        if m is None or value.isdigit():  # (digits alone: maybe a JSON number, kept one)
            return self.sur.shaped("payment", value, self.values)
        if self._digits_avoid is None:  # the trailing digits of every raw value
            found = (TRAILING_DIGITS.fullmatch(r) for r in self.values)
            self._digits_avoid = frozenset(d.group(2) for d in found if d is not None)
        digits = m.group(2)
        return m.group(1) + self.sur.number("payment", value, len(digits), self._digits_avoid)

    def _fits(
        self, names: dict[str, str], words: dict[str, frozenset[str]]
    ) -> Callable[[str], bool]:
        """Whether a surrogate (a city or a street line, whose `words` are given) holds no word
        of a raw name or city of the conversation (North Ana would show the raw name Ana, Lake
        Austin the raw city Austin, Ramirez Spur the raw name Ramirez)."""
        if self._raw_words is None:
            raw = set(names)
            for city in self.cities:
                raw.update(WORDS.findall(city))
            self._raw_words = frozenset(raw)
        raw_words = self._raw_words
        return lambda surrogate: raw_words.isdisjoint(words[surrogate])

    def _street_fits(
        self, names: dict[str, str], words: dict[str, frozenset[str]]
    ) -> Callable[[str], bool]:
        """`_fits`, and the street line holds no raw street line or unit of the conversation
        (the surrogate 3028 Thompson Vista Suite 494 would show the raw unit Suite 494)."""
        fits, held = self._fits(names, words), self.addresses
        return lambda surrogate: fits(surrogate) and not any(a in surrogate.lower() for a in held)

    def _user_id(self, value: str, names: dict[str, str], raws: frozenset[str]) -> str:
        s = self.sur
        m = TAU_ID.match(value)
        if m:
            first = names.get(m.group(1)) or s.pick("uid-first", value, s.pools.first, raws)
            last = names.get(m.group(2)) or s.pick("uid-last", value, s.pools.last, raws)
            return f"{first.lower()}_{last.lower()}_{s.number('uid', value, 4, raws)}"
        m = C_ID.match(value)
        if m:
            if self._c_avoid is None:  # the digits of every customer id in the conversation
                # (names, the other raws, hold no digits)
                self._c_avoid = frozenset(r[1:] for r in self.values if C_ID.match(r.upper()))
            return "C" + s.number("cid", value, len(m.group(1)), self._c_avoid)
        if value.isdigit():  # an account number, maybe written as a JSON number: kept digits
            return s.shaped("user_id", value, raws)
        return "user_" + s.number("uid", value, 6, raws)
