"""Redaction of one conversation before anything derived from it is written.

Two passes over the conversation:
1. collect (`collect`): personal data in known fields of structured records (tool results and arguments
   that are JSON: profiles, addresses with their postal codes and cities, passengers, ids), the
   signed-in customer named in a support system turn, and what the text detectors find in every
   text;
2. replace: every occurrence of every collected value, in every text, argument, result and the
   conversation id, by its surrogate, as a whole token and ignoring case. So a postal code or a
   city a record holds is replaced where the customer types it too, and no other number or
   word. A city or postal code of many words is also found with other whitespace between its
   words (San Antonio typed across lines, M5V3L9), and a ZIP+4's zip alone (by its surrogate's
   zip). Names found in fields are also searched for token by token. Names and cities keep the
   case they are written in (AUSTIN, austin). A short name token or city that the records also
   hold in capitals, but never as a name or city (Mia's airport, MIA: a value, or a key of a
   tool result), is left alone where it is written in capitals: the code stays coherent, and
   does not show which value its surrogate replaced.

The same value gets the same surrogate everywhere in the conversation, so cases derived from the
redacted conversation stay coherent (the ids in expected calls exist in the environment).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from casemill.mining.model import Conversation, LoggedCall, Message
from casemill.mining.redact.collect import (
    NAME_TOKEN,
    SEP,
    TAU_ID,
    Collector,
    parse_json,
    parse_literal,
)
from casemill.mining.redact.detect import LONG
from casemill.mining.redact.surrogates import ZIP, Surrogates

C_ID = re.compile(r"^C(\d{4,6})$")
TRAILING_DIGITS = re.compile(r"([A-Za-z_-]*?)(\d+)")  # a label, then digits: `gift_card_8190333`
WORDS = re.compile(r"\w+")
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
CASED = ("name", "city")  # kinds whose surrogates are written in the case of the raw value
LOOSE = ("city", "postcode")  # kinds found with other whitespace between their words


@dataclass(frozen=True)
class RawValue:
    """One redacted value: only ever written to the file `--keep-raw` names."""

    conversation_id: str
    kind: str
    raw: str
    surrogate: str


@dataclass
class Redaction:
    conversation: Conversation
    counts: Counter = field(default_factory=Counter)
    raw: list[RawValue] = field(default_factory=list)


@lru_cache(maxsize=4096)
def _alternation(
    needles: tuple[str, ...], loose: tuple[tuple[str, str], ...] = ()
) -> re.Pattern[str]:
    """The needles in one pattern, those of `loose` (needle, pattern) by their pattern."""
    patterns = dict(loose)
    parts = [patterns.get(n) or _bounded(n, re.escape(n)) for n in needles]
    return re.compile("|".join(parts), re.IGNORECASE)


def _bounded(needle: str, body: str) -> str:
    """`body` (the pattern of `needle`) clear of word characters on a side where the needle
    has one."""
    left = r"(?<!\w)" if needle[0].isalnum() or needle[0] == "_" else ""
    right = r"(?!\w)" if needle[-1].isalnum() or needle[-1] == "_" else ""
    return f"{left}{body}{right}"


def _loose(needle: str, kind: str) -> str:
    """A pattern of a city or postal code of many words with any whitespace between its
    words (a city typed across lines, San  Antonio), or in a postal code any whitespace or
    hyphens or none (M5V3L9, a ZIP+4 written 78205 1234)."""
    sep = r"\s+" if kind == "city" else r"[\s-]*"
    return _bounded(needle, sep.join(re.escape(word) for word in _parts(needle, kind)))


def _parts(needle: str, kind: str) -> list[str]:
    """The words of a city, the parts of a postal code (between whitespace or hyphens)."""
    return needle.split() if kind == "city" else [p for p in re.split(r"[\s-]+", needle) if p]


@lru_cache(maxsize=256)
def _long(text: str) -> list:
    """A long text lower-cased, and (from its second conversation on: instructions repeated in
    every conversation) its words; filled in by `_lowered`."""
    return [text.lower(), None, False]


def _lowered(text: str) -> tuple[str, frozenset[str] | None]:
    """A needle found with its word boundaries is made of whole words of the text, so a needle
    with a word the text lacks cannot occur in it."""
    entry = _long(text)
    low, words, seen = entry
    if words is None:
        if seen:
            entry[1] = words = frozenset(WORDS.findall(low))
        else:
            entry[2] = True
    return low, words


def _shape(raw: str, surrogate: str) -> str:
    if raw.isupper() and len(raw) > 1:
        return surrogate.upper()
    if raw.islower() and not surrogate.islower():
        return surrogate.lower()
    return surrogate


def _digits(value: str) -> str:
    return "".join(ch for ch in value if ch.isdigit())


def _area_code(phone: str) -> bool:
    """Whether a surrogate phone number, `(###) 555-01##`, has an area code a real one could
    have (not starting with 0 or 1): its digits then also make a JSON number."""
    return phone[1] not in "01"


class ConversationRedactor:
    """Redacts one conversation; build a new one per conversation."""

    def __init__(
        self, conversation: Conversation, seed: int, keep_raw: bool = False, context: Any = None
    ):
        """`context`: a record whose personal data is collected too (`scrub_text`)."""
        self.source = conversation
        self.context = context
        self.keep_raw = keep_raw
        # drawn by what the conversation holds, not by its id: the same conversation logged under
        # two ids gets the same surrogates, so its cases are duplicates that dedup drops
        self.sur = Surrogates(seed, conversation.content_key())
        self.counts: Counter = Counter()
        self.map: dict[str, tuple[str, str]] = {}  # lowered raw -> (kind, surrogate)
        self.originals: dict[str, str] = {}  # lowered raw -> the value as first seen
        self.needles: list[str] = []  # lowered raw values, longest first
        # each needle, its length, and whether it starts / ends with a word character
        self.bounds: list[tuple[str, int, bool, bool]] = []
        self.words: list[Any] | None = None  # the words of each needle, once asked
        self.values: frozenset[str] = frozenset()  # the collected values, lowered
        # name tokens whose capitals the records use as codes: kept where written in capitals
        self.codes: frozenset[str] = frozenset()
        self.word_names: frozenset[str] = frozenset()  # of WORD_NAMES: kept if not capitalised
        self._c_avoid: frozenset[str] | None = None
        self._digits_avoid: frozenset[str] | None = None
        self.cities: list[str] = []  # the raw cities, lowered
        self.addresses: list[str] = []  # the raw street lines and units, lowered
        self._raw_words: frozenset[str] | None = None  # words of raw names and cities
        self.parsed: dict[int, Any] = {}
        # cities and postal codes of many words: needle -> (its pattern with other whitespace
        # between its words, its first word), see `_loose`
        self.loose: dict[str, tuple[re.Pattern[str], str]] = {}

    # -- collect ----------------------------------------------------------------------------
    def collect(self) -> Collector:
        """Known fields walked record by record; the text detectors run once over all the short
        texts of the conversation joined (long texts, such as repeated instructions, one by one
        through a cache)."""
        c = Collector()
        batch = [self.source.id]
        for index, m in enumerate(self.source.messages):
            content = m.content
            if m.role == "tool":
                value = parse_json(content)
                if value is not None:
                    self.parsed[index] = value
                    c.walk(value)
                    continue
                literal = parse_literal(content)  # replaced as text, like any other
                if literal is not None:
                    c.walk(literal)
            if len(content) > LONG:
                c.text(content)
            else:
                batch.append(content)
            for call in m.calls:
                c.walk(call.arguments)
        if self.context is not None:
            c.walk(self.context)
        batch += c.strings
        c.texts(batch)
        return c

    # -- surrogates -------------------------------------------------------------------------
    def build(self, c: Collector) -> None:
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
            self.codes = frozenset(t for t in short if self._is_code(t.upper(), c.strings))
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
        self.needles = needles = sorted(mapping, key=lambda n: (-len(n), n))
        self.bounds = [
            (n, len(n), (a := n[0]).isalnum() or a == "_", (z := n[-1]).isalnum() or z == "_")
            for n in needles
        ]
        self.loose = {
            n: (re.compile(_loose(n, kind), re.IGNORECASE), _parts(n, kind)[0])
            for n in needles
            if (kind := mapping[n][0]) in LOOSE and len(_parts(n, kind)) > 1
        }

    def _is_code(self, capitals: str, strings: list[str]) -> bool:
        """Whether the records hold `capitals` as a string of their own (a value, or a key of
        a tool result: `{"MIA": "Miami"}`)."""
        if capitals in strings:
            return True
        quoted = f'"{capitals}"'
        messages = self.source.messages
        return any(quoted in messages[index].content for index in self.parsed)

    def _surrogate(self, kind: str, value: str, names: dict[str, str], raws: frozenset[str]) -> str:
        p, s = self.sur.pools, self.sur
        if kind == "email":
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
            return s.pick("dob", value, p.dob, raws)
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

    # -- replace ----------------------------------------------------------------------------
    def text(self, text: str) -> str:
        if not text or not self.map:
            return text
        if len(text) > LONG:
            low, words = _lowered(text)
            bounds = self.bounds
            if words is not None:
                if self.words is None:  # (a needle all letters and digits is one word; a
                    # loose one's words can be written joined: kept)
                    self.words = [
                        () if n in self.loose else (n,) if n.isalnum() else WORDS.findall(n)
                        for n in self.needles
                    ]
                bounds = [b for b, w in zip(bounds, self.words, strict=True) if words.issuperset(w)]
        else:
            low, bounds = text.lower(), self.bounds
        return self._replaced(text, low, bounds)

    def _replaced(self, text: str, low: str, bounds: list[tuple[str, int, bool, bool]]) -> str:
        """`text` with the needles of `bounds` replaced, found in `low`, `text` lower-cased."""
        if len(low) != len(text):  # lower-casing changed offsets: use the regex path
            loose = self.loose
            present = tuple(
                n for n in self.needles if n in low or (n in loose and loose[n][1] in low)
            )
            if not present:
                return text
            patterns = tuple((n, loose[n][0].pattern) for n in present if n in loose)
            return _alternation(present, patterns).sub(self._replace, text)
        spans = self._spans(low, bounds) if bounds else None
        if not spans:
            return text
        spans.sort()
        out, pos = [], 0
        counts, codes, word_names = self.counts, self.codes, self.word_names
        for start, end, needle in spans:
            if codes and needle in codes and text[start:end].isupper():
                continue  # a code, not the name: left as it is
            if word_names and needle in word_names and not text[start].isupper():
                continue  # the word, not the name
            out.append(text[pos:start])
            kind, surrogate = self.map[needle]
            counts[kind] += 1
            out.append(_shape(text[start:end], surrogate) if kind in CASED else surrogate)
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def _spans(
        self, low: str, bounds: list[tuple[str, int, bool, bool]]
    ) -> list[tuple[int, int, str]]:
        """Where the needles occur in `low`, longest first, each clear of word characters on
        a side where the needle has one, none overlapping one found before (a loose needle
        found by its pattern, so written with other whitespace too)."""
        spans: list[tuple[int, int, str]] = []
        size = len(low)
        loose = self.loose
        for needle, length, left, right in bounds:
            if loose and needle in loose:
                pattern, first = loose[needle]
                if first in low:
                    for m in pattern.finditer(low):
                        at, end = m.span()
                        if all(end <= s or e <= at for s, e, _ in spans):
                            spans.append((at, end, needle))
                continue
            at = low.find(needle)
            while at != -1:
                end = at + length
                if not (
                    (left and at and ((c := low[at - 1]).isalnum() or c == "_"))
                    or (right and end < size and ((c := low[end]).isalnum() or c == "_"))
                ):
                    for s, e, _ in spans:  # clear of the spans found before
                        if at < e and s < end:
                            break
                    else:
                        spans.append((at, end, needle))
                at = low.find(needle, at + 1)
        return spans

    def _replace(self, m: re.Match[str]) -> str:
        raw = m.group(0)
        if self.codes and raw.lower() in self.codes and raw.isupper():
            return raw
        if self.word_names and raw.lower() in self.word_names and not raw[0].isupper():
            return raw
        key = raw.lower()
        if key not in self.map:  # a city or postal code written with other whitespace
            key = next(n for n, (p, _) in self.loose.items() if p.fullmatch(raw))
        kind, surrogate = self.map[key]
        self.counts[kind] += 1
        return _shape(raw, surrogate) if kind in CASED else surrogate

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                self.text(k) if isinstance(k, str) else k: self.value(v) for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if type(value) is int and (found := self.map.get(str(value))) is not None:
            kind, surrogate = found
            if surrogate.isdigit():  # a zip code, a phone, a card or an id written as a number
                self.counts[kind] += 1
                return int(surrogate)
        return value

    def json_text(self, text: str, parsed: Any) -> str:
        """A JSON tool result redacted: on its raw text when it holds no escape sequences (the
        surrogates need none either), otherwise value by value and serialised again."""
        if parsed is None or "\\" not in text:
            return self.text(text)
        redacted = self.value(parsed)
        if '": ' in text[:200]:
            import json

            return json.dumps(redacted, ensure_ascii=False)
        return orjson.dumps(redacted).decode()

    def many(self, texts: list[str]) -> list[str]:
        """`text` over many strings in one pass (joined by a separator none of them holds)."""
        out = list(texts)
        short, pieces, alone = [], [], []
        for i, t in enumerate(texts):
            if len(t) > LONG or SEP in t:
                alone.append(i)
            else:
                short.append(i)
                pieces.append(t)
        if short:
            joined = SEP.join(pieces)
            done = self._replaced(joined, joined.lower(), self.bounds)
            if done is not joined:  # something replaced
                parts = done.split(SEP)
                if len(parts) == len(short):
                    for i, t in zip(short, parts, strict=True):
                        out[i] = t
                else:  # pragma: no cover - a surrogate never holds the separator
                    alone = sorted(alone + short)
        for i in alone:
            out[i] = self.text(texts[i])
        return out

    def run(self) -> Redaction:
        self.build(self.collect())
        src = self.source
        texts: list[str] = [src.id]
        plan: list[tuple] = []  # per message: how to rebuild it from `texts`
        for index, m in enumerate(src.messages):
            parsed = self.parsed.get(index) if m.role == "tool" else None
            if parsed is not None and "\\" in m.content:
                plan.append(("json", self.json_text(m.content, parsed)))
                continue
            content_at = len(texts)
            texts.append(m.content)
            calls = []
            for call in m.calls:
                dumped = orjson.dumps(call.arguments).decode()
                if "\\" in dumped:
                    calls.append((call, None, self.value(call.arguments)))
                else:
                    calls.append((call, len(texts), None))
                    texts.append(dumped)
            plan.append(("text", content_at, calls))
        done = self.many(texts) if self.map else texts
        messages = []
        # a result answers the latest call with its id before it (as the parsers link them):
        # logs reuse call ids, so an id alone does not name one call
        latest: dict[str, LoggedCall] = {}
        answered: set[int] = set()
        for m, step in zip(src.messages, plan, strict=True):
            content = step[1] if step[0] == "json" else done[step[1]]
            if m.role == "tool":
                call = latest.get(m.call_id) if m.call_id is not None else None
                if call is not None and call.result is not None:
                    call.result = content
                    answered.add(id(call))
                messages.append(Message("tool", content, call_id=m.call_id))
                continue
            calls = [
                LoggedCall(
                    c.id, c.tool, args if at is None else orjson.loads(done[at]), c.result, c.error
                )
                for c, at, args in step[2]
            ]
            for call in calls:
                latest[call.id] = call
            messages.append(Message(m.role, content, calls, m.call_id))
        for m in messages:
            for call in m.calls:
                if call.result is not None and id(call) not in answered:
                    call.result = self.text(call.result)
        conv = src.with_messages(messages)
        conv.id = done[0]
        raw = []
        if self.keep_raw:
            raw = [
                RawValue(src.id, kind, self.originals[key], sur)
                for key, (kind, sur) in sorted(self.map.items())
            ]
        return Redaction(conv, self.counts, raw)


def redact_conversation(
    conversation: Conversation, seed: int = 0, keep_raw: bool = False
) -> Redaction:
    """The conversation with every piece of personal data replaced by a surrogate, the number
    of replacements per kind, and (only with `keep_raw`) the raw values and their surrogates."""
    return ConversationRedactor(conversation, seed, keep_raw).run()


def scrub_text(text: str, seed: int = 0, context: Any = None) -> str:
    """Free text with what the detectors find replaced (for ids and messages outside any
    conversation, such as a quarantined record's conversation id), and the personal data
    `context` holds (the record the text came from, as read: its known fields and texts)."""
    conv = Conversation(id=text, messages=[], file="", line=0, format="")
    return ConversationRedactor(conv, seed, context=context).run().conversation.id
