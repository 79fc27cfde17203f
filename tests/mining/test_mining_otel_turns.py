"""An application that traces each turn apart (a request a turn) writes one conversation as
several traces sharing `gen_ai.conversation.id`, each chat span repeating the history: the OTel
parser joins them into one conversation, as the same conversation logged as chat JSONL."""

from __future__ import annotations

import json

import pytest
from mining_helpers import mined_content, sample_records, until_last_reply, write_jsonl

from casemill.mining import mine
from casemill.mining.parsers import otel, otel_forms
from casemill.mining.synthetic_otel import _kv, _parts

RECORDS = sample_records(8, seed=5)


def turn_traces(record: dict, first_trace: int, *, with_responses: bool = True) -> list[dict]:
    """The record as one trace a customer turn: a chat span at each agent message (its history
    all the messages before it; tool results in it only `with_responses`) and an execute_tool
    span a call, each trace an OTLP export line of its own."""
    messages = record["messages"]
    turns: list[list[dict]] = []
    for i, m in enumerate(messages):
        if m["role"] == "user" or not turns:
            turns.append([])
        span = {
            "traceId": f"{first_trace + len(turns):032x}",
            "spanId": f"{i + 1:016x}",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + i * 1_000_000),
        }
        if m["role"] == "assistant":
            history = [p for p in (_parts(h, with_responses) for h in messages[:i]) if p]
            attrs = {
                "gen_ai.operation.name": "chat",
                "gen_ai.conversation.id": record["conversation_id"],
                "casemill.resolved": bool(record["resolved"]),
                "gen_ai.input.messages": json.dumps(history),
                "gen_ai.output.messages": json.dumps([_parts(m, True)]),
            }
            turns[-1].append({**span, "attributes": _kv(attrs)})
        elif m["role"] == "tool":
            call = next(
                tc
                for h in messages[:i]
                for tc in h.get("tool_calls") or []
                if tc["id"] == m["tool_call_id"]
            )
            attrs = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call["function"]["name"],
                "gen_ai.tool.call.id": call["id"],
                "gen_ai.tool.call.arguments": call["function"]["arguments"],
                "gen_ai.tool.call.result": m["content"],
            }
            turns[-1].append({**span, "attributes": _kv(attrs)})
    return [{"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]} for spans in turns if spans]


def chat_of(tmp_path, records):
    return mine([write_jsonl(tmp_path / "chat.jsonl", records)], "openai-jsonl", redact=False)


def interleaved(traces: list[list[dict]]) -> list[dict]:
    """The conversations' turns as concurrent customers write them: turn 1 of each, then 2..."""
    return [t[n] for n in range(max(map(len, traces))) for t in traces if n < len(t)]


def test_the_traces_of_one_conversations_turns_are_mined_as_one_conversation(tmp_path):
    records = [until_last_reply(r) for r in RECORDS]
    traces = [turn_traces(r, 100 * i) for i, r in enumerate(records)]
    assert sum(len(t) > 1 for t in traces) >= 2  # conversations of several turns
    log = write_jsonl(tmp_path / "turns.jsonl", interleaved(traces))
    result = mine([log], "otel", redact=False)
    # before: a conversation a trace, its earlier turns' conversation-level cases missing the
    # writes of the later turns
    assert result.summary.conversations_read == len(records)
    assert result.quarantined == ()
    assert mined_content(result) == mined_content(chat_of(tmp_path, records))
    # each conversation is located where its first trace starts
    firsts = {c.provenance.source.conversation_id: c.provenance.source.line for c in result.cases}
    order = [r["conversation_id"] for r in records]
    assert [firsts[k] for k in order] == sorted(firsts.values())
    assert sorted(firsts.values()) == list(range(1, len(records) + 1))


def test_tool_results_shown_only_by_an_earlier_turns_tool_spans_are_kept(tmp_path):
    records = [until_last_reply(r) for r in RECORDS]
    traces = [turn_traces(r, 100 * i, with_responses=False) for i, r in enumerate(records)]
    result = mine([write_jsonl(tmp_path / "t.jsonl", interleaved(traces))], "otel", redact=False)
    assert result.summary.conversations_read == len(records)
    assert mined_content(result) == mined_content(chat_of(tmp_path, records))


def test_one_id_naming_two_conversations_mines_them_apart(tmp_path):
    a, b = until_last_reply(RECORDS[0]), until_last_reply(RECORDS[1])
    b_as_a = {**b, "conversation_id": a["conversation_id"]}
    lines = [*turn_traces(a, 0), *turn_traces(b_as_a, 100)]
    result = mine([write_jsonl(tmp_path / "reused.jsonl", lines)], "otel", redact=False)
    assert result.summary.conversations_read == 2
    apart = mine([write_jsonl(tmp_path / "apart.jsonl", [a, b_as_a])], "openai-jsonl", redact=False)
    assert mined_content(result) == mined_content(apart)


def test_a_turn_traced_after_its_conversation_was_mined_gives_low_confidence_cases(tmp_path):
    record = until_last_reply(RECORDS[0])
    traces = turn_traces(record, 0)
    filler = [
        {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "f" * 32, "attributes": []}]}]}]}
    ] * (2 * otel.WINDOW + 50)  # the window ends the trace, then its held conversation
    lines = [*traces[:-1], *filler, traces[-1]]
    items = list(otel.parse(write_jsonl(tmp_path / "late.jsonl", lines), max_turns=50))
    assert [type(i).__name__ for i in items] == ["Conversation", "Conversation"]
    early, late = items
    assert early.partial is None and early.resolved is True
    assert (late.partial, late.resolved) == (otel.LATER_PART, None)
    result = mine([write_jsonl(tmp_path / "late2.jsonl", lines)], "otel", redact=False)
    assert result.cases  # the late part's cases are low-confidence ones to label
    late_cases = [c for c in result.cases if c.provenance.source.line == len(lines)]
    assert late_cases
    assert {c.provenance.label_confidence for c in late_cases} == {"low"}


def test_traces_without_a_conversation_id_are_each_a_conversation(tmp_path):
    record = until_last_reply(RECORDS[0])
    traces = turn_traces(record, 0)
    for doc in traces:
        for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            span["attributes"] = [
                a for a in span["attributes"] if a["key"] != "gen_ai.conversation.id"
            ]
    items = list(otel.parse(write_jsonl(tmp_path / "noid.jsonl", traces), max_turns=50))
    assert len(items) == len(traces) > 1
    assert [i.line for i in items] == list(range(1, len(traces) + 1))


def test_a_conversation_one_of_whose_turns_was_quarantined_is_a_part(tmp_path):
    record = until_last_reply(RECORDS[0])
    traces = turn_traces(record, 0)
    assert len(traces) == 2
    bad = traces[1]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    bad["startTimeUnixNano"] = "soon"  # a malformed span: its trace is quarantined
    for order in (traces, traces[::-1]):
        log = write_jsonl(tmp_path / "lost.jsonl", order)
        items = list(otel.parse(log, max_turns=50))
        [quarantined] = [i for i in items if isinstance(i, otel.Quarantined)]
        [conv] = [i for i in items if not isinstance(i, otel.Quarantined)]
        assert quarantined.conversation_id == conv.id == record["conversation_id"]
        # before: the first turn mined as the whole resolved conversation, without the writes
        # of the turn that was lost
        assert conv.resolved is None
        assert conv.partial == otel.LOST_TURN.format(reason="bad_span", line=quarantined.line)


@pytest.mark.parametrize("key", otel_forms.SESSION_KEYS)
def test_a_session_id_joins_the_traces_as_a_conversation_id_does(tmp_path, key):
    records = [until_last_reply(r) for r in RECORDS]
    traces = [turn_traces(r, 100 * i) for i, r in enumerate(records)]
    lines = interleaved(traces)
    for doc in lines:
        for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            for a in span["attributes"]:
                if a["key"] == "gen_ai.conversation.id":
                    a["key"] = key
    result = mine([write_jsonl(tmp_path / "s.jsonl", lines)], "otel", redact=False)
    assert result.summary.conversations_read == len(records) < len(lines)
    assert mined_content(result) == mined_content(chat_of(tmp_path, records))


def test_conversations_sharing_an_id_and_interleaving_are_each_mined_whole(tmp_path):
    """A session id that spans two chats: their turns come in turn, under one id."""
    a, b = until_last_reply(RECORDS[0]), until_last_reply(RECORDS[4])
    b_as_a = {**b, "conversation_id": a["conversation_id"]}
    traces = [turn_traces(a, 0), turn_traces(b_as_a, 100)]
    assert min(map(len, traces)) > 1
    log = write_jsonl(tmp_path / "shared.jsonl", interleaved(traces))
    items = list(otel.parse(log, max_turns=50))
    # before: every time the other chat's turn came, the held one was mined: prefixes of both
    assert len(items) == 2
    chat = chat_of(tmp_path, [a, b_as_a])
    assert mined_content(mine([log], "otel", redact=False)) == mined_content(chat)
