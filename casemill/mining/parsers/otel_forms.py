"""Messages of a model-call span in the forms other than the current GenAI conventions'
`gen_ai.input.messages` / `gen_ai.output.messages` attributes, read into those two attributes
(as lists of OpenAI-shaped messages) so the OTel parser treats every span alike:

- OpenLLMetry's (Traceloop's) indexed attributes: `gen_ai.prompt.N.role`, `.content`,
  `.tool_call_id`, `.tool_calls.J.id|name|arguments`, and `gen_ai.completion.N.*` the same way
  (plus `.function_call.name|arguments`); of several completions, the first is the reply;
- OpenInference's (Arize Phoenix's) indexed attributes: `llm.input_messages.N.message.role`,
  `.content` (or `.contents.J.message_content.text`), `.tool_call_id`,
  `.tool_calls.J.tool_call.id|function.name|function.arguments`, and `llm.output_messages.N.*`;
  a `TOOL` span (`tool.name`, `input.value`, `output.value`) as an `execute_tool` span;
- span events of the earlier GenAI conventions: `gen_ai.system.message`, `gen_ai.user.message`,
  `gen_ai.assistant.message`, `gen_ai.tool.message` and `gen_ai.choice`, their body in the
  `gen_ai.event.content` attribute (JSON) or in the event's own attributes (`content`,
  `tool_calls`, `id`, `message`, ...); and the oldest form, `gen_ai.content.prompt` /
  `gen_ai.content.completion` events holding `gen_ai.prompt` / `gen_ai.completion` as JSON.

A span without `gen_ai.conversation.id` takes its conversation's id from `session.id`
(OpenInference, Langfuse's `langfuse.session.id`) or OpenLLMetry's association properties
(`traceloop.association.properties.session_id` or `.conversation_id`).

Each message says where it comes from (`FROM`, `CALLS_FROM`), so a problem found later in it is
reported as the attribute or event that holds it.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import orjson

from casemill.mining.parsers.otel_values import attributes

FROM, CALLS_FROM = "casemill.from", "casemill.calls_from"
INPUT, OUTPUT = "gen_ai.input.messages", "gen_ai.output.messages"
INDEXED_PREFIXES = ("gen_ai.prompt.", "gen_ai.completion.")
INDEXED = re.compile(r"gen_ai\.(prompt|completion)\.(\d+)\.(.+)")
CALL_PART = re.compile(r"tool_calls\.(\d+)\.(id|name|arguments)")
EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE, OLD_PROMPT, OLD_COMPLETION = (
    "gen_ai.choice",
    "gen_ai.content.prompt",
    "gen_ai.content.completion",
)


class _Form(NamedTuple):
    """A form of indexed message attributes: `<prefix>.<side>.<n>.<field>`."""

    prefixes: tuple[str, ...]
    key: re.Pattern[str]  # groups: the side, the message's index, the field
    input_side: str
    where: str  # a message's attribute prefix, from `side` and `n`
    call: re.Pattern[str]  # a tool call's field: groups the call's index and id|name|arguments
    call_where: str  # a tool call's attribute prefix (before `.arguments`), from `where`, `j`


OPENLLMETRY = _Form(
    INDEXED_PREFIXES, INDEXED, "prompt", "gen_ai.{side}.{n}", CALL_PART, "{where}.tool_calls.{j}"
)
OPENINFERENCE = _Form(
    ("llm.input_messages.", "llm.output_messages."),
    re.compile(r"llm\.(input|output)_messages\.(\d+)\.message\.(.+)"),
    "input",
    "llm.{side}_messages.{n}.message",
    re.compile(r"tool_calls\.(\d+)\.tool_call\.(?:function\.)?(id|name|arguments)"),
    "{where}.tool_calls.{j}.tool_call.function",
)
# a conversation's id where the GenAI conventions' gen_ai.conversation.id is not set: OpenInference's
# and Langfuse's session, OpenLLMetry's association properties
SESSION_KEYS = (
    "session.id",
    "langfuse.session.id",
    "traceloop.association.properties.session_id",
    "traceloop.association.properties.conversation_id",
)
PART_TEXT = re.compile(r"contents\.(\d+)\.message_content\.text")
ALL_PREFIXES = OPENLLMETRY.prefixes + OPENINFERENCE.prefixes


def fill_messages(attrs: dict[str, Any], events: Any) -> None:
    """Put the span's messages held in another form into `attrs[INPUT]` / `attrs[OUTPUT]` (when
    the span holds neither), and name the operation `chat` when the span does not; an
    OpenInference tool span becomes an `execute_tool` one."""
    if "gen_ai.conversation.id" not in attrs:
        session = next((attrs[k] for k in SESSION_KEYS if attrs.get(k)), None)
        if session is not None:
            attrs["gen_ai.conversation.id"] = session
    if INPUT in attrs or OUTPUT in attrs:
        return
    if attrs.get("openinference.span.kind") == "TOOL" and attrs.get("tool.name"):
        _tool_span(attrs)
        return
    for form in (OPENLLMETRY, OPENINFERENCE):
        inputs, outputs = _indexed(attrs, form)
        if inputs or outputs:  # read: the span keeps them once (Trace.add strips INPUT, OUTPUT)
            for key in [k for k in attrs if k.startswith(form.prefixes)]:
                del attrs[key]
            break
    else:
        if not isinstance(events, list) or not events:
            return
        inputs, outputs = _from_events(events)
    if not inputs and not outputs:
        return
    attrs[INPUT], attrs[OUTPUT] = inputs, outputs
    attrs.setdefault("gen_ai.operation.name", "chat")


def _tool_span(attrs: dict[str, Any]) -> None:
    """An OpenInference tool span (`tool.name`, `input.value`, `output.value`) as the GenAI
    conventions' `execute_tool` span, without a call id."""
    attrs.setdefault("gen_ai.operation.name", "execute_tool")
    attrs["gen_ai.tool.name"] = attrs["tool.name"]
    if "input.value" in attrs:
        attrs["gen_ai.tool.call.arguments"] = attrs["input.value"]
    if "output.value" in attrs:
        attrs["gen_ai.tool.call.result"] = attrs["output.value"]


def has_other_form(attrs: dict[str, Any]) -> bool:
    """Whether a span's attributes hold messages in an indexed form (even ones not read: a span
    of a model call)."""
    return any(k.startswith(ALL_PREFIXES) for k in attrs)


def _indexed(attrs: dict[str, Any], form: _Form) -> tuple[list[dict], list[dict]]:
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(form.prefixes):
            continue
        m = form.key.fullmatch(key)
        if m is not None:
            found.setdefault((m.group(1), int(m.group(2))), {})[m.group(3)] = value
    ins = sorted(n for side, n in found if side == form.input_side)
    outs = sorted((n, side) for side, n in found if side != form.input_side)
    inputs = [_indexed_message(form, form.input_side, n, found[form.input_side, n]) for n in ins]
    if not outs:
        return inputs, []
    first, side = outs[0]  # of several choices, the first is the reply
    return inputs, [_indexed_message(form, side, first, found[side, first])]


def _indexed_message(form: _Form, side: str, n: int, fields: dict[str, Any]) -> dict[str, Any]:
    where = form.where.format(side=side, n=n)
    role = fields.get("role") or ("assistant" if side != form.input_side else None)
    content = fields.get("content")
    if content is None:  # OpenInference's content parts
        parts = sorted(
            (int(m.group(1)), v) for k, v in fields.items() if (m := PART_TEXT.fullmatch(k))
        )
        content = "\n".join(str(v) for _, v in parts) if parts else None
    message: dict[str, Any] = {"role": role, "content": _content(content), FROM: where}
    if fields.get("tool_call_id") is not None:
        message["tool_call_id"] = fields["tool_call_id"]
    if role in ("tool", "function") and fields.get("name"):
        message["name"] = fields["name"]
    calls: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        m = form.call.fullmatch(key)
        if m is not None:
            calls.setdefault(int(m.group(1)), {})[m.group(2)] = value
    call_where = [form.call_where.format(where=where, j=j) for j in sorted(calls)]
    if fields.get("function_call.name") and not calls:  # the legacy form of one call
        calls[0] = {
            "name": fields["function_call.name"],
            "arguments": fields.get("function_call.arguments"),
        }
        call_where = [f"{where}.function_call"]
    if calls:
        message["tool_calls"] = [
            {"id": calls[j].get("id"), "function": _function(calls[j])} for j in sorted(calls)
        ]
        message[CALLS_FROM] = call_where
    return message


def _function(call: Any) -> dict[str, Any]:
    if not isinstance(call, dict):  # no function: named so by the conversation's builder
        return {}
    args = call.get("arguments")
    if args is not None and not isinstance(args, str):
        args = orjson.dumps(args).decode()
    return {"name": call.get("name"), "arguments": args}


def _content(value: Any) -> Any:
    """Content as recorded: OpenLLMetry writes a list of content parts as a JSON string, and
    some SDKs nest text as `{"text": {"value": ...}}`."""
    if isinstance(value, str) and value.startswith("[{"):
        try:
            parts = orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
        if isinstance(parts, list) and all(isinstance(p, dict) and "type" in p for p in parts):
            return parts
        return value
    if isinstance(value, dict):
        text = value.get("text")
        if isinstance(text, dict) and isinstance(text.get("value"), str):
            return text["value"]
        if isinstance(text, str):
            return text
    return value


def _from_events(events: list[Any]) -> tuple[list[dict], list[dict]]:
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for n, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        name = event.get("name")
        where = f"span event {n} ({name})"
        if name in EVENT_ROLES:
            body = _body(event)
            said = _event_message(body, body.get("role") or EVENT_ROLES[name], where)
            inputs += [said] if said else []
        elif name == CHOICE and not outputs:
            body = _body(event)
            message = _json_or_as_is(body.get("message"))
            message = message if isinstance(message, dict) else body
            said = _event_message(message, message.get("role") or "assistant", where)
            outputs += [said] if said else []
        elif name in (OLD_PROMPT, OLD_COMPLETION):
            key = "gen_ai.prompt" if name == OLD_PROMPT else "gen_ai.completion"
            items = _json_or_as_is(_body(event).get(key))
            listed = [
                _old_message(m, f"{where}: {key}[{k}]")
                for k, m in enumerate(items if isinstance(items, list) else [])
            ]
            if name == OLD_PROMPT:
                inputs += listed
            elif not outputs:
                outputs += listed[:1]
    return inputs, outputs


def _body(event: dict[str, Any]) -> dict[str, Any]:
    body = dict(attributes(event.get("attributes")))
    content = _json_or_as_is(body.pop("gen_ai.event.content", None))
    if isinstance(content, dict):
        body.update(content)
    return body


def _event_message(body: dict[str, Any], role: Any, where: str) -> dict[str, Any] | None:
    """The event's message; None for one that holds nothing (content capture off)."""
    content = _content(body.get("content"))
    message: dict[str, Any] = {"role": role, "content": content, FROM: where}
    if role == "tool":
        call_id = body.get("tool_call_id", body.get("id"))
        if call_id is not None:
            message["tool_call_id"] = call_id
    calls = _json_or_as_is(body.get("tool_calls"))
    if isinstance(calls, list) and calls:
        message["tool_calls"] = [
            {"id": c.get("id"), "function": _function(c.get("function") or {})}
            if isinstance(c, dict)
            else c
            for c in calls
        ]
        message[CALLS_FROM] = [f"{where}: tool_calls[{j}].function" for j in range(len(calls))]
    if content in (None, "") and "tool_calls" not in message and "tool_call_id" not in message:
        return None
    return message


def _old_message(item: Any, where: str) -> Any:
    if isinstance(item, dict) and isinstance(item.get("message"), dict):  # a choice
        item = {"role": "assistant", **item["message"]}
    return {**item, FROM: where} if isinstance(item, dict) else item


def _json_or_as_is(value: Any) -> Any:
    """A JSON object or array written as a string, read; anything else as it is."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value
