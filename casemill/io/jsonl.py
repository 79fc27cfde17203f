"""Reading and writing JSON Lines, robustly.

`read_jsonl` streams a file (gzip when it ends in `.gz` or starts as gzip does) and yields one
`Line` per non-blank line: either the parsed object or the reason it could not be parsed
(invalid UTF-8, truncated JSON, a number of too many digits or nesting too deep for Python's
`json`, not an object, over the size limit, damaged gzip data, or what `casemill.io.limits`
refuses: lone surrogates, nesting over its depth limit, integers past a float's range). A bad
line never stops the reading. A BOM and CRLF endings are accepted. `atomic_write_text` writes
to a temporary file beside the target, fsyncs and renames, so a crash never leaves a
half-written file; the file keeps the mode it had (a new one gets the mode the umask gives), not
the owner-only mode of a temporary file.
"""

from __future__ import annotations

import gzip
import json
import os
import stat
import sys
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from casemill.io.limits import record_problem
from casemill.io.tempfiles import temp_beside

MAX_LINE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Line:
    file: str
    number: int
    value: Any = None
    error: str | None = None
    raw: bytes = b""


GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: str | Path) -> bool:
    """Whether `path` is read as gzip: its name ends in `.gz`, or it starts with gzip's magic
    bytes (a compressed log named `.jsonl`, `.gzip`, ...; no text file starts with them)."""
    path = Path(path)
    if path.suffix == ".gz":
        return True
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def open_binary(path: str | Path) -> IO[bytes]:
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


def iter_raw_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    with open_binary(path) as fh:
        yield from enumerate(fh, start=1)


def where(message: str, unit: str, number: int) -> str:
    """`message` of a `json.JSONDecodeError` with its place: some messages already end in
    'at' ("Unterminated string starting at"), which must not read "at at"."""
    return (
        f"{message} {unit} {number}" if message.endswith(" at") else f"{message} at {unit} {number}"
    )


def syntax_error(exc: json.JSONDecodeError, text: str, unit: str, number: int) -> str:
    """The message for JSON that does not parse, placed at `unit` `number` (column, line)."""
    hint = " (truncated?)" if exc.pos >= len(text) - 1 else ""
    return f"not valid JSON{hint}: {where(exc.msg, unit, number)}"


def decode_line(file: str, number: int, raw: bytes) -> Line | None:
    """Parse one raw line; None for a blank line."""
    if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    stripped = raw.rstrip(b"\r\n")
    if not stripped.strip():
        return None
    if len(stripped) > MAX_LINE_BYTES:
        return Line(
            file,
            number,
            error=f"line is {len(stripped):,} bytes, over the {MAX_LINE_BYTES:,}-byte limit",
            raw=stripped[:200],
        )
    try:
        text = stripped.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Line(
            file,
            number,
            error=f"invalid UTF-8 at byte {exc.start}: {stripped[exc.start : exc.start + 4]!r}",
            raw=stripped,
        )
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        error = syntax_error(exc, text, "column", exc.colno)
        return Line(file, number, error=error, raw=stripped)
    except ValueError as exc:  # an integer past Python's limit on digits
        reason = str(exc)
        if "digits" in reason:
            reason = f"a number of over {sys.get_int_max_str_digits():,} digits"
        return Line(file, number, error=f"not valid JSON: {reason}", raw=stripped)
    except RecursionError:
        return Line(
            file, number, error="not valid JSON: arrays or objects nested too deeply", raw=stripped
        )
    if not isinstance(value, dict):
        return Line(
            file, number, error=f"expected a JSON object, got {type(value).__name__}", raw=stripped
        )
    problem = record_problem(value, stripped)
    if problem is not None:
        return Line(file, number, error=f"not accepted: {problem[1]}", raw=stripped)
    return Line(file, number, value=value, raw=stripped)


def read_jsonl(path: str | Path) -> Iterator[Line]:
    """The lines of `path`; a `.gz` file that is no gzip, or is cut short, ends in one error
    line after the lines read before the damage."""
    file = str(path)
    number = 0
    try:
        for number, raw in iter_raw_lines(path):
            line = decode_line(file, number, raw)
            if line is not None:
                yield line
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        if not is_gzip(path):
            raise
        yield Line(file, number + 1, error=f"unreadable gzip data: {type(exc).__name__}: {exc}")


def dumps_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False, separators=(",", ":")) + "\n"


def current_umask() -> int:
    """The process's umask, read without changing it where Linux says it (setting and restoring
    it would, for an instant, give files other threads create the wrong mode)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode(path: Path) -> int:
    """The mode a rewrite of `path` gets: the one it has, else what the umask gives a new file."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~current_umask()


def atomic_write_text(path: str | Path, chunks: Iterable[str]) -> Path:
    """Write `chunks` to `path` atomically (temp file in the same folder, fsync, rename). The
    file is readable by whoever could read it before (or, new, as the umask says): the corpus,
    candidates and reports are read by other users and processes on a team's machine. The
    temporary file names its writer, and the temporary files of `path` a killed writer left
    are removed first (`casemill.io.tempfiles`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = temp_beside(path)
    try:
        os.fchmod(fd, file_mode(path))
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return path


def atomic_write_jsonl(path: str | Path, records: Iterable[Any]) -> Path:
    return atomic_write_text(path, (dumps_line(r) for r in records))
