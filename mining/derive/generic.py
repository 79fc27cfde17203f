"""Cases of a `generic:<name>` domain: logs of tools Casemill has no simulator for.

The environment is what the log's read tools returned, keyed by tool and by what was asked
(`{"records": {"user_details": {"mia_li_3668": {...}}}}`), plus the tools the log shows, each
with its kind (read or write, by the shared naming rule) and the parameter names seen. Expected
calls are the logged writes as they were made.
"""

from __future__ import annotations

from typing import Any

import orjson

from casemill.case.ids import canonical_json
from casemill.case.model import ExpectedCall
from mining.derive.common import is_read
from mining.model import LoggedCall, Message

SKIP_READS = ("think", "calculate")
VERBS = ("get_", "find_", "list_", "search_")


def collection(tool: str) -> str:
    for verb in VERBS:
        if tool.startswith(verb):
            return tool[len(verb) :] or tool
    return tool


def record_key(arguments: dict[str, Any]) -> str:
    values = [v for v in arguments.values() if isinstance(v, str | int)]
    if len(arguments) == 1 and len(values) == 1:
        return str(values[0])
    return canonical_json(arguments) if arguments else "-"


def records(messages: list[Message], *, latest: bool) -> dict[str, dict[str, Any]]:
    """What read calls returned: the first answer to each question, or the latest one."""
    out: dict[str, dict[str, Any]] = {}
    for m in messages:
        for call in m.calls:
            if not is_read(call.tool) or call.tool.startswith(SKIP_READS) or call.error:
                continue
            if call.result is None:
                continue
            try:
                value: Any = orjson.loads(call.result)
            except orjson.JSONDecodeError:
                value = call.result
            bucket = out.setdefault(collection(call.tool), {})
            key = record_key(call.arguments)
            if latest or key not in bucket:
                bucket[key] = value
    return out


def observed_tools(messages: list[Message]) -> dict[str, dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = {}
    for m in messages:
        for call in m.calls:
            entry = tools.setdefault(
                call.tool, {"kind": "read" if is_read(call.tool) else "write", "params": []}
            )
            entry["params"] = sorted(set(entry["params"]) | set(call.arguments))
    return dict(sorted(tools.items()))


def observed_results(messages: list[Message]) -> list[Any]:
    """Tool results of a log that shows no calls, in order (parsed when JSON)."""
    out = []
    for m in messages:
        if m.role == "tool" and m.content.strip():
            try:
                out.append(orjson.loads(m.content))
            except orjson.JSONDecodeError:
                out.append(m.content)
    return out


def state(messages: list[Message], upto: int | None, all_messages: list[Message]) -> dict[str, Any]:
    seen = messages if upto is None else messages[:upto]
    if not any(m.calls for m in all_messages):
        return {"records": {"observed": observed_results(seen)}}
    return {
        "records": records(seen, latest=upto is not None),
        "tools": observed_tools(all_messages),
    }


def expected_call(call: LoggedCall) -> ExpectedCall:
    return ExpectedCall(tool=call.tool, params=dict(call.arguments))


def intents(calls: list[LoggedCall]) -> list[str]:
    return sorted({c.tool for c in calls})


def reads_needed(messages: list[Message]) -> int:
    seen = {
        (c.tool, canonical_json(c.arguments))
        for m in messages
        for c in m.calls
        if is_read(c.tool) and not c.tool.startswith(SKIP_READS) and not c.error
    }
    return len(seen)
