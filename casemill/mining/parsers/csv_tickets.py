"""CSV ticket exports, one message a row, with a configurable column mapping.

The default mapping reads columns `ticket_id`, `role`, `message`, and when the header has them
`status`, `tool_name`, `tool_arguments`, `tool_call_id` (a column a mapping names itself must be
in the header). The rows of a ticket need not be contiguous (an export sorted by time
interleaves tickets), but must come within `WINDOW` lines of each other; a ticket is
resolved when its status column holds one of `resolved_values`. Statuses and roles are matched
whatever their case. A row the CSV reader cannot read (a quote out of place, a quoted cell never
closed), with more cells than the header (a delimiter in a cell not quoted) or with a line over
the size limit is quarantined, and so is its ticket and every ticket with a row on its lines (a
quoted cell never closed reads the next rows into its own). An export with one row per ticket
and the whole conversation in one column is read by setting `transcript` to that column
(role-prefixed, as the `transcript` format). A header that lacks a column the mapping needs is
a `UserError` saying what to do (`casemill.mining.parsers.csv_header`).

    {"conversation_id": "Ticket ID", "role": "Author type", "content": "Body",
     "role_values": {"end-user": "user", "agent": "assistant"}}
"""

from __future__ import annotations

import csv
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, field_validator

from casemill.errors import UserError
from casemill.mining.model import Conversation, Quarantined, RecordProblem
from casemill.mining.parsers.csv_header import check_header
from casemill.mining.parsers.messages import ROLES, build_conversation
from casemill.mining.parsers.transcript import TranscriptBuilder
from casemill.mining.reading import MAX_LINE_BYTES, Progress, iter_lines

WINDOW = 2000  # lines: a ticket none of whose rows came in as many is finished


class CsvMapping(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    conversation_id: str = "ticket_id"
    role: str = "role"
    content: str = "message"
    resolved: str | None = "status"
    resolved_values: tuple[str, ...] = ("resolved", "solved", "closed", "true", "yes", "1")
    role_values: dict[str, str] = {
        "customer": "user",
        "end-user": "user",
        "requester": "user",
        "user": "user",
        "agent": "assistant",
        "assistant": "assistant",
        "bot": "assistant",
        "system": "system",
        "tool": "tool",
    }
    tool_name: str | None = "tool_name"
    tool_arguments: str | None = "tool_arguments"
    tool_call_id: str | None = "tool_call_id"
    transcript: str | None = None
    delimiter: str = ","

    @field_validator("resolved_values")
    @classmethod
    def _lower_values(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        # a status and a role are matched in lower case: so are the words that name them
        return tuple(v.strip().lower() for v in values)

    @field_validator("role_values")
    @classmethod
    def _lower_roles(cls, values: dict[str, str]) -> dict[str, str]:
        unknown = sorted({v for v in values.values() if v.lower() not in ROLES})
        if unknown:
            raise ValueError(
                f"role_values maps to {unknown[0]!r}; map to user, assistant, tool or system"
            )
        return {k.strip().lower(): v.lower() for k, v in values.items()}

    @field_validator("delimiter")
    @classmethod
    def _one_character(cls, value: str) -> str:
        if len(value) != 1:
            raise ValueError(f'the delimiter is one character ("\\t" for a tab), not {value!r}')
        return value


class _Source:
    """The file's lines for the CSV reader. A line over the size limit is given as an empty
    line (its cut-off start would unbalance the quoting) and its number noted in `too_long`;
    `lines` keeps the lines read since it was last cleared (those of a row: no more than the
    reader's field size limit)."""

    def __init__(self, path: Path, progress: Progress | None):
        self.path, self.progress = path, progress
        self.too_long: list[int] = []
        self.lines: list[str] = []

    def __iter__(self) -> Iterator[str]:
        for raw in iter_lines(self.path, self.progress):
            if raw.too_long:
                self.too_long.append(raw.number)
                text = "\n"
            else:
                text = raw.data.decode("utf-8", errors="surrogateescape") + "\n"
            self.lines.append(text)
            yield text


def _bad_utf8(row: dict[str, str]) -> bool:
    return any(any("\udc80" <= ch <= "\udcff" for ch in v) for v in row.values() if v)


def parse(
    path: Path,
    *,
    max_turns: int,
    progress: Progress | None = None,
    csv_mapping: CsvMapping | None = None,
    window: int = WINDOW,
    **_: Any,
) -> Iterator[Conversation | Quarantined]:
    """The file's tickets, each a conversation or a quarantined record, ended by the window or
    at the end of the file; a header without the columns the mapping needs is a `UserError`."""
    mapping = csv_mapping or CsvMapping()
    csv.field_size_limit(max(csv.field_size_limit(), MAX_LINE_BYTES))  # a long cell is no error
    source = _Source(path, progress)
    reader = csv.reader(source, delimiter=mapping.delimiter, strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise UserError(f"{path}:1: the CSV header cannot be read ({exc})") from None
    if header is None:
        return
    header[0] = header[0].lstrip("\ufeff")
    check_header(path, header, mapping)
    tickets = _Tickets(path, mapping, max_turns, window)
    for item in _rows(path, reader, source, header, mapping):
        if isinstance(item, _Unreadable):
            tickets.unreadable(item.record.line or 0, item.record.conversation_id, item.lost)
            yield item.record
            continue
        number, record = item
        yield from tickets.row(number, record, record.get(mapping.conversation_id, ""))
    yield from tickets.flush()


class _Unreadable(NamedTuple):
    record: Quarantined
    lost: dict[str, int]  # the tickets whose id starts a later line of the row: id -> that line


def _rows(
    path: Path, reader: Any, source: _Source, header: list[str], mapping: CsvMapping
) -> Iterator[tuple[int, dict[str, str]] | _Unreadable]:
    """Each non-empty row as `(line it starts on, {column: cell})`; a row the CSV reader
    cannot read (a quote out of place, a quoted cell never closed), with more cells than the
    header has columns, or that holds a line over the size limit comes back as `_Unreadable`: a
    `Quarantined` record at its first line, with its ticket's id when the start of that line
    shows it, and the ids its later lines start with (a quoted cell never closed reads the rows
    that follow into its own, up to the quote the reader stops at)."""
    key_at = header.index(mapping.conversation_id)
    start = reader.line_num + 1  # the line a row starts on (a quoted cell can span lines)
    while True:
        source.lines = []
        try:
            row, problem = next(reader), None
        except StopIteration:
            return
        except csv.Error as exc:
            row, problem = [], str(exc)
        number, start = start, reader.line_num + 1
        cut = [n for n in source.too_long if n <= reader.line_num]
        if any(cell.strip() for cell in row[len(header) :]):  # a delimiter in an unquoted cell
            problem = f"{len(row)} cells where the header has {len(header)} columns"
        if cut or problem is not None:
            del source.too_long[: len(cut)]
            keys = [_key(text, key_at, mapping.delimiter) for text in source.lines]
            key = keys[0] if keys else None
            lost: dict[str, int] = {}
            for i, other in enumerate(keys[1:], start=1):
                if other and other != key:
                    lost.setdefault(other, number + i)
            record = _unreadable(path, number, reader.line_num, problem, cut, key, bool(lost))
            yield _Unreadable(record, lost)
        elif any(row):
            yield number, dict(zip(header, row, strict=False))


def _key(line: str, key_at: int, delimiter: str) -> str | None:
    """The ticket id a line of a row the reader could not read starts with, read loosely."""
    try:
        cells = next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error:  # a carriage return alone in the line, say: no id to be read
        return None
    return cells[key_at] if key_at < len(cells) and cells[key_at] else None


def _unreadable(
    path: Path,
    line: int,
    last: int,
    problem: str | None,
    cut: list[int],
    key: str | None,
    others: bool,
) -> Quarantined:
    if cut:
        reason, message = "line_too_long", f"line {cut[0]} is over the 16 MiB limit"
    else:
        reason, message = "bad_row", f"not a readable CSV row ({problem})"
    span = f"line {line}" if last == line else f"lines {line} to {last}"
    tickets = "the tickets with a row on them" if others else "the ticket of the row with it"
    return Quarantined(
        file=str(path),
        line=line,
        reason=reason,
        message=f"{message}; {span} skipped, and {tickets}",
        conversation_id=key,
    )


class _Open:
    """A ticket whose rows are being read."""

    __slots__ = ("rows", "broken", "again", "last")

    def __init__(self, broken: str | None, again: int | None):
        self.rows: list[tuple[int, dict[str, str]]] = []
        self.broken = broken  # where a row of this ticket could not be read
        self.again = again  # where this ticket's id was first seen, when it was mined before
        self.last = 0  # the line its last row starts on


class _Tickets:
    """Gathers rows into tickets. A ticket's rows need not be contiguous (an export sorted by
    time interleaves tickets): a ticket is finished when none of its rows has been seen for
    `window` lines, or at the end of the file; an id that comes back after its ticket was
    finished is quarantined from there (`split_ticket`). Rows without an id are a ticket of the
    contiguous ones. The ticket of an unreadable row is quarantined whole (mined without the
    row, its conversation would miss a turn): the ticket whose id the row shows, or when it
    shows none, the tickets of the rows on both sides of it (the row may be the last of one or
    the first of the next), and every ticket whose id starts one of its later lines (a row of
    it read into the unreadable one)."""

    def __init__(self, path: Path, mapping: CsvMapping, max_turns: int, window: int = WINDOW):
        self.path, self.mapping, self.max_turns, self.window = path, mapping, max_turns, window
        self.open: OrderedDict[str, _Open] = OrderedDict()  # by their last row, oldest first
        self.last_key: str | None = None  # the ticket of the row before
        self.bad_keys: dict[str, str] = {}  # ticket id -> where a row of it could not be read
        self.unknown: str | None = None  # an unreadable row of no known ticket, just before
        # the line each ticket started on, by the hash of its id (an id that comes back after
        # its ticket was finished is a ticket split in two): compact, however long the export;
        # a collision of two ids' hashes is all but impossible
        self.started: dict[int, int] = {}

    def unreadable(self, line: int, key: str | None, lost: dict[str, int]) -> None:
        where = f"line {line}"
        if key is None:
            self.unknown = where
            before = self.open.get(self.last_key) if self.last_key is not None else None
            if before is not None and before.broken is None:
                before.broken = where
        else:
            self.bad_keys.setdefault(key, where)
        for other, at in lost.items():
            self.bad_keys.setdefault(other, f"line {at}, read into the unreadable row at {where}")
        for other in (key, *lost):
            ticket = self.open.get(other) if other is not None else None
            if ticket is not None and ticket.broken is None:
                ticket.broken = self.bad_keys[other]

    def row(self, number: int, record: dict[str, str], key: str):
        if self.last_key == "" and key != "" and "" in self.open:  # rows without an id: done
            yield self._finish("", self.open.pop(""))
        ticket = self.open.get(key)
        if ticket is None:
            first = self.started.setdefault(hash(key), number) if key else number
            broken = self.bad_keys.get(key) or self.unknown
            ticket = self.open[key] = _Open(broken, first if first != number else None)
        else:  # (an unreadable row of no known ticket just before may have been one of its)
            ticket.broken = ticket.broken or self.unknown
            self.open.move_to_end(key)
        self.unknown = None
        self.last_key = key
        ticket.rows.append((number, record))
        ticket.last = number
        while self.open:
            oldest, stale = next(iter(self.open.items()))
            if number - stale.last <= self.window:
                break
            del self.open[oldest]
            yield self._finish(oldest, stale)

    def flush(self) -> Iterator[Conversation | Quarantined]:
        """The tickets still open, at the end of the file, in the order they started."""
        for key, ticket in sorted(self.open.items(), key=lambda kv: kv[1].rows[0][0]):
            yield self._finish(key, ticket)
        self.open.clear()

    def _finish(self, key: str, ticket: _Open) -> Conversation | Quarantined:
        if ticket.broken is not None:
            return self._skipped(
                ticket,
                "bad_row",
                f"a row of this ticket ({ticket.broken}) could not be read; the ticket is skipped",
            )
        if ticket.again is not None:
            return self._skipped(
                ticket,
                "split_ticket",
                f"this ticket's id was first seen on line {ticket.again}, and none of its rows "
                f"came in the {self.window} lines before this one: its rows from here are skipped "
                "(those before were mined as the ticket, without them); keep a ticket's rows "
                f"within {self.window} lines of each other: sort the file by ticket id "
                f"(column {self.mapping.conversation_id!r}) or by time",
                field=self.mapping.conversation_id,
            )
        return _ticket(self.path, ticket.rows, self.mapping, self.max_turns)

    def _skipped(
        self, ticket: _Open, reason: str, message: str, field: str | None = None
    ) -> Quarantined:
        """The record of a ticket skipped for `reason`, at its first row."""
        line, first = ticket.rows[0]
        return Quarantined(
            file=str(self.path),
            line=line,
            reason=reason,
            message=message,
            field=field,
            conversation_id=first.get(self.mapping.conversation_id) or None,
        )


def _ticket(
    path: Path, rows: list[tuple[int, dict[str, str]]], mapping: CsvMapping, max_turns: int
) -> Conversation | Quarantined:
    line, first = rows[0]
    conv_id = first.get(mapping.conversation_id) or f"{path.stem}:{line}"
    for number, row in rows:
        if _bad_utf8(row):
            return Quarantined(
                file=str(path),
                line=number,
                reason="invalid_utf8",
                message="invalid UTF-8 in this row; the ticket is skipped",
                conversation_id=conv_id,
            )
    status = (rows[-1][1].get(mapping.resolved) or "").strip().lower() if mapping.resolved else ""
    resolved = (status in mapping.resolved_values) if status else None
    try:
        if mapping.transcript:
            builder = TranscriptBuilder(max_turns)
            for part in (first.get(mapping.transcript) or "").split("\n"):
                builder.line(part)
            conv = builder.conversation(conv_id, str(path), line, resolved)
            conv.format = "csv"
            return conv
        messages = [_message(row, number, mapping) for number, row in rows]
        return build_conversation(
            messages,
            conversation_id=conv_id,
            file=str(path),
            line=line,
            fmt="csv",
            resolved=resolved,
            max_turns=max_turns,
        )
    except RecordProblem as p:
        index = (
            int(p.field.split("]")[0].split("[")[1])
            if p.field and p.field.startswith("messages[")
            else 0
        )
        at = rows[min(index, len(rows) - 1)][0]
        return Quarantined(
            file=str(path),
            line=at,
            reason=p.reason,
            message=p.message,
            field=_column(p.field, mapping),
            conversation_id=conv_id,
        )


def _column(field: str | None, mapping: CsvMapping) -> str | None:
    if field is None:
        return None
    if field.endswith(".role"):
        return mapping.role
    if "arguments" in field:
        return mapping.tool_arguments
    if "tool_call_id" in field:
        return mapping.tool_call_id
    if field == "transcript":
        return mapping.transcript
    return field


def _message(row: dict[str, str], number: int, mapping: CsvMapping) -> dict[str, Any]:
    raw_role = (row.get(mapping.role) or "").strip()
    role = mapping.role_values.get(raw_role.lower(), raw_role)
    content = row.get(mapping.content) or ""
    name = (row.get(mapping.tool_name) or "").strip() if mapping.tool_name else ""
    call_id = (row.get(mapping.tool_call_id) or "").strip() if mapping.tool_call_id else ""
    if role == "assistant" and name:
        args = row.get(mapping.tool_arguments) if mapping.tool_arguments else None
        return {
            "role": "assistant",
            "content": content,
            "tool_calls": [
                {
                    "id": call_id or f"row{number}",
                    "function": {"name": name, "arguments": args or "{}"},
                }
            ],
        }
    if role == "tool":
        return {
            "role": "tool",
            "content": content,
            "tool_call_id": call_id or None,
            "name": name or None,
        }
    return {"role": role, "content": content}
