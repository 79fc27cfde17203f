"""Bad records are quarantined with file, line and reason; mining carries on with the rest."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from mining_helpers import call_msg, chat, result_msg, sample_records, write_jsonl

from casemill.mining import mine
from casemill.mining.parsers.openai_jsonl import parse

GOOD = sample_records(3)


def _bad_log(tmp_path: Path) -> Path:
    good_line = json.dumps(GOOD[0]).encode()
    records = [
        GOOD[0],  # line 1
        good_line[: len(good_line) // 2],  # 2: truncated
        b"this is not json at all",  # 3: not JSON
        chat("bad-role", [{"role": "user", "content": "hi"}, {"role": "wizard", "content": "x"}]),
        chat("orphan", [{"role": "user", "content": "hi"}, result_msg("nope", "{}")]),  # 5
        chat(
            "bad-args",
            [
                {"role": "user", "content": "refund"},
                call_msg("c1", "refund_items", "{order_id: W1001"),
            ],
        ),  # 6
        b'{"conversation_id": "utf", "messages": [{"role": "user", "content": "caf\xe9"}]}',  # 7
        [1, 2, 3],  # 8: not an object
        GOOD[1],  # 9
    ]
    return write_jsonl(tmp_path / "bad.jsonl", records)


def test_each_bad_line_is_quarantined_with_its_line_and_reason(tmp_path):
    log = _bad_log(tmp_path)
    result = mine([log], "openai-jsonl")
    got = {(q.line, q.reason) for q in result.quarantined}
    assert got == {
        (2, "truncated"),
        (3, "invalid_json"),
        (4, "unknown_role"),
        (5, "orphan_tool_result"),
        (6, "bad_tool_arguments"),
        (7, "invalid_utf8"),
        (8, "not_an_object"),
    }
    assert all(q.file == str(log) for q in result.quarantined)
    fields = {q.reason: q.field for q in result.quarantined}
    assert fields["unknown_role"] == "messages[1].role"
    assert fields["bad_tool_arguments"] == "messages[1].tool_calls[0].function.arguments"
    assert fields["orphan_tool_result"] == "messages[1].tool_call_id"
    # the good conversations around the bad lines are mined
    mined = {c.provenance.source.conversation_id for c in result.cases}
    assert mined == {"sup-00000", "sup-00001"}
    assert {c.provenance.source.line for c in result.cases} == {1, 9}
    assert result.summary.conversations_read == 2
    assert result.summary.quarantined == {
        "bad_tool_arguments": 1,
        "invalid_json": 1,
        "invalid_utf8": 1,
        "not_an_object": 1,
        "orphan_tool_result": 1,
        "truncated": 1,
        "unknown_role": 1,
    }


def test_tool_calls_that_are_no_list_are_quarantined(tmp_path):
    odd = [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": 5}]
    log = write_jsonl(tmp_path / "odd.jsonl", [chat("odd", odd), GOOD[0]])
    result = mine([log], "openai-jsonl")
    assert [(q.line, q.reason, q.field) for q in result.quarantined] == [
        (1, "bad_message", "messages[1].tool_calls")
    ]
    assert {c.provenance.source.line for c in result.cases} == {2}


def test_a_ten_thousand_turn_conversation_is_capped_and_reported(tmp_path):
    messages = [
        {"role": "system", "content": "Authenticated customer: C1001 (Ana Diaz, a@example.com)"}
    ]
    for i in range(5000):
        messages.append({"role": "user", "content": f"message {i}"})
        messages.append({"role": "assistant", "content": f"reply {i}"})
    log = write_jsonl(tmp_path / "long.jsonl", [chat("long", messages[:10_000]), GOOD[2]])
    result = mine([log], "openai-jsonl", options=None)
    capped = [q for q in result.quarantined if q.reason == "too_many_turns"]
    assert len(capped) == 1 and capped[0].line == 1
    assert "10,000 messages" in capped[0].message and "first 500" in capped[0].message
    long_cases = [c for c in result.cases if c.provenance.source.line == 1]
    assert long_cases and all(len(c.conversation) <= 500 for c in long_cases)
    assert all("capped at 500 of 10000" in (c.provenance.notes or "") for c in long_cases)
    assert all("needs_label" in c.tags.labels for c in long_cases)
    assert result.summary.capped_conversations == 1
    assert any(c.provenance.source.line == 2 for c in result.cases)


def test_gzip_logs_are_read_transparently(tmp_path):
    plain = write_jsonl(tmp_path / "log.jsonl", GOOD)
    packed = tmp_path / "log.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    a = mine([plain], "openai-jsonl")
    b = mine([packed], "openai-jsonl")
    assert [c.id for c in a.cases] == [c.id for c in b.cases]
    assert b.summary.bytes_read == packed.stat().st_size
    # a compressed log not named .gz is known by gzip's magic bytes (it was 57 records of
    # invalid UTF-8, and 'are the logs in --format openai-jsonl?')
    unnamed = tmp_path / "log-compressed.jsonl"
    unnamed.write_bytes(packed.read_bytes())
    c = mine([unnamed], "openai-jsonl")
    assert c.quarantined == () and [x.id for x in c.cases] == [x.id for x in a.cases]


def test_a_damaged_gzip_is_quarantined_and_what_came_before_it_is_mined(tmp_path):
    whole = gzip.compress(write_jsonl(tmp_path / "log.jsonl", GOOD).read_bytes())
    truncated = tmp_path / "cut.jsonl.gz"
    truncated.write_bytes(whole[:-12])  # the last block's end and the trailer lost
    not_gzip = write_jsonl(tmp_path / "plain.jsonl.gz", GOOD[:1])
    result = mine([truncated, not_gzip], "openai-jsonl")
    assert [(q.file, q.line, q.reason) for q in result.quarantined] == [
        (str(truncated), None, "unreadable"),
        (str(not_gzip), None, "unreadable"),
    ]
    assert "ends early" in result.quarantined[0].message
    assert "not a gzip file" in result.quarantined[1].message
    assert '{"' not in result.quarantined[1].message  # no content of the file
    assert result.summary.quarantined == {"unreadable": 2}
    # a damaged file counts whole once its reading stops (the summary's size, the progress bar)
    assert result.summary.bytes_read == truncated.stat().st_size + not_gzip.stat().st_size
    # the lines before the damage are mined
    assert {c.provenance.source.conversation_id for c in result.cases} >= {"sup-00000"}


def test_a_byte_order_mark_and_crlf_endings_are_read_as_the_plain_log(tmp_path):
    plain = write_jsonl(tmp_path / "log.jsonl", GOOD)
    marked = tmp_path / "marked.jsonl"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes().replace(b"\n", b"\r\n"))
    packed = tmp_path / "marked.jsonl.gz"
    packed.write_bytes(gzip.compress(marked.read_bytes()))
    want = [c.id for c in mine([plain], "openai-jsonl").cases]
    for log in (marked, packed):
        result = mine([log], "openai-jsonl")
        assert result.quarantined == ()
        assert [c.id for c in result.cases] == want


def test_an_overlong_line_is_skipped_without_reading_it_whole(tmp_path):
    from casemill.mining import reading

    log = tmp_path / "huge.jsonl"
    log.write_bytes(
        b'{"messages": ["' + b"x" * 50_000 + b'"]}\n' + json.dumps(GOOD[0]).encode() + b"\n"
    )
    lines = list(reading.iter_lines(log, max_bytes=20_000))
    assert lines[0].too_long and len(lines[0].data) == 200
    assert not lines[1].too_long and json.loads(lines[1].data)["conversation_id"] == "sup-00000"


def test_parser_streams_one_record_at_a_time(tmp_path):
    log = _bad_log(tmp_path)
    items = parse(log, max_turns=500)
    first = next(items)
    assert first.id == "sup-00000"  # a Conversation, produced before the rest is read


def test_a_field_value_of_punctuation_alone_is_not_taken_for_personal_data(tmp_path):
    """A `city` of "{}" replaced everywhere broke the JSON of the calls' arguments."""
    record = chat(
        "odd-city",
        [
            {"role": "user", "content": "Ship order W1 to 12 Main St please."},
            call_msg(
                "c1",
                "change_shipping_address",
                {"order_id": "W1", "address": {"street1": "12 Main St", "city": "{}", "meta": {}}},
            ),
            result_msg("c1", '{"status": "ok"}'),
        ],
    )
    result = mine([write_jsonl(tmp_path / "a.jsonl", [record])], "openai-jsonl")
    # before: a mining_error (the arguments' JSON no longer parsed once "{}" was replaced)
    assert result.quarantined == () and result.cases
    [call] = result.cases[0].expected.tool_calls
    assert call.params["address"]["city"] == "{}"
    assert "12 Main St" not in json.dumps(call.params)


def test_support_call_arguments_of_the_wrong_shape_give_a_case_naming_them(tmp_path):
    record = chat(
        "odd-items",
        [
            {"role": "user", "content": "Refund the vase of order W1 please."},
            call_msg(
                "c1", "refund_items", {"order_id": "W1", "item_ids": 1.5, "reason": "damaged"}
            ),
            result_msg("c1", '{"status": "ok"}'),
        ],
    )
    result = mine([write_jsonl(tmp_path / "a.jsonl", [record])], "openai-jsonl")
    # before: a mining_error (the support policy's call took item_ids for a list)
    assert result.quarantined == () and result.cases
    for case in result.cases:
        assert case.provenance.label_confidence == "low"
        assert "refund_items item_ids: 1.5 is not of type 'array'" in case.provenance.notes
