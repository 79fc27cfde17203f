"""Faker surrogates for personal data, chosen by a stable hash.

Pools of fake values are drawn once from a Faker seeded with the mining seed; a value's surrogate
is picked from its pool by the SHA-256 of (seed, conversation id, kind, value). The same value in
the same conversation therefore always gets the same surrogate, on every machine, and drawing is
cheap (no Faker call per value). `Surrogates.pick` probes onward when the pick is already taken by
another value of the conversation, so two people never merge into one.

The pools of the default seed (0) are shipped drawn (`pools_seed0.json`, written by
`write_shipped` and checked against a fresh draw by a test): mining with it
needs neither Faker's import nor its draws, which take longer than redacting a few thousand
conversations.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from datetime import date, timedelta
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import orjson

POOL = 600
DOB_AS_OF = date(2026, 11, 22)  # the day the shipped pools were drawn (not a leap day)
_sha256 = hashlib.sha256
WORD = re.compile(r"\w+")
ZIP = re.compile(r"\d{5}(?:([ -]?)\d{4})?")  # a US zip code, or a ZIP+4


@dataclass(frozen=True)
class Pools:
    first: tuple[str, ...]
    last: tuple[str, ...]
    street: tuple[str, ...]
    unit: tuple[str, ...]
    phone: tuple[str, ...]
    card: tuple[str, ...]
    dob: tuple[str, ...]
    postcode: tuple[str, ...]  # 5 digits
    city: tuple[str, ...]
    domain: tuple[str, ...] = ("example.com", "example.org", "example.net")

    @cached_property
    def city_words(self) -> dict[str, frozenset[str]]:
        """The words of each city, lowered (a surrogate city holds no word of a raw value)."""
        return _words(self.city)

    @cached_property
    def street_words(self) -> dict[str, frozenset[str]]:
        """The words of each street line, lowered (Faker names streets after people: Ramirez
        Spur must not stand in for the street of a Ramirez)."""
        return _words(self.street + self.unit)


def _words(pool: tuple[str, ...]) -> dict[str, frozenset[str]]:
    return {value: frozenset(WORD.findall(value.lower())) for value in pool}


SHIPPED = {0: Path(__file__).with_name("pools_seed0.json")}
_DRAWN = tuple(f.name for f in fields(Pools) if f.name != "domain")


@lru_cache(maxsize=8)
def pools(seed: int) -> Pools:
    """The pools of `seed`: as shipped for the default seed, drawn from Faker for the others."""
    shipped = SHIPPED.get(seed)
    if shipped is not None:
        found = orjson.loads(shipped.read_bytes())
        return Pools(**{name: tuple(found[name]) for name in _DRAWN})
    return draw(seed)


def draw(seed: int) -> Pools:
    """Pools drawn from a Faker seeded with `seed`."""
    from faker import Faker  # imported here: mining with the default seed never needs it

    fake = Faker("en_US")
    fake.seed_instance(seed)

    spaced = (fake.street_address, fake.secondary_address, fake.city)

    def unique(draw, n: int = POOL) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for _ in range(n * 3):
            value = draw()
            if '"' in value or "\\" in value:
                continue
            if " " not in value.strip() or draw in spaced:
                seen.setdefault(value, None)
            if len(seen) >= n:
                break
        return tuple(seen)

    return Pools(
        first=unique(fake.first_name),
        last=unique(fake.last_name),
        street=unique(fake.street_address),
        unit=unique(fake.secondary_address, 500),
        phone=tuple(fake.numerify("(###) 555-01##") for _ in range(POOL)),
        card=tuple(fake.credit_card_number(card_type="visa16") for _ in range(POOL)),
        dob=tuple(_date_of_birth(fake) for _ in range(POOL)),
        # drawn after the pools above, which so stay what earlier seeds' pools were
        postcode=unique(fake.postcode),
        city=unique(fake.city),
    )


def _date_of_birth(fake: Any, minimum_age: int = 18, maximum_age: int = 90) -> str:
    """Faker's `date_of_birth`, as of `DOB_AS_OF` instead of today: a seed's pools (and so the
    surrogates mining gives) must not change with the calendar."""
    start = DOB_AS_OF.replace(year=DOB_AS_OF.year - maximum_age - 1)
    end = DOB_AS_OF.replace(year=DOB_AS_OF.year - minimum_age)
    dob = fake.date_time_ad(start_datetime=start, end_datetime=end).date()
    return (dob if dob != start else dob + timedelta(days=1)).isoformat()


class Surrogates:
    """Surrogate picks for one conversation."""

    def __init__(self, seed: int, key: str):
        """`key` names the conversation (`Conversation.content_key`): the same seed and key
        give the same surrogates."""
        self.seed = seed
        self.key = key
        self.pools = pools(seed)
        self.taken: set[str] = set()
        # a value's start in its pool: the SHA-256 of seed, key, kind and value joined by \x1f
        # (its first 8 bytes)
        self._prefix = f"{seed}\x1f{key}\x1f"

    def _start(self, kind: str, value: str) -> int:
        digest = _sha256(f"{self._prefix}{kind}\x1f{value}".encode()).digest()
        return int.from_bytes(digest[:8], "big")

    def draws(self, kind: str, value: str, n: int) -> bytes:
        """`n` bytes drawn for `value` (from the same hash as a pick's start)."""
        out, block = b"", 0
        while len(out) < n:
            key = f"{self._prefix}{kind}\x1f{value}\x1f{block}"
            out += _sha256(key.encode()).digest()
            block += 1
        return out[:n]

    def pick(
        self,
        kind: str,
        value: str,
        pool: tuple[str, ...],
        avoid: frozenset[str] = frozenset(),
        fits: Callable[[str], bool] | None = None,
    ) -> str:
        """`value`'s surrogate from `pool`: none taken before in the conversation, none in
        `avoid` (lowered), and one `fits` accepts when given."""
        start = self._start(kind, value)
        lowered = value.lower()
        for step in range(len(pool)):
            choice = pool[(start + step) % len(pool)]
            if (
                choice not in self.taken
                and (low := choice.lower()) not in avoid
                and low != lowered
                and (fits is None or fits(choice))
            ):
                self.taken.add(choice)
                return choice
        raise RuntimeError(f"surrogate pool for {kind} exhausted in one conversation")

    def postcode(self, value: str, avoid: frozenset[str]) -> str:
        """A surrogate postal code of `value`'s shape: a zip code stays 5 digits (not starting
        with 0 unless the raw one does, so a zip written as a JSON number stays one), a ZIP+4 a
        ZIP+4; another country's code keeps its letters, digits and separators where they are."""
        m = ZIP.fullmatch(value)
        if m is None:
            return self.shaped("postcode", value, avoid)
        head = self.pick(
            "postcode", value, self.pools.postcode, avoid, None if value[0] == "0" else _no_zero
        )
        if len(value) == 5:
            return head
        return f"{head}{m.group(1)}{self.number('postcode4', value, 4, avoid)}"

    def shaped(self, kind: str, value: str, avoid: frozenset[str]) -> str:
        """`value` with each digit and letter drawn again (letters keep their case; a leading
        digit that is not 0 stays one, so a code written as a JSON number stays one)."""
        for attempt in range(100):
            drawn = self.draws(f"{kind}{attempt}", value, len(value))
            out = []
            for ch, b in zip(value, drawn, strict=True):
                if ch.isdigit():
                    out.append(str(1 + b % 9 if not out and ch != "0" else b % 10))
                elif ch.isalpha():
                    out.append(chr((97 if ch.islower() else 65) + b % 26))
                else:
                    out.append(ch)
            surrogate = "".join(out)
            if surrogate.lower() not in avoid and surrogate not in self.taken:
                self.taken.add(surrogate)
                return surrogate
        raise RuntimeError(f"surrogates of the shape of a {kind} exhausted in one conversation")

    def number(self, kind: str, value: str, digits: int, avoid: frozenset[str]) -> str:
        start = self._start(kind, value)
        for step in range(10**digits):
            choice = str((start + step) % 10**digits).zfill(digits)
            if choice not in self.taken and choice not in avoid:
                self.taken.add(choice)
                return choice
        raise RuntimeError(f"surrogate numbers for {kind} exhausted in one conversation")


def _no_zero(postcode: str) -> bool:
    return postcode[0] != "0"


def write_shipped() -> None:
    """Write the shipped pools afresh from Faker (after a Faker upgrade changes its draws)."""
    for seed, path in SHIPPED.items():
        drawn = asdict(draw(seed))
        lines = [f"{json.dumps(name)}: {json.dumps(drawn[name])}" for name in _DRAWN]
        path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
