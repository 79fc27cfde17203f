"""CSV ticket exports, one message a row, with a configurable column mapping.

The default mapping reads columns `ticket_id`, `role`, `message`, `status`, and optionally
`tool_name`, `tool_arguments`, `tool_call_id`. Rows of one ticket must be contiguous (sort the
export by ticket); a ticket is resolved when its status column holds one of `resolved_values`.
An export with one row per ticket and the whole conversation in one column is read by setting
`transcript` to that column (role-prefixed, as the `transcript` format).

    {"conversation_id": "Ticket ID", "role": "Author type", "content": "Body",
     "role_values": {"end-user": "user", "agent": "assistant"}}
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from casemill.errors import UserError
from mining.model import Conversation, Quarantined, RecordProblem
from mining.parsers.messages import build_conversation
from mining.parsers.transcript import TranscriptBuilder
from mining.reading import Progress, iter_lines


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


def _lines(path: Path, progress: Progress | None) -> Iterator[str]:
    for raw in iter_lines(path, progress):
        yield raw.data.decode("utf-8", errors="surrogateescape") + "\n"


def _shown(header: list[str], most: int = 12, width: int = 40) -> str:
    """The header's columns for a message, a few and each cut short (the first line of a file
    that is not CSV can be a whole JSON record)."""
    names = [c if len(c) <= width else c[: width - 3] + "..." for c in header[:most]]
    more = f", ... ({len(header) - most} more)" if len(header) > most else ""
    return ", ".join(names) + more


def _bad_utf8(row: dict[str, str]) -> bool:
    return any(any("\udc80" <= ch <= "\udcff" for ch in v) for v in row.values() if v)


def parse(
    path: Path,
    *,
    max_turns: int,
    progress: Progress | None = None,
    csv_mapping: CsvMapping | None = None,
    **_: Any,
) -> Iterator[Conversation | Quarantined]:
    mapping = csv_mapping or CsvMapping()
    reader = csv.reader(_lines(path, progress), delimiter=mapping.delimiter)
    header = next(reader, None)
    if header is None:
        return
    header[0] = header[0].lstrip("\ufeff")
    needed = [mapping.conversation_id] + (
        [mapping.transcript] if mapping.transcript else [mapping.role, mapping.content]
    )
    missing = [c for c in needed if c not in header]
    if missing:
        raise UserError(
            f"{path}:1: CSV header has no column {missing[0]!r} (columns: "
            f"{_shown(header)}); pass a --csv-mapping naming your columns"
        )
    ticket: list[tuple[int, dict[str, str]]] = []
    current = None
    start = reader.line_num + 1  # the line a row starts on (a quoted cell can span lines)
    for row in reader:
        number, start = start, reader.line_num + 1
        if not any(row):
            continue
        record = dict(zip(header, row, strict=False))
        key = record.get(mapping.conversation_id, "")
        if ticket and key != current:
            yield _ticket(path, ticket, mapping, max_turns)
            ticket = []
        current = key
        ticket.append((number, record))
    if ticket:
        yield _ticket(path, ticket, mapping, max_turns)


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
