"""The OTel parser reads a chat span's messages in the forms instrumentations write besides the
current GenAI conventions' attributes: OpenLLMetry's indexed `gen_ai.prompt.N.*` attributes and
span events of the earlier conventions. Each span below is one model call, holding the history
before it and its reply, as instrumented agents write them; the mined cases must be those of
the same conversations logged as OpenAI chat JSONL."""

from __future__ import annotations

import copy
import json

import pytest
from mining_helpers import mined_content, sample_records, until_last_reply, write_jsonl

from casemill.mining import mine
from casemill.mining.parsers import otel, otel_forms
from casemill.mining.synthetic_otel import _kv, otel_export

RECORDS = sample_records(6, seed=5)


def indexed_attributes(messages: list[dict], message: str, call: str, fields: tuple) -> dict:
    """OpenAI messages as indexed attributes: `message` (from `n`) + `.role`, `.content`,
    `.tool_call_id`, and `call` (from `prefix`, `j`) + `.` + the call's id, name and arguments
    `fields`."""
    out = {}
    for n, m in enumerate(messages):
        prefix = message.format(n=n)
        out[f"{prefix}.role"] = m["role"]
        if m.get("content"):
            out[f"{prefix}.content"] = m["content"]
        if m.get("tool_call_id"):
            out[f"{prefix}.tool_call_id"] = m["tool_call_id"]
        for j, tc in enumerate(m.get("tool_calls") or []):
            at = call.format(prefix=prefix, j=j)
            values = (tc["id"], tc["function"]["name"], tc["function"]["arguments"])
            out |= {f"{at}.{field}": value for field, value in zip(fields, values, strict=True)}
    return out


def openllmetry_attributes(messages: list[dict], key: str) -> dict:
    """As OpenLLMetry writes them: `gen_ai.prompt.N.role`, ..., `.tool_calls.J.id|name|...`."""
    fields = ("id", "name", "arguments")
    return indexed_attributes(messages, key + ".{n}", "{prefix}.tool_calls.{j}", fields)


def openinference_attributes(messages: list[dict], side: str) -> dict:
    """As OpenInference writes them: `llm.input_messages.N.message.role`, ...,
    `.tool_calls.J.tool_call.id|function.name|function.arguments`."""
    fields = ("id", "function.name", "function.arguments")
    message = f"llm.{side}_messages.{{n}}.message"
    return indexed_attributes(messages, message, "{prefix}.tool_calls.{j}.tool_call", fields)


def event_attributes(message: dict, flat: bool) -> list[dict]:
    body = {
        k: v for k, v in message.items() if k in ("role", "content", "tool_calls") and v is not None
    }
    if message["role"] == "tool":
        body["id"] = message["tool_call_id"]
    if flat:  # the body's fields as the event's own attributes
        return _kv({k: v if isinstance(v, str) else json.dumps(v) for k, v in body.items()})
    return _kv({"gen_ai.system": "openai", "gen_ai.event.content": json.dumps(body)})


def events(messages: list[dict], reply: dict, flat: bool) -> list[dict]:
    out = [
        {"name": f"gen_ai.{m['role']}.message", "attributes": event_attributes(m, flat)}
        for m in messages
    ]
    choice = {"index": 0, "finish_reason": "stop", "message": reply}
    attrs = _kv({"gen_ai.event.content": json.dumps(choice)})
    if flat:
        attrs = _kv({"index": 0, "finish_reason": "stop", "message": json.dumps(reply)})
    return [*out, {"name": "gen_ai.choice", "attributes": attrs}]


def old_events(messages: list[dict], reply: dict) -> list[dict]:
    return [
        {
            "name": "gen_ai.content.prompt",
            "attributes": _kv({"gen_ai.prompt": json.dumps(messages)}),
        },
        {
            "name": "gen_ai.content.completion",
            "attributes": _kv({"gen_ai.completion": json.dumps([reply])}),
        },
    ]


def model_call_spans(record: dict, trace_id: str, form: str) -> dict:
    """An OTLP export of the record's trace: a model-call span at each agent message, holding
    the messages before it and that message as its reply, in `form`."""
    messages = record["messages"]
    spans = []
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        attrs = {"gen_ai.system": "openai", "gen_ai.conversation.id": record["conversation_id"]}
        attrs["casemill.resolved"] = bool(record["resolved"])
        span = {
            "traceId": trace_id,
            "spanId": f"{i + 1:016x}",
            "name": "openai.chat",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + i * 1_000_000),
        }
        if form == "openinference":
            del attrs["gen_ai.system"], attrs["gen_ai.conversation.id"]
            attrs["openinference.span.kind"] = "LLM"
            attrs["session.id"] = record["conversation_id"]
            attrs.update(openinference_attributes(messages[:i], "input"))
            attrs.update(openinference_attributes([m], "output"))
        elif form == "openllmetry":
            attrs["llm.request.type"] = "chat"
            attrs.update(openllmetry_attributes(messages[:i], "gen_ai.prompt"))
            attrs.update(openllmetry_attributes([m], "gen_ai.completion"))
        else:
            attrs["gen_ai.operation.name"] = "chat"
            span["events"] = (
                old_events(messages[:i], m)
                if form == "old-events"
                else events(messages[:i], m, flat=form == "flat-events")
            )
        span["attributes"] = _kv(attrs)
        spans.append(span)
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


@pytest.mark.parametrize(
    "form", ["openllmetry", "openinference", "events", "flat-events", "old-events"]
)
def test_messages_in_other_forms_give_the_cases_of_the_chat_log(tmp_path, form):
    records = [until_last_reply(r) for r in RECORDS]
    chat = mine([write_jsonl(tmp_path / "chat.jsonl", records)], "openai-jsonl", redact=False)
    docs = [model_call_spans(r, f"{i + 1:032x}", form) for i, r in enumerate(records)]
    result = mine([write_jsonl(tmp_path / f"{form}.jsonl", docs)], "otel", redact=False)
    # before: every trace was quarantined as missing_messages
    assert result.quarantined == ()
    assert len(result.cases) == len(chat.cases) > len(records)
    assert mined_content(result) == mined_content(chat)
    assert {c.provenance.label_confidence for c in result.cases} == {"high"}


def test_openllmetry_spans_are_redacted_like_the_chat_log(tmp_path):
    records = [until_last_reply(r) for r in RECORDS]
    docs = [model_call_spans(r, f"{i + 1:032x}", "openllmetry") for i, r in enumerate(records)]
    result = mine([write_jsonl(tmp_path / "spans.jsonl", docs)], "otel")
    chat = mine([write_jsonl(tmp_path / "chat.jsonl", records)], "openai-jsonl")
    assert result.summary.redactions == chat.summary.redactions
    assert sum(result.summary.redactions.values()) > 0
    written = "\n".join(c.model_dump_json() for c in result.cases)
    assert "cindy.harmon80@example.com" in json.dumps(RECORDS)
    assert "cindy.harmon80@example.com" not in written


def test_bad_arguments_in_an_indexed_attribute_are_named_by_that_attribute(tmp_path):
    record = until_last_reply(RECORDS[0])
    doc = model_call_spans(record, "a" * 32, "openllmetry")
    last = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][-1]
    bad = [a for a in last["attributes"] if a["key"].endswith("tool_calls.0.arguments")][0]
    bad["value"] = {"stringValue": '{"order_id": "W10'}  # cut short
    result = mine([write_jsonl(tmp_path / "bad.jsonl", [doc])], "otel", redact=False)
    [q] = result.quarantined
    assert (q.reason, q.field, q.conversation_id) == (
        "bad_tool_arguments",
        bad["key"],
        record["conversation_id"],
    )
    assert bad["key"].startswith("gen_ai.prompt.")


def test_bad_arguments_in_an_event_are_named_by_that_event(tmp_path):
    record = until_last_reply(RECORDS[0])
    doc = model_call_spans(record, "a" * 32, "events")
    last = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][-1]
    n, event = next(
        (n, e)
        for n, e in enumerate(last["events"])
        if "tool_calls" in e["attributes"][-1]["value"]["stringValue"]
    )
    body = json.loads(event["attributes"][-1]["value"]["stringValue"])
    body["tool_calls"][0]["function"]["arguments"] = "[1, 2]"
    event["attributes"][-1]["value"]["stringValue"] = json.dumps(body)
    result = mine([write_jsonl(tmp_path / "bad.jsonl", [doc])], "otel", redact=False)
    [q] = result.quarantined
    assert q.reason == "bad_tool_arguments"
    assert q.field == f"span event {n} (gen_ai.assistant.message): tool_calls[0].function.arguments"


def test_of_several_completions_the_first_is_the_reply(tmp_path):
    record = until_last_reply(RECORDS[0])
    doc = model_call_spans(record, "a" * 32, "openllmetry")
    last = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][-1]
    last["attributes"] += _kv({"gen_ai.completion.1.role": "assistant"})
    last["attributes"] += _kv({"gen_ai.completion.1.content": "another choice, not sent"})
    [conv] = otel.parse(write_jsonl(tmp_path / "n2.jsonl", [doc]), max_turns=50)
    assert conv.messages[-1].content == record["messages"][-1]["content"]
    assert "another choice" not in json.dumps([m.content for m in conv.messages])


def test_chat_spans_that_hold_no_messages_are_quarantined_saying_content_capture_is_off(
    tmp_path,
):
    doc = otel_export(RECORDS[0], "a" * 32, with_responses=True)
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        moved = ("gen_ai.input.messages", "gen_ai.output.messages")
        span["attributes"] = [a for a in span["attributes"] if a["key"] not in moved]
        span["events"] = [{"name": "gen_ai.user.message", "attributes": []}]  # content not kept
    result = mine([write_jsonl(tmp_path / "nothing.jsonl", [doc])], "otel", redact=False)
    assert not result.cases
    [q] = result.quarantined
    # before: "no customer turn", which did not say why
    assert (q.reason, q.field, q.conversation_id) == (
        "missing_messages",
        "gen_ai.input.messages",
        RECORDS[0]["conversation_id"],
    )
    assert "no chat span of this trace holds its messages" in q.message
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in q.message


def test_a_span_in_the_current_form_is_read_as_before_whatever_else_it_holds(tmp_path):
    doc = otel_export(RECORDS[1], "a" * 32, with_responses=True)
    plain = mine([write_jsonl(tmp_path / "plain.jsonl", [doc])], "otel", redact=False)
    both = copy.deepcopy(doc)
    chat = both["resourceSpans"][0]["scopeSpans"][0]["spans"][-1]
    chat["attributes"] += _kv({"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "x"})
    chat["events"] = [{"name": "gen_ai.user.message", "attributes": _kv({"content": "y"})}]
    result = mine([write_jsonl(tmp_path / "both.jsonl", [both])], "otel", redact=False)
    assert mined_content(result) == mined_content(plain)


def test_indexed_attributes_read_are_not_kept_twice():
    """A span keeps its messages once: the indexed attributes read become the messages
    attributes, which a trace keeps only for its longest history."""
    attrs = {"gen_ai.system": "openai", "llm.request.type": "chat"}
    attrs |= {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Hi"}
    attrs |= {"gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "Hello"}
    otel_forms.fill_messages(attrs, None)
    assert not [k for k in attrs if k.startswith(("gen_ai.prompt.", "gen_ai.completion."))]
    assert attrs["gen_ai.operation.name"] == "chat"
    assert [(m["role"], m["content"]) for m in attrs["gen_ai.input.messages"]] == [("user", "Hi")]
    assert [(m["role"], m["content"]) for m in attrs["gen_ai.output.messages"]] == [
        ("assistant", "Hello")
    ]


def test_openinference_tool_spans_give_the_results_the_messages_lack(tmp_path):
    """OpenInference LLM spans whose histories lack the tool results, and TOOL spans (no call
    id: `tool.name`, `input.value`, `output.value`) that hold them."""
    records = [until_last_reply(r) for r in RECORDS]
    docs = []
    for i, record in enumerate(records):
        doc = model_call_spans(record, f"{i + 1:032x}", "openinference")
        spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        for span in spans:  # the tool results out of the histories
            tools = {
                a["key"].rsplit(".message.", 1)[0]
                for a in span["attributes"]
                if a["key"].endswith(".message.role") and a["value"]["stringValue"] == "tool"
            }
            span["attributes"] = [
                a for a in span["attributes"] if a["key"].rsplit(".message.", 1)[0] not in tools
            ]
        calls = {
            tc["id"]: tc["function"] for m in record["messages"] for tc in m.get("tool_calls") or []
        }
        for m in record["messages"]:
            if m["role"] == "tool":
                attrs = {
                    "openinference.span.kind": "TOOL",
                    "tool.name": calls[m["tool_call_id"]]["name"],
                }
                attrs["input.value"] = calls[m["tool_call_id"]]["arguments"]
                attrs["output.value"] = m["content"]
                spans.append({"traceId": f"{i + 1:032x}", "attributes": _kv(attrs)})
        docs.append(doc)
    result = mine([write_jsonl(tmp_path / "oi.jsonl", docs)], "otel", redact=False)
    chat = mine([write_jsonl(tmp_path / "chat.jsonl", records)], "openai-jsonl", redact=False)
    assert result.quarantined == ()
    assert mined_content(result) == mined_content(chat)


def test_a_legacy_function_call_is_named_by_its_own_attribute(tmp_path):
    attrs = {"gen_ai.system": "openai", "llm.request.type": "chat"}
    attrs |= {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "cancel W1"}
    attrs |= {
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.function_call.name": "cancel_order",
        "gen_ai.completion.0.function_call.arguments": '{"order_id": ',  # cut short
    }
    span = {"traceId": "a" * 32, "spanId": "b" * 16, "attributes": _kv(attrs)}
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    result = mine([write_jsonl(tmp_path / "fc.jsonl", [doc])], "otel", redact=False)
    [q] = result.quarantined
    assert (q.reason, q.field) == (
        "bad_tool_arguments",
        "gen_ai.completion.0.function_call.arguments",
    )
