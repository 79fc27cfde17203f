"""Log parsers, one a format. Each is `parse(path, *, max_turns, progress, **options)` yielding
`Conversation`s and `Quarantined` records in file order, in constant memory.

The records of some formats may go on from one file into the next (`spans_files`): OTel
traces, conversations of model calls. Their parser takes what it carries across the files of a
run (`carried`) by keyword, and what is still open after the last file is mined then
(`finish_carried`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from casemill.errors import UserError
from casemill.mining.model import Conversation, Quarantined

Parser = Callable[..., Iterator[Conversation | Quarantined]]

FORMATS: tuple[str, ...] = ("openai-jsonl", "transcript", "csv", "otel")


def get_parser(fmt: str) -> Parser:
    if fmt == "openai-jsonl":
        from casemill.mining.parsers.openai_jsonl import parse
    elif fmt == "transcript":
        from casemill.mining.parsers.transcript import parse
    elif fmt == "csv":
        from casemill.mining.parsers.csv_tickets import parse
    elif fmt == "otel":
        from casemill.mining.parsers.otel import parse
    else:
        raise UserError(f"unknown log format {fmt!r}; known: {', '.join(FORMATS)}")
    return parse


def carried(fmt: str) -> dict[str, Any]:
    """What the parser of `fmt` carries from one file of a run to the next, by keyword: the
    OTel traces (`carry`) or the conversations of model calls (`calls`) still open; nothing
    for the formats whose records end in their file."""
    if fmt == "otel":
        from casemill.mining.parsers.otel import Carry

        return {"carry": Carry()}
    if fmt == "openai-jsonl":
        from casemill.mining.parsers.model_calls import CallJoiner

        return {"calls": CallJoiner()}
    return {}


def finish_carried(state: dict[str, Any], max_turns: int) -> Iterator[Conversation | Quarantined]:
    """What `state` (`carried`) holds open after the run's last file."""
    if "carry" in state:
        yield from state["carry"].finish(max_turns)
    if "calls" in state:
        from casemill.mining.parsers.openai_jsonl import finish

        yield from finish(state["calls"], max_turns)


def spans_files(paths: Iterable[Path], fmt: str) -> bool:
    """Whether a trace or a conversation of these files may go on from one file into the next
    (a rotated file splits it): OTel spans, and logs of model calls (told by their first
    records, `holds_calls`)."""
    if fmt == "otel":
        return True
    if fmt == "openai-jsonl":
        from casemill.mining.parsers.model_calls import holds_calls

        return any(map(holds_calls, paths))
    return False


__all__ = ["FORMATS", "Parser", "carried", "finish_carried", "get_parser", "spans_files"]
