"""Log parsers, one a format. Each is `parse(path, *, max_turns, progress, **options)` yielding
`Conversation`s and `Quarantined` records in file order, in constant memory."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from casemill.errors import UserError
from mining.model import Conversation, Quarantined

Parser = Callable[..., Iterator[Conversation | Quarantined]]

FORMATS: tuple[str, ...] = ("openai-jsonl", "transcript", "csv", "otel")


def get_parser(fmt: str) -> Parser:
    if fmt == "openai-jsonl":
        from mining.parsers.openai_jsonl import parse
    elif fmt == "transcript":
        from mining.parsers.transcript import parse
    elif fmt == "csv":
        from mining.parsers.csv_tickets import parse
    elif fmt == "otel":
        from mining.parsers.otel import parse
    else:
        raise UserError(f"unknown log format {fmt!r}; known: {', '.join(FORMATS)}")
    return parse


__all__ = ["FORMATS", "Parser", "get_parser"]
