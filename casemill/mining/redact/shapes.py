"""Surrogates that keep a value's shape and checks: an IBAN of the same country with valid check
digits, a US SSN and a Canadian SIN that pass their checks, a UK National Insurance number of an
issued prefix, an IP address of the same version from the ranges reserved for documentation
(RFC 5737, RFC 3849), a date of birth written in the same form, an obfuscated email obfuscated
the same way. Every draw comes from the conversation's `Surrogates` (a hash of seed,
conversation and value), so the same value gets the same surrogate everywhere.
"""

from __future__ import annotations

import re
from datetime import date

from stdnum import iban as _iban
from stdnum import luhn as _luhn
from stdnum.ca import sin as _sin
from stdnum.us import ssn as _ssn

from casemill.mining.redact.numbers import MONTHS, parse_date
from casemill.mining.redact.surrogates import Surrogates

_NINO_FIRST = "ABCEGHJKLMNOPRSTWXYZ"
_NINO_SECOND = "ABCEGHJKLMNPRSTWXYZ"
_OBFUSCATED_AT = re.compile(r"\s?[\(\[]at[\)\]]\s?|\s+at\s+", re.IGNORECASE)
_OBFUSCATED_DOT = re.compile(r"\s?[\(\[]dot[\)\]]\s?|\s+dot\s+", re.IGNORECASE)


def _tries(sur: Surrogates, kind: str, value: str, avoid: frozenset[str], make) -> str:
    """The first of `make(attempt, drawn bytes)` that is new in the conversation and passes."""
    for attempt in range(200):
        drawn = sur.draws(f"{kind}{attempt}", value, 32)
        surrogate = make(drawn)
        if surrogate and surrogate.lower() not in avoid and surrogate not in sur.taken:
            sur.taken.add(surrogate)
            return surrogate
    raise RuntimeError(f"surrogates of the shape of a {kind} exhausted in one conversation")


def _respace(raw: str, plain: str) -> str:
    """`plain` (letters and digits) with the spaces and hyphens of `raw` where `raw` has them."""
    out, chars = [], iter(plain)
    for ch in raw:
        out.append(ch if not ch.isalnum() else next(chars))
    return "".join(out)


def iban(sur: Surrogates, value: str, avoid: frozenset[str]) -> str:
    """An IBAN of the same country and format (letters where letters, digits where digits),
    with valid check digits, spaced as the raw one."""
    compact = _iban.compact(value)
    country, bban = compact[:2], compact[4:]

    def make(drawn: bytes) -> str | None:
        body = "".join(
            str(b % 10) if ch.isdigit() else chr(65 + b % 26)
            for ch, b in zip(bban, drawn * 2, strict=False)
        )
        check = _iban.calc_check_digits(f"{country}00{body}")
        candidate = f"{country}{check}{body}"
        return _respace(value, candidate) if _iban.is_valid(candidate) else None

    return _tries(sur, "iban", value, avoid, make)


def ssn(sur: Surrogates, value: str, avoid: frozenset[str]) -> str:
    """A US Social Security number that passes `stdnum.us.ssn`, written as the raw one."""

    def make(drawn: bytes) -> str | None:
        area = 1 + int.from_bytes(drawn[:2], "big") % 665
        group = 1 + drawn[2] % 99
        serial = 1 + int.from_bytes(drawn[3:5], "big") % 9999
        candidate = f"{area:03d}{group:02d}{serial:04d}"
        return _respace(value, candidate) if _ssn.is_valid(candidate) else None

    return _tries(sur, "ssn", value, avoid, make)


def sin(sur: Surrogates, value: str, avoid: frozenset[str]) -> str:
    """A Canadian Social Insurance number that passes `stdnum.ca.sin` (Luhn), written as the
    raw one."""

    def make(drawn: bytes) -> str | None:
        head = str(1 + drawn[0] % 7) + "".join(str(b % 10) for b in drawn[1:8])
        candidate = head + _luhn.calc_check_digit(head)
        return _respace(value, candidate) if _sin.is_valid(candidate) else None

    return _tries(sur, "sin", value, avoid, make)


def nino(sur: Surrogates, value: str, avoid: frozenset[str]) -> str:
    """A UK National Insurance number of an issued prefix, spaced as the raw one."""

    def make(drawn: bytes) -> str:
        prefix = _NINO_FIRST[drawn[0] % 20] + _NINO_SECOND[drawn[1] % 19]
        if prefix in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ"):
            return ""
        digits = "".join(str(b % 10) for b in drawn[2:8])
        return _respace(value, prefix + digits + "ABCD"[drawn[8] % 4])

    return _tries(sur, "nino", value.upper(), avoid, make)


def ip(sur: Surrogates, value: str, avoid: frozenset[str]) -> str:
    """An address of the same version in the ranges reserved for documentation."""
    if ":" in value:
        return _tries(
            sur, "ip6", value, avoid, lambda d: f"2001:db8:{d[0]:x}{d[1]:02x}::{d[2]:x}{d[3]:02x}"
        )
    nets = ("192.0.2", "198.51.100", "203.0.113")
    return _tries(sur, "ip4", value, avoid, lambda d: f"{nets[d[0] % 3]}.{1 + d[1] % 254}")


def date_of_birth(sur: Surrogates, value: str, pool: tuple[str, ...], avoid) -> str:
    """A date of birth from the pool, written in the form of the raw one (`04/02/1960`,
    `14.03.1987`, `September 10, 1996`...); a form not recognised gets the pool's ISO date."""
    parsed = parse_date(value)
    if parsed is None:
        return sur.pick("dob", value, pool, avoid)
    return _tries(sur, "dob", value, avoid, lambda d: _written(value, parsed[1], pool, d))


def _written(raw: str, form: str, pool: tuple[str, ...], drawn: bytes) -> str:
    day = date.fromisoformat(pool[int.from_bytes(drawn[:4], "big") % len(pool)])
    if form == "iso":
        return day.isoformat()
    if form.startswith("num"):
        sep = next(ch for ch in raw if ch in "/.-")
        first, second = raw.split(sep)[:2]
        width = 2 if len(first) == 2 or len(second) == 2 else 1
        year = raw.rsplit(sep, 1)[1]
        y = str(day.year) if len(year) == 4 else f"{day.year % 100:02d}"
        # a day past 12, so the surrogate reads one way only, as the raw one may not
        d = day.day if day.day > 12 else 13 + drawn[5] % 15
        if form == "num-dmy":
            return f"{d}{sep}{day.month:0{width}d}{sep}{y}"
        return f"{day.month:0{width}d}{sep}{d}{sep}{y}"
    month = MONTHS[day.month - 1].capitalize()
    if not re.search(r"[a-z]{4}", raw, re.IGNORECASE) or re.search(r"[A-Za-z]{3}\.", raw):
        month = month[:3]
    if form == "mdy":
        return f"{month} {day.day}{',' if ',' in raw else ''} {day.year}"
    return f"{day.day} {month} {day.year}"


def obfuscated(raw: str, email: str) -> str:
    """`email` written with the `at` and `dot` of the obfuscated `raw` (`name(at)web.de`, `x dot
    monty at gmail dot com`)."""
    at = _OBFUSCATED_AT.search(raw)
    dot = _OBFUSCATED_DOT.search(raw)
    local, domain = email.split("@", 1)
    if dot is not None:
        local, domain = local.replace(".", dot.group(0)), domain.replace(".", dot.group(0))
    return f"{local}{at.group(0) if at else '@'}{domain}"


def deobfuscate(raw: str) -> str:
    """The plain email an obfuscated one writes (`name(at)web.de` is `name@web.de`)."""
    return _OBFUSCATED_DOT.sub(".", _OBFUSCATED_AT.sub("@", raw, count=1)).replace(" ", "")
