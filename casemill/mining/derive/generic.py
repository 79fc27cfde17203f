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
from casemill.case.model import DEFAULT_CUSTOMER_TURNS, ExpectedCall, until_stop
from casemill.domains.recorded import call_key, collection, record_key
from casemill.mining.derive.common import is_read
from casemill.mining.model import LoggedCall, Message

SKIP_READS = ("think", "calculate")


def records(
    messages: list[Message], *, latest: bool, answers: Answers | None = None
) -> dict[str, dict[str, Any]]:
    """What read calls returned: the first answer to each question, or the latest one."""
    answers = answers or Answers()
    out: dict[str, dict[str, Any]] = {}
    for m in messages:
        for call in m.calls:
            if not is_read(call.tool) or call.tool.startswith(SKIP_READS) or call.error:
                continue
            if call.result is None:
                continue
            name, key, value = answers(call)
            bucket = out.setdefault(name, {})
            if latest or key not in bucket:
                bucket[key] = value
    return out


class Answers:
    """(collection, record key, parsed result) of read calls, each worked out once: the drafts
    of one conversation share them (keyed by the call's `id()`, which the conversation keeps
    alive; the parsed values are shared, never changed). Also the tools the conversation shows,
    the same for all its drafts."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[str, str, Any]] = {}
        self._tools: dict[int, dict[str, dict[str, Any]]] = {}
        self._calls: dict[int, list[dict[str, Any]]] = {}

    def __call__(self, call: LoggedCall) -> tuple[str, str, Any]:
        found = self._seen.get(id(call))
        if found is None:
            try:
                value: Any = orjson.loads(call.result)
            except orjson.JSONDecodeError:
                value = call.result
            found = (collection(call.tool), record_key(call.arguments), value)
            self._seen[id(call)] = found
        return found

    def tools(self, messages: list[Message]) -> dict[str, dict[str, Any]]:
        if id(messages) not in self._tools:
            self._tools[id(messages)] = observed_tools(messages)
        return self._tools[id(messages)]

    def calls(self, messages: list[Message]) -> list[dict[str, Any]]:
        if id(messages) not in self._calls:
            self._calls[id(messages)] = recorded_calls(messages)
        return self._calls[id(messages)]


def recorded_calls(messages: list[Message]) -> list[dict[str, Any]]:
    """The conversation's calls that the records do not answer, with their results, for the
    recorded tools (`casemill.domains.recorded`): every write, every read that failed, and the
    `think`/`calculate` calls the records leave out. One
    entry a call (tool and arguments): a call logged more than once keeps its first success,
    else its first failure, so that it has one recorded result. `turn` is the message index."""
    out: dict[str, dict[str, Any]] = {}
    for index, m in enumerate(messages):
        for call in m.calls:
            if is_read(call.tool) and not call.error and not call.tool.startswith(SKIP_READS):
                continue  # the records answer it
            if call.result is None:
                continue
            key = call_key(call.tool, call.arguments)
            if key in out and (out[key]["ok"] or call.error):
                continue
            try:
                result: Any = orjson.loads(call.result)
            except orjson.JSONDecodeError:
                result = call.result
            out[key] = {
                "tool": call.tool,
                "params": call.arguments,
                "result": result,
                "ok": not call.error,
                "turn": index,
            }
    return list(out.values())


def customer(messages: list[Message], shown: list[Message]) -> dict[str, Any] | None:
    """The simulated customer of a conversation-level case whose conversation is `shown`: the
    customer turns of `messages` after the last of `shown`, to replay in order
    (`casemill.evaluation.customer`), up to the one that ends the conversation (`###STOP###`),
    and room for them all in the customer-turn maximum."""
    last = id(shown[-1]) if shown else None
    at = next((i for i, m in enumerate(messages) if id(m) == last), -1)
    script = until_stop(m.content for m in messages[at + 1 :] if m.role == "customer")
    if not script:
        return None
    turns = len(script) + 2
    return {"script": script, "max_turns": turns if turns > DEFAULT_CUSTOMER_TURNS else None}


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


def state(
    messages: list[Message],
    upto: int | None,
    all_messages: list[Message],
    answers: Answers | None = None,
) -> dict[str, Any]:
    seen = messages if upto is None else messages[:upto]
    if not any(m.calls for m in all_messages):
        return {"records": {"observed": observed_results(seen)}}
    answers = answers or Answers()
    return {
        "records": records(seen, latest=upto is not None, answers=answers),
        "tools": answers.tools(all_messages),
        "calls": answers.calls(all_messages),
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
