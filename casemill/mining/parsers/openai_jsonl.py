"""OpenAI chat-format JSONL: one conversation a line.

    {"conversation_id": "...", "resolved": true, "messages": [{"role": "user", ...}, ...]}

Messages in Anthropic's content-block shape or as OpenAI Responses API items are read too
(`casemill.mining.parsers.messages`).

The id may also be called `id`, `session_id` or `thread_id` (else `<file stem>:<line>`); the
resolution flag `resolved`, `resolution`, `success` or `reward` (1 = resolved). Either may sit in
a `metadata` object instead (as logging tools and OpenAI's stored completions keep them), the
line's own keys first. An optional
`tools` list, in OpenAI's format as in its fine-tuning chat format, gives the specs of the
agent's tools (see `casemill.mining.toolspec`); a line whose `tools` is not such a list is quarantined.
Everything else on the line is ignored.

A line that logs one model call (a `response` beside the request's `messages`, or in a
`request` object), as gateways and call loggers write them, is joined with the other calls of
its conversation (`casemill.mining.parsers.model_calls`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from casemill.mining.model import Conversation, Quarantined, RecordProblem
from casemill.mining.parsers.messages import as_resolved, build_conversation
from casemill.mining.parsers.model_calls import Call, CallJoiner, Joined, call_of, shared_id
from casemill.mining.reading import Progress, iter_lines, json_objects
from casemill.mining.toolspec import SpecCache, ToolSpecError, ToolSpecs

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
    path: Path,
    *,
    max_turns: int,
    progress: Progress | None = None,
    calls: CallJoiner | None = None,
    **_: Any,
) -> Iterator[Conversation | Quarantined]:
    """The file's conversations. Model-call lines are joined by `calls`, shared by the files
    of a run (`finish` hands on the conversations still open after the last), else by a
    joiner of the file's own."""
    specs, own = SpecCache(), calls is None
    calls = CallJoiner() if calls is None else calls
    calls.begin(str(path))
    for item in json_objects(str(path), iter_lines(path, progress)):
        if isinstance(item, Quarantined):
            yield item
            continue
        number, record = item
        call = call_of(record)
        if call is None:
            conv_id, resolved = record_id(record, path, number), record_resolved(record)
            yield from _one(record, path, number, max_turns, specs, conv_id, resolved)
            continue
        for joined in calls.add(number, record, call):
            yield from _joined(joined, max_turns, specs)
    if own:
        yield from finish(calls, max_turns, specs)


def finish(
    calls: CallJoiner, max_turns: int, specs: SpecCache | None = None
) -> Iterator[Conversation | Quarantined]:
    """The conversations of model calls still open at the end of the run's files."""
    specs = SpecCache() if specs is None else specs
    for joined in calls.finish():
        yield from _joined(joined, max_turns, specs)


def _joined(joined: Joined, max_turns: int, specs: SpecCache):
    """A conversation of model-call lines: its messages are its last call's history and answer
    (a problem is reported at that line, named by the line's field), its id the one all its
    calls share (LiteLLM's `trace_id` holds its session id) or else its first call's, its place
    its first call's."""
    call = joined.call
    record = {**call.request, "messages": joined.messages}
    tools_at = f"{call.request_at}tools"
    if "tools" not in call.request and isinstance(
        params := joined.last.get("model_parameters"), dict
    ):
        record["tools"], tools_at = params.get("tools"), "model_parameters.tools"  # LiteLLM's
    first = Path(joined.first_file)
    conv_id = shared_id(joined) or record_id(joined.first, first, joined.first_line)
    resolved = record_resolved(joined.last)
    for got in _one(record, first, joined.first_line, max_turns, specs, conv_id, resolved):
        if isinstance(got, Quarantined):
            field = tools_at if got.field == "tools" else _call_field(got.field, call)
            where = {"file": joined.last_file, "line": joined.last_line, "field": field}
            # the personal data of both lines, to scrub the id (the first's) with
            got = got.model_copy(update=where).with_record([joined.first, joined.last])
        yield got


def _call_field(where: str | None, call: Call) -> str | None:
    """`messages[i]...` of the joined messages as the last call's line names it: its request's
    messages, then its response's message (or output items)."""
    if not where or not where.startswith("messages["):
        return where
    index, _, rest = where[len("messages[") :].partition("]")
    held = len(call.request["messages"])
    if not index.isdigit() or int(index) < held:
        return f"{call.request_at}{where}"
    response, at = call.response, call.response_at
    if isinstance(response, dict) and isinstance(response.get("choices"), list):
        return f"{at}.choices[0].message{rest}"
    if isinstance(response, dict) and isinstance(response.get("output"), list):
        return f"{at}.output[{int(index) - held}]{rest}"
    return f"{at}{rest}"


def _one(
    record: dict[str, Any],
    path: Path,
    line: int,
    max_turns: int,
    specs: SpecCache,
    conv_id: str,
    resolved: bool | None,
):
    """The conversation of `record`'s messages, named `conv_id`, or the record quarantined."""
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
            resolved=resolved,
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
