"""GenAI events sent as OTLP log records, read among the spans (`casemill.mining.parsers.otel_logs`), on
the export the OpenTelemetry OpenAI instrumentation 2.3b0 wrote (`otel_exports/`)."""

from __future__ import annotations

import json

from test_mining_otel_real import CONVERSATIONS, EXPORTS, heard

from casemill.mining import mine
from casemill.mining.parsers import otel

LEGACY = EXPORTS / "openai-v2-legacy-logs.jsonl"


def lines_of(kind: str) -> list[dict]:
    return [json.loads(ln) for ln in LEGACY.read_text().splitlines() if ln.startswith(kind, 2)]


def records(doc: dict) -> list[dict]:
    return doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]


def write(path, docs: list[dict]):
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


def test_log_records_without_their_spans_make_the_conversation(tmp_path):
    log = write(tmp_path / "logs.jsonl", lines_of("resourceLogs"))
    items = list(otel.parse(log, max_turns=50))
    assert [heard(i) for i in items] == CONVERSATIONS
    assert [i.resolved for i in items] == [None, None]  # the flag was on the spans


def test_the_event_name_may_be_an_attribute(tmp_path):
    docs = lines_of("resourceLogs")
    for doc in docs:
        for record in records(doc):
            name = record.pop("eventName")
            record["attributes"].append({"key": "event.name", "value": {"stringValue": name}})
    log = write(tmp_path / "named.jsonl", [*docs, *lines_of("resourceSpans")])
    assert [heard(i) for i in otel.parse(log, max_turns=50)] == CONVERSATIONS


def test_other_log_records_are_left_alone_and_an_untraced_event_is_quarantined(tmp_path):
    docs = lines_of("resourceLogs")
    app_log = {"body": {"stringValue": "GET /health 200"}, "traceId": "ab" * 16}
    untraced = {
        "eventName": "gen_ai.user.message",
        "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "hi"}}]}},
    }
    records(docs[0]).extend([app_log, untraced])
    log = write(tmp_path / "mixed.jsonl", [docs[0], *lines_of("resourceSpans"), docs[1]])
    result = mine([log], "otel", redact=False)
    [q] = result.quarantined
    n = len(records(docs[0])) - 1
    assert (q.line, q.reason, q.field) == (
        1,
        "bad_span",
        f"resourceLogs[0].scopeLogs[0].logRecords[{n}].traceId",
    )
    assert q.message.startswith("a GenAI log record with no traceId skipped")
    assert result.summary.conversations_read == 2


def test_a_log_line_that_cannot_be_read_quarantines_its_traces(tmp_path):
    text = LEGACY.read_text().splitlines(keepends=True)
    assert text[0].startswith('{"resourceLogs"')
    (tmp_path / "cut.jsonl").write_text(text[0][:-200] + "\n" + "".join(text[1:]))
    result = mine([tmp_path / "cut.jsonl"], "otel", redact=False)
    # the first conversation's messages were on that line: it is not mined without them
    assert [(q.line, q.reason) for q in result.quarantined] == [(1, "truncated"), (2, "bad_span")]
    assert [c.provenance.source.line for c in result.cases] == [3, 3]  # its logs line


def test_a_trace_opened_by_its_log_records_takes_its_spans_resource(tmp_path):
    spans = lines_of("resourceSpans")
    for doc in spans:
        doc["resourceSpans"][0]["resource"]["attributes"].append(
            {"key": "gen_ai.conversation.id", "value": {"stringValue": "conv-9"}}
        )
    logs = lines_of("resourceLogs")
    log = write(tmp_path / "res.jsonl", [logs[0], spans[0], logs[1], spans[1]])
    assert [i.id for i in otel.parse(log, max_turns=50)] == ["conv-9", "conv-9"]
