"""Logs of model calls, one a line (what gateways and call loggers write), are joined back into
the conversations they belong to: mined as the same conversations logged whole."""

from __future__ import annotations

import json

import pytest
from mining_helpers import (
    call_msg,
    chat_of,
    interleaved,
    mined_content,
    result_msg,
    sample_records,
    until_last_reply,
    write_jsonl,
)

from casemill.mining import mine
from casemill.mining.parsers.model_calls import CallJoiner, call_of, fingerprint, shared_id
from casemill.mining.synthetic import model_calls

RECORDS = sample_records(8, seed=5)
SYSTEM = {"role": "system", "content": "You are a support agent."}


def joined(lines: list[dict], joiner: CallJoiner | None = None) -> list:
    """The conversations `lines` give, those finished on the way then the rest."""
    joiner, got = joiner or CallJoiner(), []
    for number, line in enumerate(lines, 1):
        got += joiner.add(number, line, call_of(line))
    return got + list(joiner.finish())


def test_interleaved_calls_are_mined_as_the_conversations_logged_whole(tmp_path):
    records = [until_last_reply(r) for r in RECORDS]
    calls = [model_calls(r) for r in records]
    assert sum(len(c) for c in calls) > 2 * len(records)  # several calls a conversation
    log = write_jsonl(tmp_path / "calls.jsonl", interleaved(calls))
    result = mine([log], "openai-jsonl", redact=False)
    # before: a conversation a call, each a prefix of the next, the last missing its answer
    assert result.summary.conversations_read == len(records)
    assert result.quarantined == ()
    assert mined_content(result) == mined_content(chat_of(tmp_path, records))
    # each conversation is named by its first call and located at its line
    lines = json.loads("[" + ",".join(log.read_text().splitlines()) + "]")
    first = {}
    for number, line in enumerate(lines, 1):
        first.setdefault(line["id"].rsplit("-call", 1)[0], (line["id"], number))
    got = {(c.provenance.source.conversation_id, c.provenance.source.line) for c in result.cases}
    assert got == set(first.values())


def test_a_proxys_request_and_response_objects_are_read_as_well(tmp_path):
    records = [until_last_reply(r) for r in RECORDS[:4]]
    calls = [model_calls(r, wrapped=True) for r in records]
    log = write_jsonl(tmp_path / "calls.jsonl", interleaved(calls))
    result = mine([log], "openai-jsonl", redact=False)
    assert result.summary.conversations_read == len(records)
    assert mined_content(result) == mined_content(chat_of(tmp_path, records))


def test_calls_without_a_resolution_flag_give_cases_needing_a_label(tmp_path):
    records = [until_last_reply(r) for r in RECORDS[:3]]
    log = write_jsonl(
        tmp_path / "calls.jsonl", [c for r in records for c in model_calls(r, flag=False)]
    )
    result = mine([log], "openai-jsonl", redact=False)
    assert result.summary.conversations_read == 3
    assert {c.provenance.label_confidence for c in result.cases} == {"low"}


def _greeting(customer: str, n: int, opening: str = "hi") -> list[dict]:
    """A conversation that opens as every other does (`opening`, the same answer), then its
    own request and the agent's lookup of it."""
    hello = {"role": "user", "content": opening}
    answer = {"role": "assistant", "content": "Hello! How can I help?"}
    ask = {"role": "user", "content": customer}
    look = call_msg(f"call_{n}", "get_order", {"order_id": f"#W{n}"})
    found = result_msg(f"call_{n}", json.dumps({"order_id": f"#W{n}"}))
    done = {"role": "assistant", "content": f"Order #W{n} is on its way."}
    calls = [([SYSTEM, hello], answer), ([SYSTEM, hello, answer, ask], look)]
    calls.append(([SYSTEM, hello, answer, ask, look, found], done))
    return [
        {"id": f"c{n}-{k}", "messages": history, "response": {"choices": [{"message": said}]}}
        for k, (history, said) in enumerate(calls)
    ]


def test_conversations_that_open_alike_stay_apart(tmp_path):
    one, two = _greeting("where is #W1?", 1), _greeting("where is #W2?", 2)
    # both greeted before either goes on; the second goes on first
    lines = [one[0], two[0], two[1], one[1], one[2], two[2]]
    got = joined(lines)
    assert len(got) == 2
    said = sorted(
        tuple(m["content"] for m in j.messages if m["role"] == "user" and m["content"] != "hi")
        for j in got
    )
    assert said == [("where is #W1?",), ("where is #W2?",)]
    for j in got:
        order = "#W1" if "#W1" in j.messages[3]["content"] else "#W2"
        assert j.messages[-1]["content"] == f"Order {order} is on its way."
    # the second greeting, the same call as the first's, is taken for it made again: its
    # conversation's next call holds it all the same
    assert sorted(j.calls for j in got) == [2, 4]


def test_a_failed_call_and_its_retry_are_one_conversation(tmp_path):
    calls = _greeting("where is #W1?", 1)
    failed = {**calls[1], "id": "failed", "response": None, "status": "failure"}
    lines = [calls[0], failed, calls[1], calls[2]]
    got = joined(lines)
    assert [(j.calls, j.first_line, j.last_line) for j in got] == [(4, 1, 4)]


def test_a_conversation_not_continued_within_the_window_is_finished_and_handed_on():
    calls = _greeting("where is #W1?", 1)
    other = _greeting("where is #W2?", 2, opening="hello")
    joiner = CallJoiner(window=2)
    assert joiner.add(1, calls[0], call_of(calls[0])) == []
    assert joiner.add(2, other[0], call_of(other[0])) == []
    assert joiner.add(3, other[1], call_of(other[1])) == []
    finished = joiner.add(4, other[2], call_of(other[2]))  # line 1 is 3 lines back
    assert [(j.first_line, j.calls) for j in finished] == [(1, 1)]
    late = joiner.add(5, calls[1], call_of(calls[1]))
    assert late == []
    rest = joined([], joiner)
    # the late call starts a conversation of its own (its history holds the first call's)
    assert [(j.first_line, j.calls) for j in rest] == [(2, 3), (5, 1)]


def test_a_bad_answer_is_quarantined_at_its_calls_line_naming_the_responses_field(tmp_path):
    calls = _greeting("where is #W1?", 1)
    bad = json.loads(json.dumps(calls[1]))
    message = bad["response"]["choices"][0]["message"]
    message["tool_calls"][0]["function"]["arguments"] = "{not json"
    good = [until_last_reply(r) for r in RECORDS[:2]]
    lines = [calls[0], bad, *[c for r in good for c in model_calls(r)]]
    result = mine([write_jsonl(tmp_path / "calls.jsonl", lines)], "openai-jsonl", redact=False)
    assert result.summary.conversations_read == 2  # the good ones are kept
    (q,) = result.quarantined
    assert (q.line, q.reason, q.conversation_id) == (2, "bad_tool_arguments", "c1-0")
    assert q.field == "response.choices[0].message.tool_calls[0].function.arguments"


def test_bad_tool_specs_of_a_wrapped_request_are_named_in_it(tmp_path):
    (line,) = model_calls(until_last_reply(RECORDS[0]), wrapped=True)[:1]
    line["request"]["tools"] = [{"type": "function", "function": {"description": "no name"}}]
    result = mine([write_jsonl(tmp_path / "calls.jsonl", [line])], "openai-jsonl", redact=False)
    (q,) = result.quarantined
    assert (q.line, q.reason, q.field) == (1, "bad_tools", "request.tools")


def test_a_line_without_a_response_is_a_conversation_as_before():
    record = until_last_reply(RECORDS[0])
    assert call_of(record) is None
    assert call_of({"response": {}, "messages": "not a list"}) is None
    failed = {**record, "response": None}
    assert call_of(failed).request is failed


def test_a_message_matches_itself_as_a_gateway_gives_it_back():
    sent = call_msg("call_1", "get_order", {"order_id": "#W1", "why": "late"})
    back = {**sent, "content": "", "refusal": None, "annotations": []}
    back["tool_calls"] = [
        {
            **sent["tool_calls"][0],
            "function": {"name": "get_order", "arguments": {"why": "late", "order_id": "#W1"}},
        }
    ]
    assert fingerprint(back) == fingerprint(sent)
    other = call_msg("call_2", "get_order", {"order_id": "#W1", "why": "late"})
    assert fingerprint(other) != fingerprint(sent)


def test_calls_sharing_a_session_id_keep_it_and_are_told_apart_by_it():
    one, two = _greeting("where is #W1?", 1), _greeting("where is #W2?", 2)
    for n, calls in ((1, one), (2, two)):
        for line in calls:
            line["trace_id"] = f"session-{n}"  # as LiteLLM logs a `litellm_session_id`
    lines = [one[0], two[0], two[1], one[1], one[2], two[2]]
    got = joined(lines)
    # both reached the greeting; the second's next call goes on with its own, not the first's
    assert sorted((shared_id(j), j.first_line, j.messages[3]["content"]) for j in got) == [
        ("session-1", 1, "where is #W1?"),
        ("session-2", 2, "where is #W2?"),
    ]


def test_a_fresh_trace_id_a_call_names_no_conversation():
    calls = _greeting("where is #W1?", 1)
    for k, line in enumerate(calls):
        line["trace_id"] = f"uuid-{k}"
    (conversation,) = joined(calls)
    assert shared_id(conversation) is None


def test_bad_tool_specs_in_litellms_model_parameters_are_named_there(tmp_path):
    line = model_calls(until_last_reply(RECORDS[0]))[0]
    line["model_parameters"] = {"tools": "get_order"}
    result = mine([write_jsonl(tmp_path / "calls.jsonl", [line])], "openai-jsonl", redact=False)
    (q,) = result.quarantined
    assert (q.line, q.reason, q.field) == (1, "bad_tools", "model_parameters.tools")


def test_a_history_holding_an_sdk_objects_text_is_quarantined_saying_so(tmp_path):
    calls = _greeting("where is #W1?", 1)
    for line in calls[1:]:  # the agent appended the SDK's message object; the logger str()-ed it
        line["messages"][2] = "Message(content='Hello! How can I help?', role='assistant')"
    result = mine([write_jsonl(tmp_path / "calls.jsonl", calls)], "openai-jsonl", redact=False)
    (q,) = result.quarantined
    assert (q.line, q.reason, q.field) == (3, "bad_message", "messages[2]")
    assert "not text" in q.message and "str()" in q.message


def test_a_call_of_another_session_does_not_continue_a_conversation():
    # two customers saying the same, the second's first calls not logged (a rotated file): its
    # last call's history begins where the first conversation is
    one, two = _greeting("where is #W1?", 1), _greeting("where is #W1?", 1)
    for session, calls in (("s-1", one), ("s-2", two)):
        for line in calls:
            line["session_id"] = session
    lines = [one[0], one[1], two[2], one[2]]
    got = joined(lines)
    assert sorted((j.first_line, j.calls, j.last["session_id"]) for j in got) == [
        (1, 3, "s-1"),
        (3, 1, "s-2"),
    ]
    # without session ids the two are one conversation whose last call was made twice
    for line in lines:
        del line["session_id"]
    assert [(j.first_line, j.calls) for j in joined(lines)] == [(1, 4)]


@pytest.mark.parametrize(
    ("request_key", "response_key"),
    [("request_body", "response_body"), ("input", "output")],  # Helicone's, OpenPipe's export
)
def test_exports_of_other_gateways_are_joined_alike(tmp_path, request_key, response_key):
    records = [until_last_reply(r) for r in RECORDS[:4]]
    calls = [model_calls(r, wrapped=True) for r in records]
    for line in (c for conversation in calls for c in conversation):
        line[request_key], line[response_key] = line.pop("request"), line.pop("response")
    log = write_jsonl(tmp_path / "calls.jsonl", interleaved(calls))
    result = mine([log], "openai-jsonl", redact=False)
    assert result.summary.conversations_read == len(records)
    assert mined_content(result) == mined_content(chat_of(tmp_path, records))
    # a problem in an answer is named by the export's own field
    bad = json.loads(json.dumps(calls[0][0]))
    bad[response_key]["choices"][0]["message"]["role"] = "wizard"
    bad_request = json.loads(json.dumps(calls[0][0]))
    bad_request[request_key]["messages"][1]["role"] = "wizard"
    lines = [bad, bad_request]
    result = mine([write_jsonl(tmp_path / "bad.jsonl", lines)], "openai-jsonl", redact=False)
    assert [(q.line, q.reason, q.field) for q in result.quarantined] == [
        (1, "unknown_role", f"{response_key}.choices[0].message.role"),
        (2, "unknown_role", f"{request_key}.messages[1].role"),
    ]


def test_helicones_session_property_names_the_conversation():
    calls = _greeting("where is #W1?", 1)
    for line in calls:
        line["request_properties"] = {"Helicone-Session-Id": "chat-77"}
    (conversation,) = joined(calls)
    assert shared_id(conversation) == "chat-77"


def test_a_call_made_again_takes_the_last_calls_place(tmp_path):
    calls = _greeting("where is #W1?", 1)
    again = {**calls[1], "id": "c1-1-again", "cache_hit": True}  # a retry, a cache hit
    lines = [calls[0], calls[1], again, calls[2]]
    # before: the call made again was a conversation of its own, a part of the whole
    assert [(j.first_line, j.calls, j.last_line) for j in joined(lines)] == [(1, 4, 4)]
    # a regeneration: another answer to the same history, the conversation going on from it
    other = json.loads(json.dumps(calls[1]))
    other["response"]["choices"][0]["message"]["tool_calls"][0]["id"] = "call_9"
    then = json.loads(json.dumps(calls[2]))
    then["messages"][4] = other["response"]["choices"][0]["message"]
    then["messages"][5]["tool_call_id"] = "call_9"
    (conversation,) = joined([calls[0], calls[1], other, then])
    assert conversation.messages[4]["tool_calls"][0]["id"] == "call_9"
    # with a fresh trace_id a call, a call made again is not told from another customer's
    for n, line in enumerate(lines):
        line["trace_id"] = f"uuid-{n}"
    assert sorted((j.first_line, j.calls) for j in joined(lines)) == [(1, 3), (3, 1)]


def test_a_conversations_own_response_field_is_no_model_call(tmp_path):
    records = [until_last_reply(r) for r in RECORDS[:2]]
    for record in records:
        record["response"] = {"latency_ms": 120}  # the service's, not a model's
    assert call_of(records[0]) is None
    result = mine([write_jsonl(tmp_path / "c.jsonl", records)], "openai-jsonl", redact=False)
    ids = {c.provenance.source.conversation_id for c in result.cases}
    assert ids == {r["conversation_id"] for r in records}
    assert result.summary.model_calls_joined == 0


def test_a_text_in_the_responses_place_is_no_answer():
    calls = _greeting("where is #W1?", 1)
    failed = {**calls[1], "response": "Error: 502 Bad Gateway", "status": "failure"}
    (conversation,) = joined([calls[0], failed, calls[1], calls[2]])
    assert "502" not in json.dumps(conversation.messages)
    assert conversation.calls == 4


def test_content_blocks_sent_back_with_their_keys_in_another_order_match():
    said = {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"a": 1, "b": 2}}
    back = {"input": {"b": 2, "a": 1}, "name": "get_order", "id": "toolu_1", "type": "tool_use"}
    text = {"type": "text", "text": "Let me look."}
    sent = {"role": "assistant", "content": [text, said]}
    assert fingerprint(sent) == fingerprint({"role": "assistant", "content": [text, back]})


def test_a_call_of_no_conversation_at_the_longest_history_goes_on_from_a_shorter_one():
    one, two = _greeting("where is my order?", 1), _greeting("where is my order?", 2)
    for session, calls in (("s-1", one), ("s-2", two)):
        for line in calls:
            line["session_id"] = session
    failed = {**two[1], "response": None}  # s-2's call fails: its conversation waits there
    got = joined([one[0], two[0], failed, one[1]])
    # s-1's call, the same history as s-2's failed one, goes on from s-1's greeting
    assert sorted((j.last["session_id"], j.first_line, j.calls) for j in got) == [
        ("s-1", 1, 2),
        ("s-2", 2, 2),
    ]


def test_a_quarantined_conversations_id_is_scrubbed_with_its_lines_personal_data(tmp_path):
    calls = _greeting("where is #W1?", 1)
    calls[1]["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "{"
    for line in calls[:2]:
        line["id"], line["customer_name"] = "Vasquez-chat-1", "Ingrid Vasquez"
    result = mine([write_jsonl(tmp_path / "calls.jsonl", calls[:2])], "openai-jsonl")
    (q,) = result.quarantined
    assert q.reason == "bad_tool_arguments"
    assert "Vasquez" not in q.conversation_id and q.conversation_id.endswith("-chat-1")


def test_a_conversation_a_rotated_log_split_is_mined_whole_from_its_first_file(tmp_path):
    records = [until_last_reply(r) for r in RECORDS[:4]]
    lines = interleaved([model_calls(r) for r in records])
    half = len(lines) // 2
    first = write_jsonl(tmp_path / "calls-1.jsonl", lines[:half])
    second = write_jsonl(tmp_path / "calls-2.jsonl", lines[half:])
    result = mine([first, second], "openai-jsonl", redact=False)
    # before: the conversations open at the end of the first file came out twice, in parts
    assert result.summary.conversations_read == len(records)
    assert result.summary.model_calls_joined == len(lines)
    assert mined_content(result) == mined_content(chat_of(tmp_path, records))
    files = {c.provenance.source.conversation_id: c.provenance.source.file for c in result.cases}
    assert set(files.values()) == {str(first)}  # every conversation began in the first file
    # one file alone still gives its own conversations, the open ones at its end
    alone = mine([second], "openai-jsonl", redact=False)
    assert alone.summary.conversations_read == len({line["id"][:9] for line in lines[half:]})


def test_a_system_prompt_new_at_every_call_does_not_part_the_conversation():
    calls = _greeting("where is #W1?", 1)
    for n, line in enumerate(calls):
        line["messages"][0] = {"role": "system", "content": f"It is 10:0{n}. Be kind."}
    (conversation,) = joined(calls)
    assert conversation.calls == 3
    assert conversation.messages[0]["content"] == "It is 10:02. Be kind."
