"""From a case to the episode: OpenAI chat messages, tool specs, the sandbox, the step limit."""

from __future__ import annotations

import json

import pytest

from casemill.case.model import ToolCall, Turn
from casemill.evaluation.agents import StepLimitReached, case_messages, new_episode
from tests.evaluation.agents.support_cases import mug_case


def test_roles_tool_calls_and_tool_call_ids_map_to_openai_format():
    base = mug_case()
    turns = [
        *base.conversation,
        Turn(
            role="assistant",
            content="",
            tool_calls=(ToolCall(tool="get_order", params={"order_id": "W1001"}),),
        ),
        Turn(role="tool", content='{"id": "W1001"}'),
        Turn(role="assistant", content="Which item?"),
        Turn(role="customer", content="The mug."),
    ]
    case = base.model_copy(update={"conversation": tuple(turns)})
    messages = case_messages(case)
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    call = messages[2]["tool_calls"][0]
    assert call["type"] == "function" and call["function"]["name"] == "get_order"
    assert json.loads(call["function"]["arguments"]) == {"order_id": "W1001"}
    assert messages[3]["tool_call_id"] == call["id"]


def test_user_scenario_is_the_first_user_message():
    base = mug_case()
    case = base.model_copy(
        update={
            "conversation": base.conversation[:1],
            "user_scenario": "You are Ana. Your mug is cracked.",
        }
    )
    assert [(m["role"], m["content"]) for m in case_messages(case)][1] == (
        "user",
        "You are Ana. Your mug is cracked.",
    )


def test_episode_records_calls_and_enforces_the_step_limit():
    episode = new_episode(mug_case(), max_steps=3)
    assert {t["function"]["name"] for t in episode.tools} >= {"get_order", "refund_items"}
    ok = episode.call("get_order", {"order_id": "W1001"})
    bad = episode.call("refund_items", {"order_id": "W1001"})  # missing item_ids and reason
    assert ok.ok and not bad.ok and bad.error == "invalid_params"
    assert [c.tool for c in episode.calls] == ["get_order", "refund_items"]
    with pytest.raises(StepLimitReached):
        episode.call("get_order", {"order_id": "W1001"})
    assert not episode.agent_faults  # bad parameters are the agent's business, not a fault
