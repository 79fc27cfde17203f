"""The second pass of redaction: every occurrence of every collected value replaced by its
surrogate (`assign`), as a whole token and ignoring case, in texts, in JSON values and in many
texts at once.

A city or postal code of many words is also found with other whitespace between its words (San
Antonio typed across lines, M5V3L9). Names and cities keep the case they are written in (AUSTIN,
austin). A short name token or city the records hold as a code (MIA) is left alone where it is
written in capitals, and a name that is also an everyday word (Will) where it is not
capitalised.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Any

import orjson

from casemill.mining.redact.collect import SEP, WORDS
from casemill.mining.redact.detect import LONG

# a card's last four digits are replaced only right after what says they are (`ending 4417`,
# `"last_four": "4417"`): alone, four digits are as often a year, an amount or a flight's
LAST4_BEFORE = re.compile(
    r"(?:last[ _]?(?:four|4)|ending|ends|last digits)(?:[\s\"':#*x.=-]|in|with|of|are|is|digits)*\Z"
)
CASED = ("name", "city")  # kinds whose surrogates are written in the case of the raw value
LOOSE = ("city", "postcode")  # kinds found with other whitespace between their words


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


def _cued(low: str, at: int) -> bool:
    """Whether what `low` says right before `at` names a card's last four digits."""
    return LAST4_BEFORE.search(low, max(0, at - 40), at) is not None


class Replacer:
    """Replaces the values of `mapping` (lowered raw -> (kind, surrogate)) and counts the
    replacements by kind (`counts`). `codes`: name tokens kept where written in capitals;
    `word_names`: names kept where not capitalised (see `assign`)."""

    def __init__(
        self,
        mapping: dict[str, tuple[str, str]],
        codes: frozenset[str] = frozenset(),
        word_names: frozenset[str] = frozenset(),
    ):
        self.map = mapping
        self.codes = codes
        self.word_names = word_names
        self.counts: Counter = Counter()
        self.needles = needles = sorted(mapping, key=lambda n: (-len(n), n))  # longest first
        # each needle, its length, and whether it starts / ends with a word character
        self.bounds: list[tuple[str, int, bool, bool]] = [
            (n, len(n), (a := n[0]).isalnum() or a == "_", (z := n[-1]).isalnum() or z == "_")
            for n in needles
        ]
        self.words: list[Any] | None = None  # the words of each needle, once asked
        self.cued = frozenset(n for n in needles if mapping[n][0] == "last4")
        # cities and postal codes of many words: needle -> (its pattern with other whitespace
        # between its words, its first word), see `_loose`
        self.loose: dict[str, tuple[re.Pattern[str], str]] = {
            n: (re.compile(_loose(n, kind), re.IGNORECASE), _parts(n, kind)[0])
            for n in needles
            if (kind := mapping[n][0]) in LOOSE and len(_parts(n, kind)) > 1
        }

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
            if needle in self.cued and not _cued(low, start):
                continue  # four digits, but not said to be a card's last four
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
        if key in self.cued and not _cued(m.string.lower(), m.start()):
            return raw
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
                self.text(k) if isinstance(k, str) else k: self._item(k, v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if type(value) is int and (found := self.map.get(str(value))) is not None:
            kind, surrogate = found
            if (
                surrogate.isdigit() and kind != "last4"
            ):  # (a last four: under its key only)  # a zip code, a phone, a card or an id written as a number
                self.counts[kind] += 1
                return int(surrogate)
        return value

    def _item(self, key: Any, value: Any) -> Any:
        """A record's value redacted; a card's last four digits under `last4` or `last_four`."""
        if self.cued and key in ("last4", "last_four", "lastFour") and str(value) in self.cued:
            kind, surrogate = self.map[str(value)]
            self.counts[kind] += 1
            return surrogate if isinstance(value, str) else int(surrogate)
        return self.value(value)

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
