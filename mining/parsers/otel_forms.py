"""Messages of a model-call span in the forms other than the current GenAI conventions'
`gen_ai.input.messages` / `gen_ai.output.messages` attributes, read into those two attributes
(as lists of OpenAI-shaped messages) so the OTel parser treats every span alike:

- OpenLLMetry's (Traceloop's) indexed attributes: `gen_ai.prompt.N.role`, `.content`,
  `.tool_call_id`, `.tool_calls.J.id|name|arguments`, and `gen_ai.completion.N.*` the same way
  (plus `.function_call.name|arguments`); of several completions, the first is the reply;
- span events of the earlier GenAI conventions: `gen_ai.system.message`, `gen_ai.user.message`,
  `gen_ai.assistant.message`, `gen_ai.tool.message` and `gen_ai.choice`, their body in the
  `gen_ai.event.content` attribute (JSON) or in the event's own attributes (`content`,
  `tool_calls`, `id`, `message`, ...); and the oldest form, `gen_ai.content.prompt` /
  `gen_ai.content.completion` events holding `gen_ai.prompt` / `gen_ai.completion` as JSON.

Each message says where it comes from (`FROM`, `CALLS_FROM`), so a problem found later in it is
reported as the attribute or event that holds it.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

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


def fill_messages(attrs: dict[str, Any], events: Any, attributes: Any) -> None:
    """Put the span's messages held in another form into `attrs[INPUT]` / `attrs[OUTPUT]` (when
    the span holds neither), and name the operation `chat` when the span does not.
    `attributes` reads an OTLP key/value list (the parser's)."""
    if INPUT in attrs or OUTPUT in attrs:
        return
    inputs, outputs = _indexed(attrs)
    if inputs or outputs:  # read: the span keeps them once (Trace.add strips INPUT, OUTPUT)
        for key in [k for k in attrs if k.startswith(INDEXED_PREFIXES)]:
            del attrs[key]
    elif isinstance(events, list) and events:
        inputs, outputs = _from_events(events, attributes)
    if not inputs and not outputs:
        return
    attrs[INPUT], attrs[OUTPUT] = inputs, outputs
    attrs.setdefault("gen_ai.operation.name", "chat")


def has_other_form(attrs: dict[str, Any]) -> bool:
    """Whether a span's attributes hold messages in OpenLLMetry's indexed form (even ones not
    read: a span of a model call)."""
    return any(k.startswith(INDEXED_PREFIXES) for k in attrs)


def _indexed(attrs: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(INDEXED_PREFIXES):
            continue
        m = INDEXED.fullmatch(key)
        if m is not None:
            found.setdefault((m.group(1), int(m.group(2))), {})[m.group(3)] = value
    prompts = sorted(n for kind, n in found if kind == "prompt")
    completions = sorted(n for kind, n in found if kind == "completion")
    inputs = [_indexed_message("prompt", n, found["prompt", n]) for n in prompts]
    if not completions:
        return inputs, []
    first = completions[0]  # of several choices, the first is the reply
    return inputs, [_indexed_message("completion", first, found["completion", first])]


def _indexed_message(kind: str, n: int, fields: dict[str, Any]) -> dict[str, Any]:
    where = f"gen_ai.{kind}.{n}"
    role = fields.get("role") or ("assistant" if kind == "completion" else None)
    message: dict[str, Any] = {
        "role": role,
        "content": _content(fields.get("content")),
        FROM: where,
    }
    if fields.get("tool_call_id") is not None:
        message["tool_call_id"] = fields["tool_call_id"]
    if role in ("tool", "function") and fields.get("name"):
        message["name"] = fields["name"]
    calls: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        m = CALL_PART.fullmatch(key)
        if m is not None:
            calls.setdefault(int(m.group(1)), {})[m.group(2)] = value
    if fields.get("function_call.name") and not calls:
        calls[0] = {
            "name": fields["function_call.name"],
            "arguments": fields.get("function_call.arguments"),
        }
    if calls:
        message["tool_calls"] = [
            {"id": calls[j].get("id"), "function": _function(calls[j])} for j in sorted(calls)
        ]
        message[CALLS_FROM] = [f"{where}.tool_calls.{j}" for j in sorted(calls)]
    return message


def _function(call: dict[str, Any]) -> dict[str, Any]:
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


def _from_events(events: list[Any], attributes: Any) -> tuple[list[dict], list[dict]]:
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for n, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        name = event.get("name")
        where = f"span event {n} ({name})"
        if name in EVENT_ROLES:
            body = _body(event, attributes)
            said = _event_message(body, body.get("role") or EVENT_ROLES[name], where)
            inputs += [said] if said else []
        elif name == CHOICE and not outputs:
            body = _body(event, attributes)
            message = _loads(body.get("message"))
            message = message if isinstance(message, dict) else body
            said = _event_message(message, message.get("role") or "assistant", where)
            outputs += [said] if said else []
        elif name in (OLD_PROMPT, OLD_COMPLETION):
            key = "gen_ai.prompt" if name == OLD_PROMPT else "gen_ai.completion"
            items = _loads(_body(event, attributes).get(key))
            listed = [
                _old_message(m, f"{where}: {key}[{k}]")
                for k, m in enumerate(items if isinstance(items, list) else [])
            ]
            if name == OLD_PROMPT:
                inputs += listed
            elif not outputs:
                outputs += listed[:1]
    return inputs, outputs


def _body(event: dict[str, Any], attributes: Any) -> dict[str, Any]:
    body = attributes(event.get("attributes"))
    content = _loads(body.pop("gen_ai.event.content", None))
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
    calls = _loads(body.get("tool_calls"))
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


def _loads(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value
