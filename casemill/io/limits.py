"""What a parsed record may hold, decided once for every reader.

A line can be valid JSON and still break whatever handles it next: a lone surrogate (`"\\ud800"`,
legal JSON text) cannot be written back as UTF-8, so a later write of the record fails, often
after other records were already taken; arrays or objects nested hundreds of levels deep exhaust
Python's recursion limit in any code that walks or prints them; an integer past the range of a
float overflows wherever it becomes an amount. `record_problem` finds these in a parsed value, so
that every reader (`casemill.io.jsonl` for cases, `casemill.mining.reading` for logs,
`casemill.formats.records` for imports) quarantines such a record with its file, line and
reason, and keeps the good records around it.

The checks are cheap for ordinary records: the raw bytes are looked at first, and the value is
walked only for what they do not rule out: its containers when it holds over 100 brackets, its
strings when it holds a `\\uD8..`-`\\uDF..` escape, its numbers when a run of 309 digits.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import Any

MAX_DEPTH = 100
MAX_NUMBER = sys.float_info.max

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONG_DIGITS = re.compile(rb"[0-9]{309}")
_NOT_DIGITS = bytes(b for b in range(256) if not 0x30 <= b <= 0x39)

Problem = tuple[str, str]


def record_problem(
    value: Any, raw: bytes | str | None = None, *, orjson_parsed: bool = False
) -> Problem | None:
    """`(reason, message)` for a parsed record a reader must not pass on, or None when it is
    fine. `reason` is one of `too_deep`, `unencodable_text` and `number_out_of_range`; the
    message names the field. `raw` (the record's JSON text) lets a plain record skip the walks
    its bytes rule out. `orjson_parsed`: the value comes from `orjson`, which refuses lone
    surrogates and numbers past a double itself, so only the nesting is left to check."""
    data = raw.encode() if isinstance(raw, str) else raw
    bracketed = data is None or data.count(b"[") + data.count(b"{") > MAX_DEPTH
    if bracketed and _deeper_than(value, MAX_DEPTH):
        return _walk(value)
    if orjson_parsed:
        return None
    if data is None or (b"\\u" in data and _SURROGATE_ESCAPE.search(data) is not None):
        found = _walk(value, strings=True)
        if found is not None:
            return found
    if data is None or _long_digits(data):
        return _walk(value, numbers=True)
    return None


def _long_digits(data: bytes) -> bool:
    """Whether `data` holds a run of 309 digits (counted first: the search is slower)."""
    digits = len(data.translate(None, _NOT_DIGITS))
    return digits >= 309 and _LONG_DIGITS.search(data) is not None


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays or objects nest past `limit` levels, visiting containers only."""
    if not isinstance(value, dict | list):
        return False
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth >= limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def _walk(value: Any, *, strings: bool = False, numbers: bool = False) -> Problem | None:
    """The first problem of `value`, depth first, without recursion (the value may be deeper
    than the interpreter's stack), with the path to it: nesting always, lone surrogates with
    `strings`, integers past a float's range with `numbers`."""
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 0, ())]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                return "too_deep", (
                    f"arrays or objects nested over {MAX_DEPTH} levels deep at {_path(path[:6])}..."
                )
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                if strings and isinstance(key, str) and not _encodable(key):
                    return _surrogate(path + (key,), key)
                stack.append((child, depth + 1, path + (key,)))
        elif strings and isinstance(item, str):
            if not _encodable(item):
                return _surrogate(path, item)
        elif numbers and _huge(item):
            return "number_out_of_range", (
                f"a number out of range (over 1.8e308, the largest a float holds) at {_path(path)}"
            )
    return None


def _huge(item: Any) -> bool:
    return isinstance(item, int) and not isinstance(item, bool) and abs(item) > MAX_NUMBER


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _surrogate(path: tuple[Any, ...], text: str) -> Problem:
    char = next(c for c in text if 0xD800 <= ord(c) <= 0xDFFF)
    return "unencodable_text", (
        f"text that cannot be written as UTF-8 (a lone surrogate, \\u{ord(char):04x}) "
        f"at {_path(path)}"
    )


def field_path(loc: Iterable[Any]) -> str:
    """A location as a dotted path: `expected.tool_calls[0].params.x` (pydantic's and
    jsonschema's locations too)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _path(path: tuple[Any, ...]) -> str:
    return field_path(path) or "the top level"
