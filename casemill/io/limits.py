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
walked only when they hold enough brackets, a `\\uD8..`-`\\uDF..` escape or a run of 309 digits.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import Any

MAX_DEPTH = 100
MAX_NUMBER = sys.float_info.max

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONG_DIGITS = re.compile(rb"\d{309}")

Problem = tuple[str, str]


def record_problem(value: Any, raw: bytes | str | None = None) -> Problem | None:
    """`(reason, message)` for a parsed record a reader must not pass on, or None when it is
    fine. `reason` is one of `too_deep`, `unencodable_text` and `number_out_of_range`; the
    message names the field. `raw` (the record's JSON text) lets a plain record skip the walk."""
    if raw is not None and not _suspicious(raw.encode() if isinstance(raw, str) else raw):
        return None
    return _walk(value)


def _suspicious(raw: bytes) -> bool:
    return (
        raw.count(b"[") + raw.count(b"{") > MAX_DEPTH
        or (b"\\u" in raw and _SURROGATE_ESCAPE.search(raw) is not None)
        or _LONG_DIGITS.search(raw) is not None
    )


def _walk(value: Any) -> Problem | None:
    """The first problem of `value`, depth first, without recursion (the value may be deeper
    than the interpreter's stack)."""
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
                if isinstance(key, str) and not _encodable(key):
                    return _surrogate(path + (key,), key)
                stack.append((child, depth + 1, path + (key,)))
        elif isinstance(item, str):
            if not _encodable(item):
                return _surrogate(path, item)
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > MAX_NUMBER:
            return "number_out_of_range", (
                f"a number out of range (over 1.8e308, the largest a float holds) at {_path(path)}"
            )
    return None


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
