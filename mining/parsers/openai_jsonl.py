"""OpenAI chat-format JSONL: one conversation a line.

    {"conversation_id": "...", "resolved": true, "messages": [{"role": "user", ...}, ...]}

Messages in Anthropic's content-block shape or as OpenAI Responses API items are read too
(`mining.parsers.messages`).

The id may also be called `id`, `session_id` or `thread_id` (else `<file stem>:<line>`); the
resolution flag `resolved`, `resolution`, `success` or `reward` (1 = resolved). Either may sit in
a `metadata` object instead (as logging tools and OpenAI's stored completions keep them), the
line's own keys first. An optional
`tools` list, in OpenAI's format as in its fine-tuning chat format, gives the specs of the
agent's tools (see `mining.toolspec`); a line whose `tools` is not such a list is quarantined.
Everything else on the line is ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mining.model import Conversation, Quarantined, RecordProblem
from mining.parsers.messages import as_resolved, build_conversation
from mining.reading import Progress, iter_lines, json_objects
from mining.toolspec import SpecCache, ToolSpecError, ToolSpecs

ID_KEYS = ("conversation_id", "id", "session_id", "thread_id")
RESOLVED_KEYS = ("resolved", "resolution", "success", "reward")


def _places(record: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Where a line keeps its metadata: on the line, then in its `metadata` object."""
    meta = record.get("metadata")
    return (record, meta) if isinstance(meta, dict) else (record,)


def record_id(record: dict[str, Any], path: Path, line: int) -> str:
    for place in _places(record):
        for key in ID_KEYS:
            value = place.get(key)
            if isinstance(value, str | int) and str(value):
                return str(value)
    return f"{path.stem}:{line}"


def record_resolved(record: dict[str, Any]) -> bool | None:
    for place in _places(record):
        for key in RESOLVED_KEYS:
            if place.get(key) is not None:  # a null says nothing: the metadata's may
                return as_resolved(place[key])
    return None


def record_tools(record: dict[str, Any], cache: SpecCache) -> ToolSpecs | None:
    """The line's own tool specs (`tools`), if it carries a non-empty list."""
    value = record.get("tools")
    if value is None or value == []:
        return None
    try:
        return cache.parse(value)
    except ToolSpecError as exc:
        raise RecordProblem("bad_tools", str(exc), "tools") from None


def parse(
    path: Path, *, max_turns: int, progress: Progress | None = None, **_: Any
) -> Iterator[Conversation | Quarantined]:
    specs = SpecCache()
    for item in json_objects(str(path), iter_lines(path, progress)):
        if isinstance(item, Quarantined):
            yield item
            continue
        number, record = item
        yield from _one(record, path, number, max_turns, specs)


def _one(record: dict[str, Any], path: Path, line: int, max_turns: int, specs: SpecCache):
    conv_id = record_id(record, path, line)
    messages = record.get("messages")
    if not isinstance(messages, list):
        yield Quarantined(
            file=str(path),
            line=line,
            reason="missing_messages",
            message="no 'messages' list on this line",
            field="messages",
            conversation_id=conv_id,
        ).with_record(record)
        return
    try:
        yield build_conversation(
            messages,
            conversation_id=conv_id,
            file=str(path),
            line=line,
            fmt="openai-jsonl",
            resolved=record_resolved(record),
            max_turns=max_turns,
            tools=record_tools(record, specs),
        )
    except RecordProblem as problem:
        yield Quarantined(
            file=str(path),
            line=line,
            reason=problem.reason,
            message=problem.message,
            field=problem.field,
            conversation_id=conv_id,
        ).with_record(record)
