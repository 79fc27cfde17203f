"""A seeded mutator of JSON Lines records, for the fuzz suite (`tests/test_fuzz_inputs.py`) and
its benchmark (`bench/fuzz_inputs.py`).

`mutate(line, rng)` turns one good record (its bytes) into a hostile one: truncation, byte
flips, wrong types, huge strings, deep nesting, invalid UTF-8, lone surrogates, NaN and
Infinity, huge numbers, duplicate keys, a BOM, NUL bytes, U+2028, non-object lines, and
10,000-turn conversations. A mutant may still be valid (a duplicate key holding the same
value, U+2028 inside a string): the fuzz oracle only asks that each is either accepted or named
by file and line, and that no good record is lost.

`mixed_file(goods, sources, n, rng)` writes the goods and `n` mutants of `sources`, shuffled;
the goods and the sources must be different records, so that no mutant that stays valid
duplicates a good record (and takes its place as the first copy).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Mutation = Callable[[bytes, random.Random], bytes]


def _value_paths(value: Any, path: tuple = ()) -> list[tuple]:
    """Every place in `value` (dict keys and list indexes), depth first, bounded."""
    out = [path]
    if len(out) > 2000:
        return out
    if isinstance(value, dict):
        for key, child in value.items():
            out.extend(_value_paths(child, path + (key,)))
    elif isinstance(value, list):
        for index, child in enumerate(value[:50]):
            out.extend(_value_paths(child, path + (index,)))
    return out


def _set(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    target = value
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = new
    return value


def _json_edit(make: Callable[[Any, random.Random], Any], pick: Callable[[Any], bool]) -> Mutation:
    """A mutation that replaces a random place holding a value `pick` accepts by `make`'s."""

    def mutation(line: bytes, rng: random.Random) -> bytes:
        value = json.loads(line)
        places = [p for p in _value_paths(value) if p and pick(_get(value, p))]
        if not places:
            places = [p for p in _value_paths(value) if p] or [()]
        path = rng.choice(places)
        return json.dumps(_set(value, path, make(_get(value, path), rng))).encode()

    return mutation


def _get(value: Any, path: tuple) -> Any:
    for part in path:
        value = value[part]
    return value


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def truncate(line: bytes, rng: random.Random) -> bytes:
    return line[: rng.randrange(1, max(2, len(line) - 1))]


def flip_bytes(line: bytes, rng: random.Random) -> bytes:
    data = bytearray(line)
    for _ in range(rng.randint(1, 4)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data).replace(b"\n", b" ").replace(b"\r", b" ")


def deep(line: bytes, rng: random.Random) -> bytes:
    depth = rng.choice([150, 999, 1020, 5000])
    opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
    nested = opener * depth + b"1" + closer * depth
    value = json.loads(line)
    key = rng.choice(list(value) or ["x"])
    value[key] = "@NESTED@"
    return json.dumps(value).encode().replace(b'"@NESTED@"', nested)


def invalid_utf8(line: bytes, rng: random.Random) -> bytes:
    at = line.find(b'"', rng.randrange(len(line)))
    at = at + 1 if at >= 0 else len(line) // 2
    return line[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88"]) + line[at:]


def lone_surrogate(line: bytes, rng: random.Random) -> bytes:
    value = json.loads(line)
    places = [p for p in _value_paths(value) if p and _is_str(_get(value, p))] or [("x",)]
    path = rng.choice(places)
    marker = "@SURROGATE@"
    text = json.dumps(_set(value, path, marker)).encode()
    return text.replace(marker.encode(), rng.choice([b"\\ud800", b"ok \\udfff", b"\\udbff!"]))


def non_finite(line: bytes, rng: random.Random) -> bytes:
    value = json.loads(line)
    places = [p for p in _value_paths(value) if p and _is_number(_get(value, p))] or [("x",)]
    marker = "@NUMBER@"
    text = json.dumps(_set(value, rng.choice(places), marker)).encode()
    word = rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e999"])
    return text.replace(b'"' + marker.encode() + b'"', word)


def huge_number(line: bytes, rng: random.Random) -> bytes:
    value = json.loads(line)
    places = [p for p in _value_paths(value) if p and _is_number(_get(value, p))] or [("x",)]
    marker = "@NUMBER@"
    text = json.dumps(_set(value, rng.choice(places), marker)).encode()
    digits = rng.choice([310, 400, 4000, 5000])
    return text.replace(b'"' + marker.encode() + b'"', b"9" * digits)


def duplicate_key(line: bytes, rng: random.Random) -> bytes:
    value = json.loads(line)
    key = rng.choice(list(value) or ["x"])
    other = rng.choice([None, 7, "other", [], {}])
    return b"{" + json.dumps(key).encode() + b":" + json.dumps(other).encode() + b"," + line[1:]


def bom(line: bytes, rng: random.Random) -> bytes:
    return b"\xef\xbb\xbf" + line


def nul(line: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(line))
    return line[:at] + rng.choice([b"\x00", b"\\u0000"]) + line[at:]


def line_separator(line: bytes, rng: random.Random) -> bytes:
    at = line.find(b'": "', rng.randrange(len(line)))
    at = at + 4 if at >= 0 else len(line) // 2
    return line[:at] + rng.choice(["\u2028", "\u2029", "\x85"]).encode() + line[at:]


def non_object(line: bytes, rng: random.Random) -> bytes:
    return rng.choice([b"[]", b"42", b'"text"', b"null", b"true", b"[" + line + b"]", b"{}"])


wrong_type = _json_edit(
    lambda old, rng: rng.choice([12345, None, [], {}, True, "x", [old]]), lambda v: True
)
huge_string = _json_edit(lambda old, rng: "x" * rng.choice([25_000, 120_000, 1_000_000]), _is_str)


def long_conversation(line: bytes, rng: random.Random) -> bytes:
    """10,000 more turns in the record's list of messages or turns."""
    value = json.loads(line)
    for key in ("conversation", "messages", "input"):
        if isinstance(value.get(key), list):
            roles = ("customer", "assistant") if key == "conversation" else ("user", "assistant")
            turns = [
                {"role": roles[n % 2], "content": f"are you there? {n}"} for n in range(10_000)
            ]
            value[key] = turns + value[key]
            break
    return json.dumps(value).encode()


MUTATIONS: dict[str, Mutation] = {
    "truncate": truncate,
    "byte_flip": flip_bytes,
    "wrong_type": wrong_type,
    "huge_string": huge_string,
    "deep_nesting": deep,
    "invalid_utf8": invalid_utf8,
    "lone_surrogate": lone_surrogate,
    "non_finite": non_finite,
    "huge_number": huge_number,
    "duplicate_key": duplicate_key,
    "bom": bom,
    "nul": nul,
    "line_separator": line_separator,
    "non_object": non_object,
    "long_conversation": long_conversation,
}


def mutate(line: bytes, rng: random.Random, kind: str | None = None) -> tuple[str, bytes]:
    """(the mutation's name, the mutant) of one record; one line (no line break inside)."""
    kind = kind or rng.choice(sorted(MUTATIONS))
    out = MUTATIONS[kind](line, rng)
    return kind, out.replace(b"\n", b" ").replace(b"\r", b" ")


def mixed_file(
    path: Path,
    goods: Sequence[bytes],
    sources: Sequence[bytes],
    n: int,
    rng: random.Random,
    kinds: Sequence[str] | None = None,
) -> tuple[set[int], dict[int, str]]:
    """Write `goods` and `n` mutants of `sources` to `path`, shuffled; return the line numbers
    of the goods and, for each mutant's line, its mutation's name."""
    items: list[tuple[str | None, bytes]] = [(None, g) for g in goods]
    for _ in range(n):
        kind = rng.choice(list(kinds)) if kinds else None
        items.append(mutate(rng.choice(list(sources)), rng, kind))
    rng.shuffle(items)
    good_lines: set[int] = set()
    mutants: dict[int, str] = {}
    with open(path, "wb") as fh:
        for number, (kind, data) in enumerate(items, start=1):
            fh.write(data + b"\n")
            if kind is None:
                good_lines.add(number)
            else:
                mutants[number] = kind
    return good_lines, mutants
