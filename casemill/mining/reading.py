"""Streaming reads of log files: plain or gzip, line by line in constant memory, with the
number of bytes consumed reported as it goes (for progress bars).

A UTF-8 byte-order mark at the start of the file is dropped. A line longer than `max_bytes` is
not held in memory: the reader keeps its first bytes, skips to the end of the line and flags it,
so one runaway record cannot exhaust memory.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import orjson

from casemill.io.jsonl import open_binary
from casemill.io.limits import record_problem

if TYPE_CHECKING:
    from casemill.mining.model import Quarantined

MAX_LINE_BYTES = 16 * 1024 * 1024
CHUNK = 1024 * 1024
BOM = b"\xef\xbb\xbf"

Progress = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class RawLine:
    number: int
    data: bytes
    too_long: bool = False


def file_size(path: str | Path) -> int:
    """Bytes the reader will report for `path` (the compressed size for gzip)."""
    return Path(path).stat().st_size


def _position(fh: IO[bytes]) -> int:
    if isinstance(fh, gzip.GzipFile):
        return fh.fileobj.tell()  # type: ignore[union-attr]
    return fh.tell()


def iter_lines(
    path: str | Path, progress: Progress | None = None, max_bytes: int = MAX_LINE_BYTES
) -> Iterator[RawLine]:
    """Yield every line of `path` (without its line ending), numbered from 1."""
    with open_binary(path) as fh:
        if fh.peek(3)[:3] == BOM:  # type: ignore[attr-defined]
            fh.read(3)  # a byte-order mark is no part of the first line
        number = 0
        reported = 0
        readline = fh.readline
        while True:
            data = readline(max_bytes + 1)
            if not data:
                break
            number += 1
            too_long = False
            if len(data) > max_bytes and not data.endswith(b"\n"):
                too_long = True
                data = data[:200]
                while True:  # skip the rest of the line without keeping it
                    rest = readline(CHUNK)
                    if not rest or rest.endswith(b"\n"):
                        break
            if progress is not None and number % 64 == 0:
                position = _position(fh)
                progress(position - reported)
                reported = position
            yield RawLine(number, data.rstrip(b"\r\n"), too_long)
        if progress is not None:
            progress(_position(fh) - reported)


def json_problem(data: bytes, exc: orjson.JSONDecodeError) -> tuple[str, str]:
    """(reason, message) for a line that did not parse, without quoting its content."""
    text = str(exc)
    if "utf-8" in text.lower() or "utf8" in text.lower() or "surrogate" in text.lower():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as err:
            return "invalid_utf8", f"invalid UTF-8 at byte {err.start}"
        return "invalid_utf8", "invalid UTF-8"
    pos = getattr(exc, "pos", None)
    if pos is not None and pos >= len(data.rstrip()) - 1:
        return "truncated", f"the JSON ends early at byte {pos} (a truncated line?)"
    where = f" at byte {pos}" if pos is not None else ""
    return "invalid_json", f"not valid JSON{where}: {getattr(exc, 'msg', 'parse error')}"


def too_long(file: str, line: int) -> Quarantined:
    """The quarantine record of a line over the size limit (`RawLine.too_long`)."""
    from casemill.mining.model import Quarantined

    return Quarantined(
        file=file,
        line=line,
        reason="line_too_long",
        message="the line is over the 16 MiB limit; skipped",
    )


def json_objects(file: str, lines: Iterable[RawLine]) -> Iterator[tuple[int, dict] | Quarantined]:
    """Each non-blank line parsed as a JSON object, as `(line number, object)`; a line that is
    over the size limit, not JSON, not an object or refused by `casemill.io.limits` (nested too
    deep, say) comes back as a `Quarantined` record."""
    from casemill.mining.model import Quarantined

    for raw in lines:
        if raw.too_long:
            yield too_long(file, raw.number)
            continue
        if not raw.data.strip():
            continue
        try:
            record = orjson.loads(raw.data)
        except orjson.JSONDecodeError as exc:
            reason, message = json_problem(raw.data, exc)
            yield Quarantined(file=file, line=raw.number, reason=reason, message=message)
            continue
        if not isinstance(record, dict):
            yield Quarantined(
                file=file,
                line=raw.number,
                reason="not_an_object",
                message=f"expected a JSON object, got {type(record).__name__}",
            )
            continue
        problem = record_problem(record, raw.data, orjson_parsed=True)
        if problem is not None:
            yield Quarantined(file=file, line=raw.number, reason=problem[0], message=problem[1])
            continue
        yield raw.number, record
