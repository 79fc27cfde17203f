"""The OTel parser on what a user audit found: traces mined in parts, tool spans without a call
id, traces split between the files of one run (chat spans whose messages are in other forms:
test_mining_otel_forms)."""

from __future__ import annotations

import copy
import json

from mining_helpers import sample_records, write_jsonl

from casemill.mining import mine
from casemill.mining.parsers import otel, otel_documents, otel_traces
from casemill.mining.synthetic_otel import otel_export

RECORDS = sample_records(6, seed=5)
TRACE = "a" * 32


def spans_of(doc: dict) -> list[dict]:
    return doc["resourceSpans"][0]["scopeSpans"][0]["spans"]


def with_spans(doc: dict, spans: list[dict]) -> dict:
    out = copy.deepcopy(doc)
    out["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans
    return out


def filler(n: int) -> list[dict]:
    """`n` lines of spans that are not GenAI spans (HTTP health checks of other traces)."""
    return [
        {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {
                            "spans": [
                                {
                                    "traceId": f"{i + 1:032x}",
                                    "startTimeUnixNano": "1",
                                    "attributes": [
                                        {
                                            "key": "http.request.method",
                                            "value": {"stringValue": "GET"},
                                        }
                                    ],
                                }
                            ]
                        }
                    ]
                }
            ]
        }
        for i in range(n)
    ]


def confidences(result) -> list[tuple[str, str, bool]]:
    return sorted(
        (
            c.provenance.operators[0].name,
            c.provenance.label_confidence,
            "needs_label" in c.tags.labels,
        )
        for c in result.cases
    )


def expected_calls(result) -> list[tuple[str, str]]:
    return sorted(
        (
            c.provenance.operators[0].name,
            json.dumps([e.model_dump(mode="json") for e in c.expected.tool_calls]),
        )
        for c in result.cases
    )


def test_a_trace_whose_spans_are_further_apart_than_the_window_gives_no_high_confidence(tmp_path):
    doc = otel_export(RECORDS[0], TRACE, with_responses=False)
    whole = mine([write_jsonl(tmp_path / "whole.jsonl", [doc])], "otel", redact=False)
    assert {c.provenance.label_confidence for c in whole.cases} == {"high"}
    spans = spans_of(doc)
    chat, tools = spans[-1:], spans[:-1]  # the reply's chat span first, its tool spans later
    lines = [with_spans(doc, chat), *filler(otel.WINDOW + 50), with_spans(doc, tools)]
    result = mine([write_jsonl(tmp_path / "apart.jsonl", lines)], "otel", redact=False)
    # before: the chat span alone was mined as a resolved conversation, its cases high
    assert result.cases
    assert {c[1:] for c in confidences(result)} == {("low", True)}
    notes = [c.provenance.notes for c in result.cases]
    assert all("resolution not recorded" in n for n in notes)
    assert all(
        "may be only a part of the logged conversation: the trace's spans were more than "
        f"{otel.WINDOW} lines apart: it was mined before it ended" in n
        for n in notes
    )
    # the tool spans, mined apart, hold no customer turn
    assert [q.reason for q in result.quarantined] == ["no_customer_turn"]


def test_a_trace_that_reappears_after_it_was_mined_gives_low_confidence_cases(tmp_path):
    doc = otel_export(RECORDS[1], TRACE, with_responses=True)
    lines = [doc, *filler(otel.WINDOW + 50), doc]
    result = mine([write_jsonl(tmp_path / "again.jsonl", lines)], "otel", redact=False)
    once = mine([write_jsonl(tmp_path / "once.jsonl", [doc])], "otel", redact=False)
    assert {c.provenance.label_confidence for c in once.cases} == {"high"}
    # before: both parts high. The first part looked whole when the window ended it (its root
    # span seen, every call answered), but its conversation is held for the window's length to
    # join later traces of its id: the second part (its trace continued) joins it, and the
    # conversation, seen in parts, gives low-confidence cases to label
    items = list(otel.parse(tmp_path / "again.jsonl", max_turns=50))
    assert [(i.partial, i.resolved) for i in items] == [(otel_traces.CONTINUED, None)]
    assert confidences(result) == sorted((name, "low", True) for name, _, _ in confidences(once))
    assert expected_calls(result) == expected_calls(once)
    notes = [c.provenance.notes for c in result.cases]
    assert all("may be only a part of the logged conversation: the trace" in n for n in notes)


def test_the_remembered_flushed_trace_ids_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(otel, "FLUSHED_KEPT", 1)
    docs = [otel_export(RECORDS[i], f"{i + 1:032x}", with_responses=True) for i in range(2)]
    for doc in docs:  # traces without a conversation id: none is held to join a later trace
        for span in spans_of(doc):
            span["attributes"] = [
                a for a in span["attributes"] if a["key"] != "gen_ai.conversation.id"
            ]
    # trace 1 and trace 2 flushed by the window; only trace 2 is remembered when 1 reappears
    lines = [docs[0], docs[1], *filler(3), docs[0], docs[1]]
    items = list(otel.parse(write_jsonl(tmp_path / "b.jsonl", lines), max_turns=50, window=2))
    assert [i.resolved for i in items if not isinstance(i, otel.Quarantined)] == [
        True,
        True,
        True,
        None,
    ]


def test_tool_spans_without_a_call_id_fill_in_the_results_of_the_logged_calls(tmp_path):
    doc = otel_export(RECORDS[0], TRACE, with_responses=False)
    with_ids = mine([write_jsonl(tmp_path / "ids.jsonl", [doc])], "otel", redact=False)
    no_ids = copy.deepcopy(doc)
    for span in spans_of(no_ids):
        span["attributes"] = [a for a in span["attributes"] if a["key"] != "gen_ai.tool.call.id"]
    result = mine([write_jsonl(tmp_path / "noids.jsonl", [no_ids])], "otel", redact=False)
    # before: each write was expected twice (the logged call, and the span as a new call)
    assert expected_calls(result) == expected_calls(with_ids)
    assert confidences(result) == confidences(with_ids)
    for case in result.cases:
        calls = [json.dumps(e.model_dump(mode="json")) for e in case.expected.tool_calls]
        assert calls and len(set(calls)) == len(calls)


def test_a_trace_split_between_two_files_of_one_run_is_mined_whole(tmp_path):
    """A collector that rotates its file mid-trace: the files of one run are one stream of
    spans, so the trace is mined once, as if it were in one file, from the file it starts in."""
    doc = otel_export(RECORDS[0], TRACE, with_responses=False)
    whole = mine([write_jsonl(tmp_path / "whole.jsonl", [doc])], "otel", redact=False)
    spans = spans_of(doc)
    first = write_jsonl(tmp_path / "rotated-1.jsonl", [with_spans(doc, spans[-1:])])
    second = write_jsonl(tmp_path / "rotated-2.jsonl", [with_spans(doc, spans[:-1])])
    result = mine([first, second], "otel", redact=False)
    # before: two conversations, the chat span's alone high-confidence, the tool spans quarantined
    assert not result.quarantined
    assert confidences(result) == confidences(whole)
    assert expected_calls(result) == expected_calls(whole)
    assert {c.provenance.source.file for c in result.cases} == {str(first)}
    assert {c.domain for c in result.cases} == {c.domain for c in whole.cases}
    # a file mined alone still ends its traces at its end
    alone = list(otel.parse(first, max_turns=50))
    assert [type(i).__name__ for i in alone] == ["Conversation"]


def test_whole_traces_ended_by_the_window_keep_their_resolution(tmp_path):
    """In a long export the window ends most traces: one whose root span was seen and whose
    calls all have results is whole, so it is mined as the log says."""
    docs = [otel_export(r, f"{i + 1:032x}", with_responses=True) for i, r in enumerate(RECORDS)]
    log = write_jsonl(tmp_path / "long.jsonl", docs)
    items = list(otel.parse(log, max_turns=50, window=2))
    # before: every trace ended by the window was taken as a part, its resolution unknown
    assert [(i.partial, i.resolved) for i in items] == [(None, r["resolved"]) for r in RECORDS]


def test_a_trace_ended_by_the_window_before_its_root_span_is_a_part(tmp_path):
    docs = [otel_export(r, f"{i + 1:032x}", with_responses=True) for i, r in enumerate(RECORDS)]
    for doc in docs:  # children of an agent-run span that is never exported
        for span in spans_of(doc):
            span["parentSpanId"] = "f" * 16
    log = write_jsonl(tmp_path / "rootless.jsonl", docs)
    items = list(otel.parse(log, max_turns=50, window=2))
    spread = otel.SPREAD.format(window=2)
    assert [(i.partial, i.resolved) for i in items[:3]] == [(spread, None)] * 3
    # a root span that is no GenAI span (the agent run's, an HTTP request's) closes its trace
    for doc in docs:
        spans_of(doc).append({"traceId": spans_of(doc)[0]["traceId"], "attributes": []})
    log = write_jsonl(tmp_path / "rooted.jsonl", docs)
    items = list(otel.parse(log, max_turns=50, window=2))
    assert [(i.partial, i.resolved) for i in items] == [(None, r["resolved"]) for r in RECORDS]


def test_one_pretty_printed_document_is_read_whole(tmp_path):
    doc = otel_export(RECORDS[0], TRACE, with_responses=True)
    compact = mine([write_jsonl(tmp_path / "one.jsonl", [doc])], "otel", redact=False)
    (tmp_path / "pretty.json").write_text(json.dumps(doc, indent=2))
    pretty = mine([tmp_path / "pretty.json"], "otel", redact=False)
    assert pretty.quarantined == ()
    assert expected_calls(pretty) == expected_calls(compact)
    assert confidences(pretty) == confidences(compact)


def test_a_truncated_first_line_loses_nothing_but_itself(tmp_path):
    docs = [otel_export(r, f"{i + 1:032x}", with_responses=True) for i, r in enumerate(RECORDS)]
    log = write_jsonl(tmp_path / "cut.jsonl", docs)
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(lines[0][:300] + b"\n" + b"".join(lines[1:]))
    result = mine([log], "otel", redact=False)
    # before: the lines after it were held as one pretty-printed document, and all were lost
    assert [(q.line, q.reason) for q in result.quarantined] == [(1, "truncated")]
    assert result.summary.conversations_read == len(RECORDS) - 1


def test_a_pretty_printed_document_over_the_limit_or_cut_short_is_one_record(tmp_path, monkeypatch):
    doc = otel_export(RECORDS[0], TRACE, with_responses=True)
    text = json.dumps(doc, indent=2)
    (tmp_path / "cut.json").write_text(text[:-30])
    assert [(q.line, q.reason) for q in mine([tmp_path / "cut.json"], "otel").quarantined] == [
        (1, "truncated")
    ]
    (tmp_path / "big.json").write_text(text)
    monkeypatch.setattr(otel_documents, "MAX_LINE_BYTES", len(text) // 2)
    result = mine([tmp_path / "big.json"], "otel")
    # before: each of its lines was a record of its own
    assert [(q.line, q.reason) for q in result.quarantined] == [(1, "line_too_long")]
    assert "one pretty-printed JSON document over the 16 MiB limit" in result.quarantined[0].message


def test_a_trace_keeps_the_messages_of_its_longest_history_and_of_its_last_call_alone():
    trace = otel_traces.Trace("t", 1, 1)
    sizes = [3, 9, 5, 2]  # messages of each model call, in the order they started
    for n, size in enumerate(sizes):
        history = json.dumps([{"role": "user", "content": "x"}] * size)
        trace.add(
            otel_traces.Span(
                n, {"gen_ai.operation.name": "chat", "gen_ai.input.messages": history}, None
            )
        )
    kept = ["gen_ai.input.messages" in s.attrs for s in trace.spans]
    # the longest (an inner agent's, maybe) and the last (the outer agent's answer)
    assert kept == [False, True, False, True]
