"""The header of a CSV ticket export checked against its column mapping: a header that lacks
a column the mapping needs is a `UserError` saying what to do (the delimiter to set, when
another one splits the header; the mapping's keys). The header's cells are shown only when they
look like column names: a first row that is not a header may be a ticket's text.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from casemill.errors import UserError

if TYPE_CHECKING:
    from casemill.mining.parsers.csv_tickets import CsvMapping

# the keys of a mapping that name a column
_COLUMN_KEYS = (
    "conversation_id",
    "role",
    "content",
    "resolved",
    "tool_name",
    "tool_arguments",
    "tool_call_id",
    "transcript",
)
# a header cell shown in a message: short, of letters, digits, `_`, spaces, dots and hyphens
_COLUMN_NAME = re.compile(r"[\w .-]{0,40}")
_LONG_NUMBER = re.compile(r"\d{7,}")  # a phone number's digits, once spaces, dots, hyphens go


def check_header(path: Path, header: list[str], mapping: CsvMapping) -> None:
    """Raise a `UserError` when the header lacks a column the mapping needs (`_needed`)."""
    missing = [c for c in _needed(mapping) if c not in header]
    if missing:
        raise _header_error(path, header, missing, mapping.delimiter)


def _needed(mapping: CsvMapping) -> list[str]:
    """The columns the header must have: the id and the content's, and every optional one the
    mapping names itself (a misspelt status column would leave every ticket unresolved)."""
    needed = [mapping.conversation_id] + (
        [mapping.transcript] if mapping.transcript else [mapping.role, mapping.content]
    )
    optional = ("resolved", "tool_name", "tool_arguments", "tool_call_id")
    given = [getattr(mapping, f) for f in optional if f in mapping.model_fields_set]
    return needed + [c for c in given if c]


def _header_error(path: Path, header: list[str], missing: list[str], delimiter: str) -> UserError:
    """The columns the header lacks, and its own when they look like column names. A first row
    that is not a header can be a ticket's text (a name, a phone number): it is then counted,
    not quoted, since a detector that misses a piece of personal data would print it."""
    names = [repr(c) for c in missing]
    absent = f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else names[0]
    fix = f"pass a --csv-mapping naming your columns (keys {', '.join(_COLUMN_KEYS)})"
    other = _other_delimiter(header, delimiter)
    if other is not None:
        cells, at = other
        shown = _shown(cells) if all(_column_like(c) for c in cells) else "not shown"
        return UserError(
            f"{path}:1: CSV header has no column {absent}: the first row is {len(header)} "
            f"cell(s) split at {delimiter!r} but {len(cells)} split at {at!r} ({shown}); "
            f"set {_delimiter_json(at)} in the --csv-mapping (or {fix})"
        )
    if all(_column_like(c) for c in header):
        return UserError(f"{path}:1: CSV header has no column {absent} ({_shown(header)}); {fix}")
    return UserError(
        f"{path}:1: CSV header has no column {absent}: the first row does not look like a "
        f"header ({len(header)} cells split at {delimiter!r}, not shown as they may hold a "
        f"customer's words); put the header row first or {fix}"
    )


_OTHER_DELIMITERS = (";", "\t", ",", "|")


def _other_delimiter(header: list[str], delimiter: str) -> tuple[list[str], str] | None:
    """The header's cells and the delimiter, of the first other one that splits a header read
    as one cell into two or more (a `;` or tab separated export read at `,`)."""
    if len(header) != 1:
        return None
    for other in _OTHER_DELIMITERS:
        if other != delimiter and other in header[0]:
            try:
                cells = next(csv.reader([header[0]], delimiter=other), [])
            except csv.Error:
                continue
            if len(cells) >= 2:
                return cells, other
    return None


def _delimiter_json(delimiter: str) -> str:
    """The mapping's key as it is written in JSON: `"delimiter": ";"`, `"delimiter": "\\t"`."""
    return '"delimiter": ' + json.dumps(delimiter)


def _column_like(cell: str) -> bool:
    from casemill.mining.redact.detect import scan

    cell = cell.strip()
    return (
        _COLUMN_NAME.fullmatch(cell) is not None
        and not _LONG_NUMBER.search(re.sub(r"[ .-]", "", cell))
        and not any(scan(cell))
    )


def _shown(header: list[str], most: int = 12) -> str:
    more = f", ... ({len(header) - most} more)" if len(header) > most else ""
    return "columns: " + ", ".join(header[:most]) + more
