"""Chat logs whose messages are in Anthropic's content-block shape or the OpenAI Responses
API's item shape give the cases of the same conversations in OpenAI's chat shape."""

from __future__ import annotations

import json

import pytest
from mining_helpers import mined_content, sample_records, write_jsonl

from casemill.mining import mine
from casemill.mining.parsers.openai_jsonl import parse

RECORDS = sample_records(8, seed=5)


def anthropic(record: dict) -> dict:
    """The record's messages as Anthropic's: calls as `tool_use` blocks, results as a user
    message of `tool_result` blocks (one for the results that follow one another)."""
    out: list[dict] = []
    for m in record["messages"]:
        if m["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": m["tool_call_id"]}
            block["content"] = [{"type": "text", "text": m["content"]}]
            if (
                out
                and out[-1]["role"] == "user"
                and out[-1]["content"][-1]["type"] == "tool_result"
            ):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m["role"] == "assistant":
            blocks = [{"type": "text", "text": m["content"]}] if m.get("content") else []
            for tc in m.get("tool_calls") or []:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": tc["id"],
                        "name": tc["function"]["name"],
                        "input": json.loads(tc["function"]["arguments"]),
                    }
                )
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append(m)
    return {**record, "messages": out}


def responses(record: dict) -> dict:
    """The record's messages as Responses API items: `message` items with content parts,
    `function_call` and `function_call_output` items, a `reasoning` item before each call."""
    out: list[dict] = []
    for m in record["messages"]:
        if m["role"] == "tool":
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": m["tool_call_id"],
                    "output": m["content"],
                }
            )
            continue
        if m.get("content"):
            kind = "output_text" if m["role"] == "assistant" else "input_text"
            content = [{"type": kind, "text": m["content"]}]
            out.append({"type": "message", "role": m["role"], "content": content})
        for tc in m.get("tool_calls") or []:
            out.append({"type": "reasoning", "id": "rs_1", "summary": []})
            out.append(
                {
                    "type": "function_call",
                    "id": "fc_" + tc["id"],
                    "call_id": tc["id"],
                    "name": tc["function"]["name"],
                    "arguments": tc["function"]["arguments"],
                }
            )
    return {**record, "messages": out}


@pytest.mark.parametrize("shape", [anthropic, responses])
def test_other_shapes_give_the_cases_of_the_chat_shape(tmp_path, shape):
    chat = mine([write_jsonl(tmp_path / "chat.jsonl", RECORDS)], "openai-jsonl", redact=False)
    other = [shape(r) for r in RECORDS]
    assert other != RECORDS
    result = mine([write_jsonl(tmp_path / "other.jsonl", other)], "openai-jsonl", redact=False)
    # before: tool results were customer turns, and calls not seen (Anthropic), or every line
    # was quarantined for a message without a role (Responses)
    assert result.quarantined == ()
    assert mined_content(result) == mined_content(chat)
    assert "high" in {c.provenance.label_confidence for c in result.cases}


def test_a_tool_result_block_marked_as_an_error_marks_its_call(tmp_path):
    record = anthropic(RECORDS[0])
    results = [
        b
        for m in record["messages"]
        for b in m["content"]
        if isinstance(m["content"], list) and b.get("type") == "tool_result"
    ]
    results[-1]["is_error"] = True
    [conv] = parse(write_jsonl(tmp_path / "e.jsonl", [record]), max_turns=50)
    calls = [c for m in conv.messages for c in m.calls]
    assert [c.error for c in calls] == [False] * (len(calls) - 1) + [True]


@pytest.mark.parametrize(
    ("message", "reason", "field"),
    [
        (
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope"}]},
            "orphan_tool_result",
            "messages[1].content[0].tool_use_id",
        ),
        (
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "x", "input": [1]}],
            },
            "bad_tool_arguments",
            "messages[1].content[0].input",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
            },
            "bad_message",
            "messages[1].content[0]",
        ),
        (
            {"type": "function_call", "call_id": "c", "name": "x", "arguments": "{oops"},
            "bad_tool_arguments",
            "messages[1].arguments",
        ),
        (
            {"type": "function_call_output", "call_id": "nope", "output": "ok"},
            "orphan_tool_result",
            "messages[1].call_id",
        ),
    ],
)
def test_bad_blocks_and_items_are_quarantined_naming_their_field(tmp_path, message, reason, field):
    record = {"conversation_id": "b1", "messages": [{"role": "user", "content": "hi"}, message]}
    result = mine([write_jsonl(tmp_path / "bad.jsonl", [record])], "openai-jsonl", redact=False)
    [q] = result.quarantined
    assert (q.reason, q.field, q.line) == (reason, field, 1)


def test_tool_results_of_one_message_each_count_toward_the_turn_limit(tmp_path):
    messages = [
        {"role": "user", "content": "refund W1 W2 W3"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "three orders", "signature": "EqQB"},
                *(
                    {"type": "tool_use", "id": f"t{i}", "name": "get_order", "input": {"id": i}}
                    for i in range(3)
                ),
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"} for i in range(3)
            ],
        },
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "thanks"},
    ]
    log = write_jsonl(tmp_path / "a.jsonl", [{"conversation_id": "c", "messages": messages}])
    [conv] = parse(log, max_turns=5)
    # before: 5 messages counted for 7, so the conversation was not marked as cut
    assert (len(conv.messages), conv.total_messages, conv.capped) == (5, 7, True)
    assert conv.messages[1].content == ""  # the model's thinking is not what it said
    [whole] = parse(log, max_turns=50)
    assert [m.role for m in whole.messages] == [
        "customer",
        "assistant",
        "tool",
        "tool",
        "tool",
        "assistant",
        "customer",
    ]
