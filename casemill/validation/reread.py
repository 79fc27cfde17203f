"""Records' bytes read again from their files: a report that streams its input keeps where each
bad record is and a CRC-32 of its bytes, not the bytes, and the quarantine is written from the
files. Asked in file and line order (as the report sorts its bad records), each file is read
forward once."""

from __future__ import annotations

import zlib
from collections.abc import Generator
from pathlib import Path

from casemill.errors import UserError
from casemill.io.jsonl import decode_line, is_gzip, iter_raw_lines


def fingerprint(raw: bytes) -> int:
    """What is kept of a record's bytes to find them again: their CRC-32."""
    return zlib.crc32(raw)


class Rereader:
    """Reads the record at (file, line) again, as `read_jsonl` gave it; raises `UserError` when
    the file no longer holds the bytes that were validated there."""

    def __init__(self) -> None:
        self._file: str | None = None
        self._lines: Generator[tuple[int, bytes], None, None] | None = None
        self._at = 0

    def raw(self, file: str, line: int, crc: int) -> bytes:
        found = self._find(file, line)
        if fingerprint(found) != crc:
            raise UserError(
                f"{file}:{line}: the file changed while it was being validated (this line no "
                "longer holds the record checked); validate it again"
            )
        return found

    def _find(self, file: str, line: int) -> bytes:
        if self._lines is None or file != self._file or line <= self._at:
            self.close()
            self._file, self._lines, self._at = file, iter_raw_lines(file), 0
        try:
            for number, raw in self._lines:
                self._at = number
                if number == line:
                    decoded = decode_line(file, number, raw)
                    return b"" if decoded is None else decoded.raw
        except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            if not (Path(file).is_file() and is_gzip(file)):
                raise UserError(
                    f"{file}: could not be read again to copy its bad records into the "
                    f"quarantine ({type(exc).__name__}: {exc}); validate it again"
                ) from exc
            # a damaged gzip file: what follows the damage cannot be read (nor was it before)
        return b""  # past the end: the line that says a gzip file is damaged has no bytes

    def close(self) -> None:
        if self._lines is not None:
            self._lines.close()
            self._lines = None
