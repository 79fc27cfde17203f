"""A trace's conversation from its spans (`casemill.mining.parsers.otel`): the history of the
model call that holds the longest one, its reply, and the results (and calls) that only the
tool-execution spans show.

The model-call span (`gen_ai.operation.name` = `chat`, ...) with the longest
`gen_ai.input.messages` gives the history, and its `gen_ai.output.messages` the last reply
(messages are `{role, parts}` with `text`, `tool_call` and `tool_call_response` parts, or
OpenAI-shaped ones as `casemill.mining.parsers.otel_forms` reads the other forms into);
`gen_ai.system_instructions` adds the system turn. Tool-execution spans (`execute_tool`:
`gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.call.arguments`,
`gen_ai.tool.call.result`, an error status) fill in results the messages lack, and calls they
do not show; one without a call id answers the first unanswered logged call of its tool and
arguments. An agent called as a tool runs inside that tool's `execute_tool` span: its model
calls are not the conversation's (unless no other call holds messages), and its tool calls
follow the call that ran it. Each message keeps where it comes from, so that a problem is
named by the span attribute that holds it (`span_field`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import orjson

from casemill.mining.model import RecordProblem
from casemill.mining.parsers.messages import as_text
from casemill.mining.parsers.otel_forms import CALLS_FROM, FROM, has_other_form

if TYPE_CHECKING:
    from casemill.mining.parsers.otel_traces import Span

TOOL_SPAN = "the execute_tool span of call"
MAX_DEPTH = 64  # parents followed up from a span
MESSAGE_FIELD = re.compile(r"messages\[(\d+)\](?:\.tool_calls\[(\d+)\](?:\.function)?)?(.*)")
MODEL_OPS = frozenset({"chat", "text_completion", "generate_content", "invoke_agent"})
NO_MESSAGES = (
    "no chat span of this trace holds its messages, in gen_ai.input.messages / "
    "gen_ai.output.messages, in span events (gen_ai.user.message, gen_ai.choice, ...), in "
    "OpenLLMetry's gen_ai.prompt.N.* / gen_ai.completion.N.* or in OpenInference's "
    "llm.input_messages.N.* / llm.output_messages.N.* attributes, nor in log records of GenAI "
    "events among the spans: turn on the instrumentation's content capture "
    "(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, TRACELOOP_TRACE_CONTENT=true), "
    "and when it sends the messages as log records, export the logs to the same file as the "
    "spans (a collector file exporter in both pipelines)"
)


def _loads(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def _semconv_messages(items: Any, key: str) -> list[dict[str, Any]]:
    """GenAI `{role, parts}` messages (the attribute `key`) as OpenAI chat messages, each with
    where it comes from (`FROM`: the message's, or a tool call's part's, field in the span)."""
    out: list[dict[str, Any]] = []
    for k, m in enumerate(items if isinstance(items, list) else []):
        if not isinstance(m, dict):
            continue
        parts = m.get("parts")
        if parts is None:  # tolerate OpenAI-shaped messages
            out.append({FROM: f"{key}[{k}]", **m})  # where another form said it is from
            continue
        texts, calls, sources = [], [], []
        for n, p in enumerate(parts if isinstance(parts, list) else []):
            kind = p.get("type") if isinstance(p, dict) else None
            if kind == "text":
                texts.append(as_text(p.get("content")))
            elif kind in ("tool_call", "function_call"):
                sources.append(f"{key}[{k}].parts[{n}]")
                args = p.get("arguments")
                calls.append(
                    {
                        "id": p.get("id"),
                        "function": {
                            "name": p.get("name"),
                            "arguments": args
                            if isinstance(args, str)
                            else orjson.dumps(args if args is not None else {}).decode(),
                        },
                    }
                )
            elif kind == "tool_call_response":
                result = p.get("response", p.get("result"))
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": p.get("id"),
                        "content": as_text(result),
                        FROM: f"{key}[{k}].parts[{n}]",
                    }
                )
        if texts or calls:
            msg: dict[str, Any] = {
                "role": m.get("role"),
                "content": "\n".join(texts),
                FROM: f"{key}[{k}]",
            }
            if calls:
                msg["tool_calls"], msg[CALLS_FROM] = calls, sources
            out.append(msg)
    return out


def span_field(messages: list[dict[str, Any]], field: str | None) -> str | None:
    """A problem's field in the messages built from the spans (`messages[2].tool_calls[0]
    .function.arguments`) as the span attribute it comes from (`gen_ai.input.messages[1]
    .parts[0].arguments`)."""
    m = MESSAGE_FIELD.fullmatch(field or "")
    if m is None or int(m.group(1)) >= len(messages):
        return field
    message = messages[int(m.group(1))]
    origin, call, rest = message.get(FROM), m.group(2), m.group(3)
    if origin is None:
        return field
    sources = message.get(CALLS_FROM)
    if call is None or sources is None or int(call) >= len(sources):  # an OpenAI-shaped one
        return origin + field[len(f"messages[{m.group(1)}]") :]
    return sources[int(call)] + rest


def nested_in_tools(spans: list[Span], links: dict[str, str]) -> dict[str, str]:
    """The spans run inside a tool's execution (an agent called as a tool: its model calls and
    tool executions), each with its nearest enclosing `execute_tool` span. `links`: the parent
    of spans that are not GenAI ones, which may sit between the two."""
    parent = {**links, **{s.sid: s.parent for s in spans if s.sid}}
    tools = {
        s.sid for s in spans if s.sid and s.attrs.get("gen_ai.operation.name") == "execute_tool"
    }
    nested = {}
    for s in spans:
        up, steps = parent.get(s.sid) if s.sid else None, 0
        while up and steps < MAX_DEPTH:
            if up in tools:
                nested[s.sid] = up
                break
            up, steps = parent.get(up), steps + 1
    return nested


def history(spans: list[Span], nested: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The messages of the model call with the longest history, of the agent the customer
    talks to: a model call run inside a tool's execution (an agent called as a tool) is chosen
    only when no other holds messages."""
    outer = [s for s in spans if not nested or s.sid not in nested]
    messages = _longest(outer) if len(outer) < len(spans) else None
    return messages if messages is not None else _longest(spans, required=True) or []


def _longest(spans: list[Span], required: bool = False) -> list[dict[str, Any]] | None:
    best: tuple[int, int] = (-1, -1)
    chosen: Span | None = None
    for s in spans:
        if s.attrs.get("gen_ai.operation.name") not in MODEL_OPS:
            continue
        raw = s.attrs.get("gen_ai.input.messages")
        inputs = _loads(raw)
        if inputs is None and isinstance(raw, str) and raw.strip():
            # cut short by an attribute length limit, most often: the history is lost
            raise RecordProblem(
                "bad_span", "gen_ai.input.messages is not JSON", "gen_ai.input.messages"
            )
        size = len(inputs) if isinstance(inputs, list) else 0
        if (size, s.start) >= best and (size or s.attrs.get("gen_ai.output.messages")):
            best, chosen = (size, s.start), s
    if chosen is None:
        if required and any(_model_call(s.attrs) for s in spans):
            raise RecordProblem("missing_messages", NO_MESSAGES, "gen_ai.input.messages")
        return None
    messages = _semconv_messages(
        _loads(chosen.attrs.get("gen_ai.input.messages")), "gen_ai.input.messages"
    )
    messages += _semconv_messages(
        _loads(chosen.attrs.get("gen_ai.output.messages")), "gen_ai.output.messages"
    )
    system = _loads(chosen.attrs.get("gen_ai.system_instructions"))
    if system and not any(m.get("role") == "system" for m in messages):
        text = (
            "\n".join(as_text(p.get("content")) for p in system if isinstance(p, dict))
            if isinstance(system, list)
            else as_text(system)
        )
        messages.insert(0, {"role": "system", "content": text, FROM: "gen_ai.system_instructions"})
    return messages


def _model_call(attrs: dict[str, Any]) -> bool:
    """Whether a span is a model call, whether or not its messages were kept: as the GenAI
    conventions, OpenLLMetry (`llm.request.type`) or OpenInference (an `LLM` span) say."""
    return (
        attrs.get("gen_ai.operation.name") in MODEL_OPS
        or attrs.get("llm.request.type") in ("chat", "completion")
        or attrs.get("openinference.span.kind") == "LLM"
        or has_other_form(attrs)
    )


def merge_tool_spans(
    messages: list[dict[str, Any]], spans: list[Span], nested: dict[str, str] | None = None
) -> None:
    """Fill in the results the messages lack, and add the calls they do not show: after the
    call of the tool whose execution ran them (`nested`: an agent called as a tool), else at
    the end."""
    called = {tc.get("id"): i for i, m in enumerate(messages) for tc in m.get("tool_calls") or []}
    answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    call_of: dict[str, str] = {}  # a tool span's id -> the call it executed
    after: dict[str, int] = {}  # a call -> where the next call its execution ran goes
    for s in spans:
        a = s.attrs
        if a.get("gen_ai.operation.name") != "execute_tool" or not a.get("gen_ai.tool.name"):
            continue
        call_id = a.get("gen_ai.tool.call.id")
        if not call_id:  # "recommended if available": the logged call it executed, if one
            call_id = _unanswered_call(messages, answered, a) or f"span{s.start}"
        call_id = str(call_id)
        if s.sid:
            call_of[s.sid] = call_id
        if call_id in answered:
            continue
        tool_msg = _result_message(s, call_id)
        if call_id in called:
            at = called[call_id] + 1
            while at < len(messages) and messages[at].get("role") == "tool":
                at += 1
            messages.insert(at, tool_msg)
            called, after = _shifted(called, at, 1), _shifted(after, at, 1)
        else:
            call_msg = _call_message(a, call_id)
            outer = call_of.get(nested.get(s.sid, "")) if nested and s.sid else None
            if outer is not None and outer in called:  # right after the call that ran it
                at = after.get(outer, called[outer] + 1)
                messages[at:at] = [call_msg, tool_msg]
                called, after = _shifted(called, at, 2), _shifted(after, at, 2)
                called[call_id], after[outer] = at, at + 2
            else:
                called[call_id] = len(messages)
                messages += [call_msg, tool_msg]
        answered.add(call_id)


def _shifted(where: dict[Any, int], at: int, by: int) -> dict[Any, int]:
    """Positions in the messages after `by` messages were inserted at `at`."""
    return {k: (v + by if v >= at else v) for k, v in where.items()}


def _result_message(span: Span, call_id: str) -> dict[str, Any]:
    """The tool message of a tool span's result (its error's, when it failed)."""
    result = span.attrs.get("gen_ai.tool.call.result")
    result = as_text(result) if result is not None else None
    if span.error and not (result or "").lower().startswith("error"):
        result = f"Error: {span.error}" + (f" {result}" if result else "")
    return {
        "role": "tool",
        "tool_call_id": call_id,
        "content": result or "",
        FROM: f"{TOOL_SPAN} {call_id}: gen_ai.tool.call.result",
    }


def _call_message(attrs: dict[str, Any], call_id: str) -> dict[str, Any]:
    """The assistant message of a call only a tool span shows."""
    args = attrs.get("gen_ai.tool.call.arguments")
    return {
        "role": "assistant",
        "content": "",
        FROM: f"{TOOL_SPAN} {call_id}",
        CALLS_FROM: [f"{TOOL_SPAN} {call_id}: gen_ai.tool.call"],
        "tool_calls": [
            {
                "id": call_id,
                "function": {
                    "name": attrs["gen_ai.tool.name"],
                    "arguments": args
                    if isinstance(args, str)
                    else orjson.dumps(args or {}).decode(),
                },
            }
        ],
    }


def _unanswered_call(
    messages: list[dict[str, Any]], answered: set[Any], attrs: dict[str, Any]
) -> str | None:
    """The id of the first logged call with the tool span's tool and arguments that has no
    result yet: an `execute_tool` span without `gen_ai.tool.call.id` executed it."""
    args = _arguments(attrs.get("gen_ai.tool.call.arguments"))
    for m in messages:
        for tc in m.get("tool_calls") or []:
            function = tc.get("function") or {}
            if (
                tc.get("id")
                and tc["id"] not in answered
                and function.get("name") == attrs["gen_ai.tool.name"]
                and (args is None or _arguments(function.get("arguments")) == args)
            ):
                return str(tc["id"])
    return None


def _arguments(value: Any) -> Any:
    """Tool-call arguments as a value to compare (a JSON string parsed; absent: None)."""
    if value is None or value == "":
        return None
    loaded = _loads(value)
    return value if loaded is None else loaded
