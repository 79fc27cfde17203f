"""Turning OpenAI-style chat messages into a `Conversation`, shared by the JSONL, CSV and
OpenTelemetry parsers.

Roles map to Casemill's (`user` -> customer, `developer` -> system). Tool results are linked to
their call by `tool_call_id` (legacy `function` messages by name, to the latest unanswered call).
Two other shapes of the same messages are read: Anthropic's content blocks (an assistant's
`tool_use` blocks are its calls, a user's `tool_result` blocks the results, each a tool message
before the user's own words) and the OpenAI Responses API's items (`function_call`,
`function_call_output`; `reasoning` items are skipped).
A message with an unknown role, a tool result with no call before it, or arguments that are not
a JSON object raise `RecordProblem` naming the message's field. Past `max_turns` messages the
rest is counted, not kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import orjson

from casemill.io.limits import record_problem
from casemill.mining.model import Conversation, LoggedCall, Message, RecordProblem, is_error_result

if TYPE_CHECKING:
    from casemill.mining.toolspec import ToolSpecs

ROLES = {
    "user": "customer",
    "customer": "customer",
    "human": "customer",
    "assistant": "assistant",
    "agent": "assistant",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
    "system": "system",
    "developer": "system",
}

# Anthropic's blocks that are no text: calls, results, and the model's thinking (not said)
BLOCK_TYPES = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
CALL_ITEM, OUTPUT_ITEM = "function_call", "function_call_output"  # the Responses API's
SKIPPED_ITEMS = frozenset({"reasoning"})
# where a call is logged, for a problem's field: the message's index `i`, the call's `j`
TOOL_CALL_AT, BLOCK_AT, ITEM_AT = (
    "messages[{i}].tool_calls[{j}]",
    "messages[{i}].content[{j}]",
    "messages[{i}]",
)
TRUE_WORDS = frozenset({"true", "yes", "1", "resolved", "solved", "closed", "success", "done"})
FALSE_WORDS = frozenset({"false", "no", "0", "unresolved", "open", "failed", "failure", "pending"})


def as_text(value: Any) -> str:
    """Message content as text: strings as is, content-part lists joined, other JSON dumped."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, dict):
                text = part.get("text", part.get("content"))
                if isinstance(text, str):
                    parts.append(text)
                    continue
            parts.append(part if isinstance(part, str) else orjson.dumps(part).decode())
        return "\n".join(parts)
    return orjson.dumps(value).decode()


def as_resolved(value: Any) -> bool | None:
    """A resolution flag from the shapes logs use: booleans, words, a 0/1 reward."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value >= 1
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    return None


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict; `RecordProblem` (its field named by the caller) when they
    are not a JSON object."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise RecordProblem(
                "bad_tool_arguments", f"tool-call arguments are not JSON ({exc.msg})"
            ) from None
        problem = (
            record_problem(value, raw, orjson_parsed=True) if isinstance(value, dict) else None
        )
        if problem is not None:
            raise RecordProblem("bad_tool_arguments", f"tool-call arguments: {problem[1]}")
        if isinstance(value, dict):
            return value
    raise RecordProblem("bad_tool_arguments", "tool-call arguments must be a JSON object")


def _role(message: dict[str, Any], index: int) -> str:
    raw = message.get("role")
    role = ROLES.get(raw.lower()) if isinstance(raw, str) else None
    if role is None:
        shown = raw if isinstance(raw, str) and raw.isidentifier() and len(raw) <= 24 else "?"
        raise RecordProblem(
            "unknown_role",
            f"unknown role {shown!r}; expected one of system, user, assistant, tool",
            f"messages[{index}].role",
        )
    return role


class _Builder:
    def __init__(self, max_turns: int):
        self.max_turns = max_turns
        self.messages: list[Message] = []
        self.by_id: dict[str, LoggedCall] = {}
        self.unanswered: list[LoggedCall] = []
        self.total = 0

    def add(self, index: int, m: Any) -> None:
        self.total += 1
        if len(self.messages) >= self.max_turns:
            return
        if not isinstance(m, dict):
            said = "a message must be a JSON object"
            if isinstance(m, str):  # e.g. `Message(content=...)`: an SDK object logged by str()
                said += ", not text (a logger that wrote an SDK object with str() writes that)"
            raise RecordProblem("bad_message", said, f"messages[{index}]")
        raw = m.get("role")
        # the common case first: a role already in lower case (ROLES' keys all are)
        role = ROLES.get(raw) if type(raw) is str else None
        if role is None:
            if raw is None and m.get("type") in (CALL_ITEM, OUTPUT_ITEM, *SKIPPED_ITEMS):
                self._item(index, m)
                return
            role = _role(m, index)
        content = m.get("content")
        if type(content) is not str:
            if type(content) is list and any(
                isinstance(b, dict) and isinstance(b.get("type"), str) and b["type"] in BLOCK_TYPES
                for b in content
            ):
                self._blocks(index, role, content)
                return
            content = as_text(content)
        if role == "assistant":
            self.messages.append(Message("assistant", content, self._calls(index, m)))
        elif role == "tool":
            self.messages.append(self._result(index, m, content))
        else:
            self.messages.append(Message(role, content))

    def _item(self, index: int, m: dict[str, Any]) -> None:
        """A Responses API item: a call, its output, or one skipped (reasoning)."""
        kind = m["type"]
        if kind == CALL_ITEM:
            call = self._call(m.get("call_id") or m.get("id"), m, index, 0, ITEM_AT)
            self.messages.append(Message("assistant", "", [call]))
        elif kind == OUTPUT_ITEM:
            output = m.get("output")
            content = output if type(output) is str else as_text(output)
            tool = {"tool_call_id": m.get("call_id")}
            self.messages.append(self._result(index, tool, content, f"messages[{index}].call_id"))
        else:
            self.total -= 1  # not a message

    def _blocks(self, index: int, role: str, blocks: list[Any]) -> None:
        """Anthropic's content blocks: `tool_use` ones are the assistant's calls, `tool_result`
        ones the results (each a tool message, before the rest of the message's words; each
        counted as a message, kept within `max_turns`); thinking is left out."""
        texts, calls, said = [], [], 0
        for j, block in enumerate(blocks):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind in ("thinking", "redacted_thinking"):
                continue
            if kind == "tool_use":
                if role != "assistant":
                    where = BLOCK_AT.format(i=index, j=j)
                    raise RecordProblem("bad_message", "a tool_use block of no assistant", where)
                use = {"name": block.get("name"), "arguments": block.get("input")}
                calls.append(self._call(block.get("id"), use, index, j, BLOCK_AT, args="input"))
            elif kind == "tool_result":
                tool = {"tool_call_id": block.get("tool_use_id")}
                content = as_text(block.get("content"))
                where = BLOCK_AT.format(i=index, j=j) + ".tool_use_id"
                result = self._result(index, tool, content, where)
                if block.get("is_error") is True:
                    self.by_id[result.call_id or ""].error = True
                said += 1
                if len(self.messages) < self.max_turns:
                    self.messages.append(result)
            else:
                texts.append(block)
        text = as_text(texts) if texts else ""
        if role == "assistant" or text or not said:
            said += 1
            if len(self.messages) < self.max_turns:
                self.messages.append(Message(role, text, calls))  # type: ignore[arg-type]
        self.total += said - 1  # (`add` counted the one message it was given)

    def _call(
        self,
        call_id: Any,
        fn: dict[str, Any],
        index: int,
        j: int,
        place: str,
        fields: str = "",
        args: str = "arguments",
    ) -> LoggedCall:
        """A logged call of `fn` (its `name` and `arguments`). `place`, a format of the message's
        index `i` and the call's `j`, and the fields' prefix `fields` name it in a problem
        (formatted only then); `args` names its arguments' field."""
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            where = place.format(i=index, j=j)
            raise RecordProblem("bad_message", f"a tool call needs {fields}name", where)
        try:
            arguments = parse_arguments(fn.get("arguments"))
        except RecordProblem as problem:
            problem.field = f"{place.format(i=index, j=j)}.{fields}{args}"
            raise
        call = LoggedCall(str(call_id or f"call_{index}_{j}"), name, arguments)
        self.by_id[call.id] = call
        self.unanswered.append(call)
        return call

    def _calls(self, index: int, m: dict[str, Any]) -> list[LoggedCall]:
        calls = []
        raw_calls = m.get("tool_calls") or []
        if type(raw_calls) is not list:
            raise RecordProblem(
                "bad_message", "tool_calls must be a list", f"messages[{index}].tool_calls"
            )
        if m.get("function_call"):
            raw_calls = [*raw_calls, {"function": m["function_call"], "id": None}]
        for j, tc in enumerate(raw_calls):
            fn = tc.get("function") if isinstance(tc, dict) else None
            if not isinstance(fn, dict):
                where = TOOL_CALL_AT.format(i=index, j=j)
                raise RecordProblem("bad_message", "a tool call needs function.name", where)
            calls.append(self._call(tc.get("id"), fn, index, j, TOOL_CALL_AT, "function."))
        return calls

    def _result(
        self, index: int, m: dict[str, Any], content: str, where: str | None = None
    ) -> Message:
        call_id = m.get("tool_call_id")
        call = self.by_id.get(str(call_id)) if call_id is not None else None
        if call is None and call_id is None and m.get("name"):
            call = next((c for c in reversed(self.unanswered) if c.tool == m["name"]), None)
        if call is None:
            raise RecordProblem(
                "orphan_tool_result",
                "a tool result whose call does not appear before it",
                where or f"messages[{index}].tool_call_id",
            )
        call.result = content
        call.error = is_error_result(content)
        if call in self.unanswered:
            self.unanswered.remove(call)
        return Message("tool", content, call_id=call.id)


def build_conversation(
    messages: Iterable[Any],
    *,
    conversation_id: str,
    file: str,
    line: int,
    fmt: str,
    resolved: bool | None,
    max_turns: int,
    tools: ToolSpecs | None = None,
) -> Conversation:
    builder = _Builder(max_turns)
    for index, m in enumerate(messages):
        builder.add(index, m)
    return Conversation(
        id=conversation_id,
        messages=builder.messages,
        file=file,
        line=line,
        format=fmt,
        resolved=resolved,
        calls_visible=True,
        total_messages=builder.total,
        capped=builder.total > len(builder.messages),
        tools=tools,
    )
