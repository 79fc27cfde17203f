"""The transcript, CSV and OpenTelemetry parsers agree with the chat-format one where they can."""

from __future__ import annotations

import csv
import json

import pytest
from mining_helpers import mined_content, sample_records, write_jsonl

from casemill.errors import UserError
from casemill.mining import mine
from casemill.mining.parsers.csv_tickets import CsvMapping
from casemill.mining.synthetic_otel import otel_export

RECORDS = sample_records(6, seed=5)


def calls_by_case(result):
    return sorted(
        (
            c.provenance.source.conversation_id,
            c.provenance.operators[0].name,
            json.dumps([e.model_dump(mode="json") for e in c.expected.tool_calls]),
            c.provenance.label_confidence,
        )
        for c in result.cases
    )


def test_transcripts_become_low_confidence_unlabelled_cases(tmp_path):
    text = (
        "id: t-1\nuser: Hi, my order W1001 never came.\nI waited two weeks.\n"
        'assistant: None\ntool: {"order_id": "W1001", "status": "shipped"}\n'
        "assistant: It is on its way.\n---\nuser: hello\nassistant: hi, how can I help?\n"
    )
    log = tmp_path / "t.txt"
    log.write_text(text)
    result = mine([log], "transcript", redact=False)
    assert [c.provenance.source.conversation_id for c in result.cases] == ["t-1", "t:8"]
    first = result.cases[0]
    assert [t.role for t in first.conversation] == ["customer"]
    assert "I waited two weeks." in first.user_scenario
    assert first.expected.tool_calls == () and first.provenance.label_confidence == "low"
    assert "needs_label" in first.tags.labels
    assert "tool calls not visible" in first.provenance.notes
    assert first.environment.state == {
        "records": {"observed": [{"order_id": "W1001", "status": "shipped"}]}
    }
    assert result.cases[1].provenance.source.line == 8


def test_a_transcript_without_a_role_prefix_is_quarantined(tmp_path):
    log = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"messages_display": "hello there\nuser: hi"},
            {"messages_display": "user: hi\nassistant: hello"},
        ],
    )
    result = mine([log], "transcript")
    # the field is the line's key (was 'transcript', a key this log does not have)
    assert [(q.line, q.reason, q.field) for q in result.quarantined] == [
        (1, "unknown_role", "messages_display")
    ]
    assert len(result.cases) == 1


def test_a_plain_transcript_line_over_the_size_limit_quarantines_its_conversation(
    tmp_path, monkeypatch
):
    from functools import partial

    from casemill.mining import reading
    from casemill.mining.parsers import transcript

    monkeypatch.setattr(transcript, "iter_lines", partial(reading.iter_lines, max_bytes=20_000))
    log = tmp_path / "t.txt"
    log.write_text(
        "user: my lamp broke\nassistant: sorry\n---\n"
        f"user: {'x' * 30_000}\nassistant: ok\n---\nuser: hello\nassistant: hi\n"
    )
    result = mine([log], "transcript")
    # before, the line's first 200 bytes were mined as if they were the whole message
    assert [(q.line, q.reason) for q in result.quarantined] == [(4, "line_too_long")]
    assert "line 4 is over" in result.quarantined[0].message
    assert [c.provenance.source.line for c in result.cases] == [1, 7]


@pytest.mark.shared_data
def test_retail_transcripts_all_reach_review_unlabelled(shared_data):
    log = shared_data / "tau-bench-retail-logs" / "retail_conversations.jsonl"
    result = mine([log], "transcript")
    assert result.summary.conversations_read == 69 and not result.quarantined
    assert all(c.domain == "generic:retail" for c in result.cases)
    assert all(
        "needs_label" in c.tags.labels and c.review.status == "pending" for c in result.cases
    )


def _csv(
    path,
    records,
    columns=(
        "ticket_id",
        "role",
        "message",
        "status",
        "tool_name",
        "tool_arguments",
        "tool_call_id",
    ),
):
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for r in records:
            for m in r["messages"]:
                role = {"user": "customer", "assistant": "agent"}.get(m["role"], m["role"])
                tc = (m.get("tool_calls") or [{}])[0]
                fn = tc.get("function", {})
                writer.writerow(
                    [
                        r["conversation_id"],
                        role,
                        m.get("content") or "",
                        "solved" if r["resolved"] else "open",
                        fn.get("name", ""),
                        fn.get("arguments", ""),
                        tc.get("id") or m.get("tool_call_id", ""),
                    ]
                )
    return path


def test_csv_tickets_give_the_same_cases_as_chat_logs(tmp_path):
    chat_log = write_jsonl(tmp_path / "c.jsonl", RECORDS)
    csv_log = _csv(tmp_path / "t.csv", RECORDS)
    assert calls_by_case(mine([csv_log], "csv")) == calls_by_case(mine([chat_log], "openai-jsonl"))


def test_csv_column_mapping_and_missing_columns(tmp_path):
    cols = ("Ticket", "Author", "Body", "State", "Tool", "Args", "CallId")
    log = _csv(tmp_path / "t.csv", RECORDS[:2], cols)
    mapping = CsvMapping(
        conversation_id="Ticket",
        role="Author",
        content="Body",
        resolved="State",
        tool_name="Tool",
        tool_arguments="Args",
        tool_call_id="CallId",
    )
    result = mine([log], "csv", csv_mapping=mapping)
    assert result.summary.conversations_read == 2 and len(result.cases) >= 2
    with pytest.raises(UserError, match="no column 'ticket_id'"):
        mine([log], "csv")


def test_an_optional_csv_column_the_mapping_names_must_be_in_the_header(tmp_path):
    log = _csv(tmp_path / "t.csv", RECORDS[:2])
    # before, a misspelt status column left every ticket unresolved (low confidence), silently
    with pytest.raises(UserError, match="t.csv:1: CSV header has no column 'State'"):
        mine([log], "csv", csv_mapping=CsvMapping(resolved="State"))
    with pytest.raises(UserError, match="no column 'Tool'"):
        mine([log], "csv", csv_mapping=CsvMapping(tool_name="Tool"))
    # the defaults stay optional: an export without tool columns is read
    bare = tmp_path / "bare.csv"
    bare.write_text("ticket_id,role,message\nT1,customer,my lamp broke\nT1,agent,sorry\n")
    assert mine([bare], "csv").summary.conversations_read == 1
    assert mine([bare], "csv", csv_mapping=CsvMapping(resolved=None)).quarantined == ()


MAPPING_KEYS = (
    "keys conversation_id, role, content, resolved, tool_name, tool_arguments, tool_call_id, "
    "transcript"
)


def test_a_missing_csv_column_names_a_few_header_columns(tmp_path):
    log = tmp_path / "t.csv"
    log.write_text(",".join(f"Field {n}" for n in range(1, 16)) + "\nT1,customer,hi\n")
    with pytest.raises(UserError) as caught:
        mine([log], "csv")
    assert str(caught.value) == (
        f"{log}:1: CSV header has no column 'ticket_id', 'role' or 'message' (columns: "
        + ", ".join(f"Field {n}" for n in range(1, 13))
        + f", ... (3 more)); pass a --csv-mapping naming your columns ({MAPPING_KEYS})"
    )


def test_a_json_line_given_as_a_csv_header_is_counted_not_quoted(tmp_path):
    log = write_jsonl(tmp_path / "chat.jsonl", RECORDS[:1])  # given as CSV by mistake
    cells = len(next(csv.reader(log.open(newline=""))))
    with pytest.raises(UserError) as caught:
        mine([log], "csv")
    # before, a dozen of its cells were quoted, each cut to 40 characters
    assert str(caught.value) == (
        f"{log}:1: CSV header has no column 'ticket_id', 'role' or 'message': the first row "
        f"does not look like a header ({cells} cells split at ',', not shown as they may hold a "
        "customer's words); put the header row first or pass a --csv-mapping naming your "
        f"columns ({MAPPING_KEYS})"
    )


def test_a_missing_csv_column_message_holds_no_personal_data_of_the_first_line(tmp_path):
    log = tmp_path / "chat.txt"  # a transcript given as CSV by mistake
    log.write_text("user: Hi, I'm Ana Diaz, ana.diaz@example.com, (415) 555-0134\nassistant: hi\n")
    with pytest.raises(UserError) as caught:
        mine([log], "csv")
    said = str(caught.value)
    assert "no column 'ticket_id'" in said and "(4 cells split at ','" in said
    for raw in ("Ana", "Diaz", "ana.diaz", "555-0134", "Hi"):
        assert raw not in said


def test_a_ticket_row_given_as_the_csv_header_is_not_quoted_in_the_error(tmp_path):
    log = tmp_path / "h.csv"
    log.write_text(
        "Hi this is from Eleanor Rigby, call +447700900123 or 07700 900123, "
        "email e.rigby@example.com\nT1,user,hello\n"
    )
    with pytest.raises(UserError) as caught:
        mine([log], "csv")
    # before, the row was quoted with only the email masked: the name and both phone numbers
    assert str(caught.value) == (
        f"{log}:1: CSV header has no column 'ticket_id', 'role' or 'message': the first row "
        "does not look like a header (3 cells split at ',', not shown as they may hold a "
        "customer's words); put the header row first or pass a --csv-mapping naming your "
        f"columns ({MAPPING_KEYS})"
    )


def test_csv_rows_are_placed_at_the_line_they_start_on(tmp_path):
    log = tmp_path / "t.csv"
    with log.open("w", newline="") as fh:
        csv.writer(fh).writerows(
            [
                ["id", "conv", "status"],
                ["X1", "user: my lamp broke\nassistant: None\ntool: {}\nassistant: ok", "solved"],
                ["X2", "no role prefix", "open"],
                ["X3", "user: thanks\nassistant: bye", "closed"],
            ]
        )
    mapping = CsvMapping(conversation_id="id", transcript="conv", resolved="status")
    result = mine([log], "csv", csv_mapping=mapping)
    assert [
        (c.provenance.source.conversation_id, c.provenance.source.line) for c in result.cases
    ] == [
        ("X1", 2),
        ("X3", 7),
    ]
    assert [(q.line, q.reason, q.field) for q in result.quarantined] == [
        (6, "unknown_role", "conv")
    ]


def test_csv_row_with_invalid_utf8_quarantines_its_ticket(tmp_path):
    log = _csv(tmp_path / "t.csv", RECORDS[:2])
    data = log.read_bytes().replace(b"Hi, I'm", b"Hi, I\xff'm", 1)
    log.write_bytes(data)
    result = mine([log], "csv")
    assert [q.reason for q in result.quarantined] == ["invalid_utf8"]
    assert result.summary.conversations_read == 1


def test_a_csv_cell_over_128_kib_is_mined(tmp_path):
    # the csv module's default field limit (131,072) made this a traceback that lost every output
    log = _csv(tmp_path / "t.csv", RECORDS[:2])
    rows = list(csv.reader(log.open(newline="")))
    rows[2][2] = "my lamp broke. " + "x" * 200_000  # the first customer message
    with log.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    result = mine([log], "csv", redact=False)
    assert result.quarantined == () and result.summary.conversations_read == 2
    said = [t.content for c in result.cases for t in c.conversation]
    assert any(t.startswith("my lamp broke. xxx") for t in said)  # capped as any long turn


def test_an_unreadable_csv_row_quarantines_its_ticket_and_the_others_are_mined(tmp_path):
    log = _csv(tmp_path / "t.csv", RECORDS[:3])
    lines = log.read_bytes().split(b"\r\n")
    second = RECORDS[1]["conversation_id"]
    starts = next(i for i, line in enumerate(lines) if line.startswith(second.encode())) + 1
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{second},agent".encode()))
    lines[at] = lines[at].replace(b",agent,", b',agent,"stray" quote,', 1)  # a quote out of place
    lines.insert(-1, b'Z9,customer,"a quoted cell never closed,open')
    log.write_bytes(b"\r\n".join(lines))
    result = mine([log], "csv")
    # (a ticket is finished at the end of the file or once its rows stop for the window's
    # length: its record comes after the unreadable rows read before then)
    assert [(q.line, q.reason, q.conversation_id) for q in result.quarantined] == [
        (at + 1, "bad_row", second),  # the row, and the ticket its first cell names
        (len(lines) - 1, "bad_row", "Z9"),
        (starts, "bad_row", second),
    ]
    assert f"line {at + 1} skipped" in result.quarantined[0].message
    assert "unexpected end of data" in result.quarantined[1].message
    mined = {c.provenance.source.conversation_id for c in result.cases}
    assert mined == {RECORDS[0]["conversation_id"], RECORDS[2]["conversation_id"]}


def test_a_ticket_that_lost_a_row_to_an_unclosed_quote_above_it_is_quarantined(tmp_path):
    log = tmp_path / "t.csv"
    log.write_text(
        "ticket_id,role,message,status\n"
        "T-100,user,Cancel order W1 please,resolved\n"
        "T-100,assistant,Done,resolved\n"
        'T-200,user,"my order is broken,resolved\n'  # a quoted cell never closed
        "T-200,assistant,ok,resolved\n"
        'T-300,user,"I need to cancel order W3, wrong size",resolved\n'  # read into T-200's row
        "T-300,assistant,Sure I cancelled it,resolved\n"
        "T-300,user,thanks,resolved\n"
        "T-400,user,hello,resolved\n"
        "T-400,assistant,hi,resolved\n"
    )
    result = mine([log], "csv", redact=False)
    # before, T-300 was mined from line 7 on: without its request, the customer only said thanks
    assert [q.model_dump() for q in result.quarantined] == [
        {
            "file": str(log),
            "line": 4,
            "reason": "bad_row",
            "message": "not a readable CSV row (',' expected after '\"'); lines 4 to 6 "
            "skipped, and the tickets with a row on them",
            "field": None,
            "conversation_id": "T-200",
        },
        {
            "file": str(log),
            "line": 7,
            "reason": "bad_row",
            "message": "a row of this ticket (line 6, read into the unreadable row at line 4) "
            "could not be read; the ticket is skipped",
            "field": None,
            "conversation_id": "T-300",
        },
    ]
    assert [
        (c.provenance.source.conversation_id, c.provenance.source.line, c.user_scenario)
        for c in result.cases
    ] == [
        ("T-100", 2, "The customer, in their own words: Cancel order W1 please"),
        ("T-400", 9, "The customer, in their own words: hello"),
    ]


def test_a_swallowed_csv_row_is_found_with_the_mapping_delimiter(tmp_path):
    log = tmp_path / "t.csv"
    log.write_text(
        "ticket_id;role;message\n"
        'T1;customer;"my lamp broke\n'
        "T2;customer;hello\n"
        'T3;customer;"it is "late"\n'  # the stray quote the reader stops at, T2's row read in
        "T2;agent;hi\n"
        "T4;customer;hi\n"
    )
    result = mine([log], "csv", csv_mapping=CsvMapping(delimiter=";"))
    assert [(q.line, q.conversation_id, q.message) for q in result.quarantined] == [
        (
            2,
            "T1",
            "not a readable CSV row (';' expected after '\"'); lines 2 to 4 skipped, "
            "and the tickets with a row on them",
        ),
        (
            5,
            "T2",
            "a row of this ticket (line 3, read into the unreadable row at line 2) "
            "could not be read; the ticket is skipped",
        ),
    ]
    assert [c.provenance.source.conversation_id for c in result.cases] == ["T4"]


def test_a_csv_row_with_more_cells_than_the_header_quarantines_its_ticket(tmp_path):
    log = tmp_path / "t.csv"
    log.write_text(
        "ticket_id,role,message,status\n"
        "T1,customer,Hi, I need help,open\n"  # a comma in a cell not quoted
        "T1,agent,sure,open\n"
        "T2,customer,my lamp broke,closed\n"
        "T2,agent,sorry,closed,,\n"  # empty cells past the header's are no harm
    )
    result = mine([log], "csv")
    # before, T1 was mined with the message 'Hi' and the status ' I need help'
    assert [(q.line, q.reason, q.conversation_id) for q in result.quarantined] == [
        (2, "bad_row", "T1"),
        (3, "bad_row", "T1"),  # the rest of its ticket
    ]
    assert "5 cells where the header has 4 columns" in result.quarantined[0].message
    assert {c.provenance.source.conversation_id for c in result.cases} == {"T2"}


def test_a_carriage_return_alone_in_an_unquoted_csv_cell_quarantines_its_row(tmp_path):
    log = tmp_path / "t.csv"
    log.write_bytes(
        b"ticket_id,role,message\nT1,customer,my lamp\rbroke\nT1,agent,sorry\n"
        b"T2,customer,hello\nT2,agent,hi\n"
    )
    result = mine([log], "csv")  # was a csv.Error traceback that lost every output
    assert [(q.line, q.reason) for q in result.quarantined] == [(2, "bad_row"), (3, "bad_row")]
    assert "new-line character seen in unquoted field" in result.quarantined[0].message
    assert {c.provenance.source.conversation_id for c in result.cases} == {"T2"}


def test_a_csv_line_over_the_size_limit_quarantines_its_ticket(tmp_path, monkeypatch):
    from functools import partial

    from casemill.mining import reading
    from casemill.mining.parsers import csv_tickets

    monkeypatch.setattr(csv_tickets, "iter_lines", partial(reading.iter_lines, max_bytes=20_000))
    log = _csv(tmp_path / "t.csv", RECORDS[:2])
    rows = list(csv.reader(log.open(newline="")))
    first_id = rows[1][0]
    rows[1][2] = "x" * 30_000  # its start, kept alone, would open a quoted cell never closed
    rows[1][2] = '"' + rows[1][2]
    with log.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    result = mine([log], "csv")
    assert [(q.line, q.reason) for q in result.quarantined] == [
        (2, "line_too_long"),
        (3, "bad_row"),
    ]
    assert result.quarantined[1].conversation_id == first_id
    assert {c.provenance.source.conversation_id for c in result.cases} == {rows[-1][0]}


def test_csv_mapping_words_match_whatever_their_case(tmp_path):
    log = _csv(tmp_path / "t.csv", RECORDS[:4])
    text = log.read_text().replace(",solved,", ",Solved,").replace(",agent,", ",Agent,")
    log.write_text(text)
    default = mine([log], "csv")
    mapping = CsvMapping(
        resolved_values=("Solved",),
        role_values={"Customer": "user", "AGENT": "assistant", "tool": "tool"},
    )
    mapped = mine([log], "csv", csv_mapping=mapping)
    assert mapped.quarantined == default.quarantined == ()
    assert calls_by_case(mapped) == calls_by_case(default)
    assert "high" in {c.provenance.label_confidence for c in mapped.cases}


def test_otel_spans_give_the_same_cases_as_chat_logs(tmp_path):
    chat_log = write_jsonl(tmp_path / "c.jsonl", RECORDS)
    docs = [otel_export(r, f"{i:032x}", with_responses=i % 2 == 0) for i, r in enumerate(RECORDS)]
    otel_log = write_jsonl(tmp_path / "spans.jsonl", docs)
    otel = mine([otel_log], "otel")
    assert calls_by_case(otel) == calls_by_case(mine([chat_log], "openai-jsonl"))
    assert {c.provenance.source.format for c in otel.cases} == {"otel"}


def test_otel_spans_of_one_trace_across_lines_and_bad_documents(tmp_path):
    doc = otel_export(RECORDS[0], "a" * 32)
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    halves = [json.loads(json.dumps(doc)) for _ in range(2)]
    halves[0]["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans[::2]
    halves[1]["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans[1::2]
    log = write_jsonl(tmp_path / "spans.jsonl", [halves[1], {"nope": 1}, halves[0]])
    result = mine([log], "otel", redact=False)
    assert [(q.line, q.reason) for q in result.quarantined] == [(2, "bad_span")]
    single = mine([write_jsonl(tmp_path / "one.jsonl", [doc])], "otel", redact=False)
    assert calls_by_case(result) == calls_by_case(single)


def test_otel_spans_with_no_trace_id_are_quarantined_not_merged_into_one_conversation(tmp_path):
    docs = [otel_export(r, f"{i:032x}") for i, r in enumerate(RECORDS[:3])]
    for doc in docs[:2]:
        for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            del span["traceId"]
    log = write_jsonl(tmp_path / "spans.jsonl", docs)
    result = mine([log], "otel", redact=False)
    # before, the two conversations' spans were grouped under the trace id "" as one
    assert [(q.line, q.reason, q.field) for q in result.quarantined] == [
        (1, "bad_span", "resourceSpans[0].scopeSpans[0].spans[0].traceId"),
        (2, "bad_span", "resourceSpans[0].scopeSpans[0].spans[0].traceId"),
    ]
    assert "more span(s) of this line" in result.quarantined[0].message
    assert result.summary.conversations_read == 1
    single = mine([write_jsonl(tmp_path / "one.jsonl", docs[2:])], "otel", redact=False)
    assert calls_by_case(result) == calls_by_case(single)


def test_otel_a_trace_with_spans_on_a_line_that_cannot_be_read_is_quarantined(tmp_path):
    doc = otel_export(RECORDS[0], "a" * 32)
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    halves = [json.loads(json.dumps(doc)) for _ in range(2)]
    halves[0]["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans[::2]
    halves[1]["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans[1::2]
    cut = json.dumps(halves[1]).encode()[:-40]  # the line of its other spans, truncated
    other = otel_export(RECORDS[1], "b" * 32)
    log = write_jsonl(tmp_path / "spans.jsonl", [halves[0], cut, other])
    result = mine([log], "otel", redact=False)
    # before, the trace was mined from its first line alone, as if its other spans never were
    assert [(q.line, q.reason, q.conversation_id) for q in result.quarantined] == [
        (2, "truncated", None),
        (1, "bad_span", RECORDS[0]["conversation_id"]),
    ]
    assert "could not be read (truncated, line 2)" in result.quarantined[1].message
    alone = write_jsonl(tmp_path / "b.jsonl", [other])
    assert calls_by_case(result) == calls_by_case(mine([alone], "otel", redact=False))


def _chat_span(trace_id: str, inputs: str, start: str = "10") -> dict:
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": inputs}
    return {
        "traceId": trace_id,
        "startTimeUnixNano": start,
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }


def test_otel_traces_of_an_unexpected_shape_are_quarantined_one_by_one(tmp_path):
    def doc(span: dict) -> dict:
        return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}

    user = {"role": "user", "parts": [{"type": "text", "content": "hi"}]}
    docs = [
        doc(_chat_span("t1", json.dumps([{"role": "user", "content": "hi", "tool_calls": "x"}]))),
        doc(_chat_span("t2", "not json")),
        doc(_chat_span("t3", json.dumps([user]), start="soon")),
        otel_export(RECORDS[0], "a" * 32),
    ]
    result = mine([write_jsonl(tmp_path / "spans.jsonl", docs)], "otel", redact=False)
    got = [(q.line, q.reason, q.field) for q in result.quarantined]
    assert got == [
        (1, "bad_span", None),  # tool_calls is no list
        (2, "bad_span", "gen_ai.input.messages"),
        (3, "bad_span", "resourceSpans[0].scopeSpans[0].spans[0]"),  # a start time of no number
    ]
    assert "not JSON" in result.quarantined[1].message
    assert "could not be read (ValueError, line 3)" in result.quarantined[2].message
    assert {c.provenance.source.line for c in result.cases} == {4}


def test_otel_a_malformed_span_quarantines_its_trace_not_the_others_on_its_line(tmp_path):
    a, b = (otel_export(r, f"{i:032x}") for i, r in enumerate(RECORDS[:2]))
    spans_a = a["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans_b = b["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans_b[0]["startTimeUnixNano"] = "soon"
    bad_at = f"resourceSpans[0].scopeSpans[0].spans[{len(spans_a)}]"
    spans_a += spans_b  # one batch of both traces
    result = mine([write_jsonl(tmp_path / "spans.jsonl", [a])], "otel", redact=False)
    # before, the whole line was quarantined, trace A with it, and no field was named
    assert [(q.line, q.reason, q.field, q.conversation_id) for q in result.quarantined] == [
        (1, "bad_span", bad_at, RECORDS[1]["conversation_id"])
    ]
    alone = write_jsonl(tmp_path / "a.jsonl", [otel_export(RECORDS[0], "0" * 32)])
    assert calls_by_case(result) == calls_by_case(mine([alone], "otel", redact=False))


def test_otel_problems_name_the_span_attribute_they_come_from(tmp_path):
    def doc(*spans: dict) -> dict:
        return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}

    user = {"role": "user", "parts": [{"type": "text", "content": "hi"}]}
    call = {"type": "tool_call", "id": "k1", "name": "get_order", "arguments": "{not json"}
    tool_span = {
        "traceId": "t3",
        "startTimeUnixNano": "20",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "get_order"}},
            {"key": "gen_ai.tool.call.id", "value": {"stringValue": "k9"}},
            {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": "[1]"}},
        ],
    }
    docs = [
        doc(_chat_span("t1", json.dumps([user, {"role": "assistant", "parts": [call]}]))),
        doc(_chat_span("t2", json.dumps([user, {"role": "wizard", "parts": [user["parts"][0]]}]))),
        doc(_chat_span("t3", json.dumps([user])), tool_span),
    ]
    result = mine([write_jsonl(tmp_path / "spans.jsonl", docs)], "otel", redact=False)
    # before, the fields named the messages built from the spans (messages[1].tool_calls[0]
    # .function.arguments), which the export does not have
    assert [(q.line, q.reason, q.field) for q in result.quarantined] == [
        (1, "bad_tool_arguments", "gen_ai.input.messages[1].parts[0].arguments"),
        (2, "unknown_role", "gen_ai.input.messages[1].role"),
        (3, "bad_tool_arguments", "the execute_tool span of call k9: gen_ai.tool.call.arguments"),
    ]


def test_otel_uses_the_model_call_with_the_longest_history(tmp_path):
    doc = otel_export(RECORDS[1], "b" * 32, with_responses=True)
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    chat = spans[-1]
    early = json.loads(json.dumps(chat))
    for attr in early["attributes"]:
        if attr["key"] == "gen_ai.input.messages":
            attr["value"]["stringValue"] = json.dumps(json.loads(attr["value"]["stringValue"])[:2])
    early["startTimeUnixNano"] = "1"
    spans.append(early)
    with_early = mine([write_jsonl(tmp_path / "a.jsonl", [doc])], "otel", redact=False)
    plain = otel_export(RECORDS[1], "b" * 32, with_responses=True)
    without = mine([write_jsonl(tmp_path / "b.jsonl", [plain])], "otel", redact=False)
    assert calls_by_case(with_early) == calls_by_case(without)
    assert len(with_early.cases[0].conversation) == len(without.cases[0].conversation)


def test_chat_lines_may_keep_their_id_and_resolution_in_metadata(tmp_path):
    """`{"metadata": {"conversation_id": ..., "resolved": ...}, "messages": [...]}` gives the
    cases the same line with the keys on it gives; the line's own keys win."""
    flat = [dict(r) for r in RECORDS[:3]]
    nested = [
        {"messages": r["messages"], "metadata": {"conversation_id": r["conversation_id"],
                                                 "resolved": r["resolved"], "model": "m"}}
        for r in flat
    ]  # fmt: skip
    expected = calls_by_case(mine([write_jsonl(tmp_path / "flat.jsonl", flat)], "openai-jsonl"))
    got = calls_by_case(mine([write_jsonl(tmp_path / "nested.jsonl", nested)], "openai-jsonl"))
    assert got == expected and {c[0] for c in got} == {r["conversation_id"] for r in flat}
    assert any(c[3] == "high" for c in got)  # the resolution flag was read
    both = [{**nested[0], "conversation_id": "own", "resolved": False}]
    (case, *_) = mine([write_jsonl(tmp_path / "both.jsonl", both)], "openai-jsonl").cases
    assert case.provenance.source.conversation_id == "own"
    assert case.provenance.label_confidence == "low"
    # a null on the line says nothing: the metadata's flag is read (was: resolution unknown)
    null = [{**nested[0], "resolved": None}]
    got = calls_by_case(mine([write_jsonl(tmp_path / "null.jsonl", null)], "openai-jsonl"))
    assert got == [c for c in expected if c[0] == flat[0]["conversation_id"]]
    assert flat[0]["resolved"] and {c[3] for c in got} == {"high"}


def test_a_csv_export_sorted_by_time_gives_the_cases_of_one_sorted_by_ticket(tmp_path):
    by_ticket = _csv(tmp_path / "by_ticket.csv", RECORDS)
    header, *rows = by_ticket.read_text().splitlines(keepends=True)
    tickets: dict[str, list[str]] = {}
    for row in rows:
        tickets.setdefault(row.split(",", 1)[0], []).append(row)
    # the n-th message of every ticket, then the n+1-th: concurrent conversations
    longest = max(map(len, tickets.values()))
    by_time = [t[n] for n in range(longest) for t in tickets.values() if n < len(t)]
    assert by_time != rows
    (tmp_path / "by_time.csv").write_text(header + "".join(by_time))
    sorted_result = mine([by_ticket], "csv", redact=False)
    result = mine([tmp_path / "by_time.csv"], "csv", redact=False)
    assert result.quarantined == () == sorted_result.quarantined
    assert mined_content(result) == mined_content(sorted_result)
