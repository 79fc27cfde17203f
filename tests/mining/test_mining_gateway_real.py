"""Per-call logs written by a real gateway: LiteLLM 1.110.2's standard logging payload, a line a
model call, as `gateway_logs/generate.py` wrote them (two support conversations whose calls take
turns; with `-turns`, two customer turns each under a `litellm_session_id`)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from mining_helpers import mined_content, until_last_reply, write_jsonl

from casemill.mining import mine
from casemill.mining.synthetic import interleaved, model_calls

LOGS = Path(__file__).parent / "gateway_logs"


@pytest.mark.parametrize(
    ("name", "calls", "ids", "turns"),
    [
        ("litellm.jsonl", 6, ["chatcmpl-1", "chatcmpl-2"], 3),
        ("litellm-turns.jsonl", 8, ["conversation-1", "conversation-2"], 5),
    ],
)
def test_litellms_calls_are_mined_as_the_two_conversations(name, calls, ids, turns):
    result = mine([LOGS / name], "openai-jsonl", redact=False)
    # before: a conversation a call (6 and 8), the first ones' cases expecting no write
    assert result.summary.conversations_read == 2
    assert result.summary.model_calls_joined == calls
    assert result.quarantined == ()
    whole = [c for c in result.cases if c.provenance.operators[0].name == "conversation"]
    assert [c.provenance.source.conversation_id for c in whole] == ids
    assert [c.provenance.source.line for c in whole] == [1, 2]
    for case, (order, item) in zip(whole, [("W1001", "I1"), ("W1002", "I2")], strict=True):
        (call,) = case.expected.tool_calls
        assert (call.tool, call.params["order_id"], call.params["item_ids"]) == (
            "refund_items",
            order,
            [item],
        )
        # the tool specs LiteLLM logs in `model_parameters`
        assert case.provenance.operators[0].args["tool_specs"] == 2
        assert case.provenance.label_confidence == "low"  # no resolution flag in the log
    points = [c for c in result.cases if c.provenance.operators[0].name == "decision_point"]
    assert [len(c.conversation) for c in points] == [turns, turns]


@pytest.mark.shared_data
def test_the_real_airline_conversations_logged_a_call_a_line_are_mined_as_logged_whole(
    shared_data, tmp_path
):
    """The tau-bench airline conversations (real agent trajectories) as a gateway would have
    logged their model calls, 16 in flight at a time: the same conversations and cases."""
    log = shared_data / "tau-bench-airline-logs" / "support_logs.jsonl"
    records = [until_last_reply(json.loads(line)) for line in log.read_text().splitlines()]
    calls = list(interleaved(map(model_calls, records), random.Random(7), 16))
    assert len(calls) > 5 * len(records)
    got = mine([write_jsonl(tmp_path / "calls.jsonl", calls)], "openai-jsonl", redact=False)
    whole = mine([write_jsonl(tmp_path / "whole.jsonl", records)], "openai-jsonl", redact=False)
    assert got.summary.conversations_read == whole.summary.conversations_read == len(records)
    assert got.quarantined == whole.quarantined == ()
    assert mined_content(got) == mined_content(whole)
