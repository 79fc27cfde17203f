"""Reading source records from JSON Lines or a JSON array file, each with its line number.

A file whose first non-blank character is `[` is read as one JSON array: each element is decoded
in turn, so an element that cannot be parsed is reported at its own line (the elements before it
are kept; after a syntax error the rest of the array cannot be told apart and is reported as one
error). Anything else is read as JSON Lines through `casemill.io.jsonl` (BOM, CRLF, invalid UTF-8,
over-long lines and truncated JSON are reported per line), except that a pretty-printed file
holding a single JSON object is read as that one record.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casemill.errors import UserError
from casemill.io.jsonl import read_jsonl, syntax_error
from casemill.io.limits import record_problem

_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class SourceRecord:
    file: str
    line: int
    value: Any = None
    error: str | None = None
    raw: str = ""


def _first_char(path: Path) -> str:
    with open(path, "rb") as fh:
        head = fh.read(4096).lstrip(b"\xef\xbb\xbf").lstrip()
    return head[:1].decode("ascii", errors="replace")


def read_records(path: str | Path) -> Iterator[SourceRecord]:
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    if _first_char(path) == "[":
        yield from _read_array(path)
        return
    single = _single_object(path)
    if single is not None:
        yield single
        return
    for line in read_jsonl(path):
        raw = line.raw.decode("utf-8", errors="replace")
        yield SourceRecord(str(path), line.number, line.value, line.error, raw)


def _single_object(path: Path) -> SourceRecord | None:
    """A pretty-printed file holding one JSON object (its first line alone is not JSON)."""
    with open(path, "rb") as fh:
        first = fh.readline().lstrip(b"\xef\xbb\xbf").strip()
        if not first.startswith(b"{") or first.endswith(b"}"):
            return None
        try:
            text = (first + fh.read()).decode("utf-8")
            value = json.loads(text)
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None
    if not isinstance(value, dict):
        return None
    return _checked(SourceRecord(str(path), 1, value, raw=text))


def _checked(record: SourceRecord) -> SourceRecord:
    """`record`, or an error record when `casemill.io.limits` refuses its value (a lone
    surrogate, nesting too deep, an integer past a float's range)."""
    problem = record_problem(record.value, record.raw)
    if problem is None:
        return record
    return SourceRecord(
        record.file, record.line, error=f"not accepted: {problem[1]}", raw=record.raw
    )


def _read_array(path: Path) -> Iterator[SourceRecord]:
    file = str(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        yield SourceRecord(file, 1, error=f"invalid UTF-8 at byte {exc.start}")
        return
    pos = text.index("[") + 1
    line, counted = 1, 0

    def line_at(at: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, at)
        counted = at
        return line

    while True:
        pos = _skip(text, pos)
        if pos >= len(text):
            yield SourceRecord(
                file,
                line_at(len(text)),
                error="not valid JSON (truncated?): the array is not closed",
            )
            return
        if text[pos] == "]":
            return
        start = line_at(pos)
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            error = syntax_error(exc, text, "line", line_at(exc.pos))
            yield SourceRecord(file, start, error=error)
            return
        except (RecursionError, ValueError) as exc:  # too deep or too many digits: this one only
            yield SourceRecord(file, start, error=f"not valid JSON: {_undecodable(exc)}")
            end = _end_of_element(text, pos)
            if end is None:
                return
        else:
            yield _element(file, start, value, text[pos:end])
        pos = _skip(text, end)
        if pos < len(text) and text[pos] == ",":
            pos += 1


def _undecodable(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "arrays or objects nested too deeply"
    return str(exc)


def _element(file: str, line: int, value: Any, raw: str) -> SourceRecord:
    """One decoded array element: a record, or an error when it is no object or the limits
    refuse it."""
    if not isinstance(value, dict):
        kind = type(value).__name__
        return SourceRecord(file, line, error=f"expected a JSON object, got {kind}", raw=raw)
    return _checked(SourceRecord(file, line, value, raw=raw))


def _end_of_element(text: str, pos: int) -> int | None:
    """Where the array or object starting at `pos` ends, found by its brackets outside strings
    (for an element `json` could not decode but whose neighbours are still readable); None when
    it is not an array or object, or is not closed."""
    if text[pos] not in "[{":
        return None
    depth, at, in_string = 0, pos, False
    while at < len(text):
        char = text[at]
        if in_string:
            if char == "\\":
                at += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1
    return None


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos
