"""The documents of an OTLP JSON export file: one a line, or one pretty-printed for the whole
file; what cannot be read of a line comes back as `Unread`, with the trace ids its bytes name
(those traces lost spans there).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from casemill.io.limits import record_problem
from casemill.mining.model import Quarantined
from casemill.mining.reading import (
    MAX_LINE_BYTES,
    Progress,
    RawLine,
    iter_lines,
    json_problem,
    too_long,
)


@dataclass(frozen=True, slots=True)
class Unread:
    """A line that could not be read, and the trace ids its bytes name: those traces lost spans
    there, and are quarantined rather than mined without them."""

    record: Quarantined
    trace_ids: frozenset[str]


TRACE_ID = re.compile(rb'"traceId"\s*:\s*"([^"\\]{1,64})"')


def unread(record: Quarantined, data: bytes) -> Unread:
    """`record`, with the trace ids the bytes of what could not be read name."""
    ids = frozenset(m.group(1).decode("utf-8", "replace") for m in TRACE_ID.finditer(data))
    return Unread(record, ids)


def documents(path: Path, progress: Progress | None) -> Iterator[tuple[int, Any] | Unread]:
    """Each line's document (or what could not be read of it). A first line that is a JSON
    object cut short may open one pretty-printed document, unless the next line is a document
    of its own (then the first line was only truncated, and the file is read line by line). A
    pretty-printed document is read whole at the end, up to the size limit: past it, the file
    is one record skipped."""
    file = str(path)
    held: list[RawLine] = []  # the lines of a pretty-printed document
    size, skipped = 0, False
    for raw in iter_lines(path, progress):
        if skipped:
            continue
        if held:
            if len(held) == 1 and raw.data.strip() and _alone(raw.data):
                yield from _each_line(file, [*held, raw])  # JSON lines after all
                held = []
                continue
            held.append(raw)
            size += len(raw.data)
            if size > MAX_LINE_BYTES or raw.too_long:
                yield unread(_too_big(file), held[0].data)
                held, skipped = [], True
            continue
        if raw.number == 1 and not raw.too_long and _opens_document(raw.data):
            held, size = [raw], len(raw.data)
            continue
        yield from _each_line(file, [raw])
    if held:
        yield _whole(file, held)


def _too_big(file: str) -> Quarantined:
    return Quarantined(
        file=file,
        line=1,
        reason="line_too_long",
        message="the file is one pretty-printed JSON document over the 16 MiB limit; skipped: "
        "export a JSON document a line",
    )


def _alone(data: bytes) -> bool:
    """Whether a line is a JSON object by itself."""
    try:
        return isinstance(orjson.loads(data), dict)
    except orjson.JSONDecodeError:
        return False


def _opens_document(data: bytes) -> bool:
    """Whether a first line is a JSON object cut short (the start of a pretty-printed one)."""
    if not data.lstrip().startswith(b"{"):
        return False
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return json_problem(data, exc)[0] == "truncated"
    return False


def _whole(file: str, lines: list[RawLine]) -> tuple[int, Any] | Unread:
    """The lines as one pretty-printed document, or one record of why they are not."""
    data = b"\n".join(raw.data for raw in lines)
    return _parsed(file, 1, data)


def _parsed(file: str, number: int, data: bytes) -> tuple[int, Any] | Unread:
    """The document of one line (or of a pretty-printed file), or why it cannot be read:
    not JSON, or refused by `casemill.io.limits` (nested too deep)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        reason, message = json_problem(data, exc)
        return unread(Quarantined(file=file, line=number, reason=reason, message=message), data)
    problem = record_problem(value, data, orjson_parsed=True)
    if problem is not None:
        bad = Quarantined(file=file, line=number, reason=problem[0], message=problem[1])
        return unread(bad, data)
    return number, value


def _each_line(file: str, lines: list[RawLine]) -> Iterator[tuple[int, Any] | Unread]:
    for raw in lines:
        if raw.too_long:  # its first bytes only: the ids they name
            yield unread(too_long(file, raw.number), raw.data)
            continue
        if not raw.data.strip():
            continue
        yield _parsed(file, raw.number, raw.data)
