"""Case derivation: decision points, conversation-level cases, confidence, environments."""

from __future__ import annotations

import json
from dataclasses import fields

from mining_helpers import call_msg, chat, result_msg, write_jsonl

from casemill.case.model import Environment
from casemill.domains.support.sandbox import SupportSandbox
from casemill.domains.support.state import SupportState
from casemill.mining import mine
from casemill.mining.derive import support
from casemill.mining.derive.common import bursts, successful_writes
from casemill.mining.model import Conversation
from casemill.mining.parsers import get_parser
from casemill.validation.semantic import semantic_findings

STATE = {
    "customers": {"C1001": {"id": "C1001", "name": "Ana Diaz", "email": "ana@example.com"}},
    "orders": {
        "W1001": {
            "id": "W1001",
            "customer_id": "C1001",
            "status": "delivered",
            "items": [
                {"item_id": "I1", "name": "Ceramic mug 12oz", "price": 14.5},
                {"item_id": "I2", "name": "Desk lamp", "price": 45.25},
            ],
        },
        "W1002": {
            "id": "W1002",
            "customer_id": "C1001",
            "status": "pending",
            "items": [{"item_id": "I1", "name": "Glass vase", "price": 32.0}],
        },
    },
}


def played(conv_id, steps, resolved=True):
    box = SupportSandbox(Environment(state=STATE))
    messages = [
        {"role": "system", "content": "Authenticated customer: C1001 (Ana Diaz, ana@example.com)"}
    ]
    for n, step in enumerate(steps):
        if isinstance(step, tuple):
            messages += [
                call_msg(f"k{n}", step[0], step[1]),
                result_msg(f"k{n}", box.call(step[0], step[1]).as_text()),
            ]
        else:
            messages.append(
                {"role": "user" if step.startswith("U:") else "assistant", "content": step[2:]}
            )
    return chat(conv_id, messages, resolved)


def cases_of(tmp_path, records, **kw):
    log = write_jsonl(tmp_path / "log.jsonl", records)
    return mine([log], "openai-jsonl", redact=False, **kw)


def by_kind(result, conv_id):
    return {
        c.provenance.operators[0].name + str(i): c
        for i, c in enumerate(
            c for c in result.cases if c.provenance.source.conversation_id == conv_id
        )
    }


def test_decision_points_take_the_burst_and_skip_failed_calls(tmp_path):
    record = played(
        "two-bursts",
        [
            "U:The mug in W1001 is cracked, and cancel W1002 please.",
            ("get_order", {"order_id": "W1001"}),
            (
                "refund_items",
                {"order_id": "W1001", "item_ids": ["I1"], "reason": "broken"},
            ),  # error
            ("refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}),
            ("get_order", {"order_id": "W1002"}),
            ("cancel_order", {"order_id": "W1002"}),
            "A:Refunded 14.50 and cancelled W1002. Anything else?",
            "U:Actually the lamp is defective too.",
            ("refund_items", {"order_id": "W1001", "item_ids": ["I2"], "reason": "defective"}),
            "A:Refunded 45.25 for the lamp.",
        ],
    )
    result = cases_of(tmp_path, [record])
    decisions = [c for c in result.cases if c.provenance.operators[0].name == "decision_point"]
    assert [[call.tool for call in c.expected.tool_calls] for c in decisions] == [
        ["refund_items", "cancel_order"],
        ["refund_items"],
    ]
    first, second = decisions
    assert first.expected.tool_calls[0].params["reason"] == "damaged"
    assert [t.role for t in first.conversation] == ["system", "customer", "assistant", "tool"]
    assert first.expected.reply_contains == ("14.50", "refund", "cancelled")
    # the second decision point's environment has the first burst's writes applied
    order = second.environment.state["orders"]["W1001"]
    assert [r["item_ids"] for r in order["refunds"]] == [["I1"]]
    assert second.environment.state["orders"]["W1002"]["status"] == "cancelled"
    assert second.conversation[-1].role == "customer"
    level = next(c for c in result.cases if c.provenance.operators[0].name == "conversation")
    assert [c.tool for c in level.expected.tool_calls] == [
        "refund_items",
        "cancel_order",
        "refund_items",
    ]
    assert level.user_scenario.startswith("The customer, in their own words: The mug in W1001")
    assert [t.role for t in level.conversation] == ["system", "customer"]
    assert level.tags.intents == ("cancel", "refund")
    for case in result.cases:
        assert semantic_findings(case) == []
        assert case.provenance.label_confidence == "high" and case.review.status == "pending"
        assert case.provenance.origin == "mined" and case.provenance.source.line == 1


def test_the_cases_of_a_conversation_share_their_validated_parts(tmp_path):
    record = played(
        "one-burst",
        [
            "U:The mug in W1001 is cracked.",
            ("get_order", {"order_id": "W1001"}),
            ("refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}),
            "A:Refunded 14.50.",
        ],
    )
    point, level = cases_of(tmp_path, [record]).cases
    assert point.provenance.operators[0].name == "decision_point"
    # one frozen object each for the environment, the expected call and every shared turn
    assert point.environment is level.environment
    assert point.expected.tool_calls[0] is level.expected.tool_calls[0]
    assert all(a is b for a, b in zip(point.conversation, level.conversation, strict=False))
    assert len(level.conversation) == 2 and len(point.conversation) == 4
    assert point.provenance.source is level.provenance.source and point.review is level.review


def test_unresolved_conversations_are_low_confidence_and_need_a_label(tmp_path):
    record = played(
        "wrong",
        [
            "U:the mug in W1001 is cracked",
            ("refund_items", {"order_id": "W1001", "item_ids": ["I1", "I2"], "reason": "damaged"}),
            "A:Refunded the whole order.",
        ],
        resolved=False,
    )
    result = cases_of(tmp_path, [record])
    assert len(result.cases) == 2
    for case in result.cases:
        assert case.provenance.label_confidence == "low"
        assert "needs_label" in case.tags.labels
        assert "observed, may be wrong" in case.provenance.notes
        assert [c.params["item_ids"] for c in case.expected.tool_calls] == [["I1", "I2"]]


def test_a_write_on_an_order_never_looked_up_is_flagged(tmp_path):
    record = played(
        "blind", ["U:cancel W1002", ("cancel_order", {"order_id": "W1002"}), "A:Cancelled."]
    )
    result = cases_of(tmp_path, [record])
    assert all(c.provenance.label_confidence == "low" for c in result.cases)
    assert all("not in the environment" in c.provenance.notes for c in result.cases)


def test_no_write_outcome_is_read_from_the_final_reply(tmp_path):
    record = played(
        "refused",
        [
            "U:cancel W1001",
            ("get_order", {"order_id": "W1001"}),
            "A:I'm sorry, I cannot cancel a delivered order.",
        ],
    )
    (case,) = cases_of(tmp_path, [record]).cases
    assert case.expected.outcome == "refuse" and case.expected.tool_calls == ()


def test_agent_instructions_are_dropped_from_support_cases(tmp_path):
    record = played(
        "instr",
        [
            "U:cancel W1002",
            ("get_order", {"order_id": "W1002"}),
            ("cancel_order", {"order_id": "W1002"}),
            "A:Cancelled.",
        ],
    )
    record["messages"].insert(0, {"role": "system", "content": "You are a helpful agent."})
    result = cases_of(tmp_path, [record])
    assert all(c.conversation[0].content.startswith("Authenticated customer") for c in result.cases)
    assert all(sum(t.role == "system" for t in c.conversation) == 1 for c in result.cases)


def test_a_zip_code_logged_as_a_number_is_read_as_text(tmp_path):
    address = {"street1": "1 Elm St", "city": "Boston", "state": "MA", "zip": "02134"}
    new = {"street1": "9 Oak Ave", "city": "Austin", "state": "TX", "zip": 73301}
    record = played(
        "zips",
        [
            "U:Ship W1002 to 9 Oak Ave, Austin TX 73301 please.",
            ("get_order", {"order_id": "W1002"}),
            ("change_shipping_address", {"order_id": "W1002", "address": {**new, "zip": "73301"}}),
            "A:Done: W1002 now goes to Austin.",
        ],
    )
    # the log's system stores zips as numbers: in the order it read and in the call it made
    messages = record["messages"]
    order = json.loads(messages[3]["content"])
    order["address"] = {**address, "zip": 2134}
    messages[3]["content"] = json.dumps(order)
    messages[4]["tool_calls"][0]["function"]["arguments"] = json.dumps(
        {"order_id": "W1002", "address": new}
    )
    result = cases_of(tmp_path, [record])
    assert len(result.cases) == 2
    for case in result.cases:
        assert case.provenance.label_confidence == "high", case.provenance.notes
        assert case.environment.state["orders"]["W1002"]["address"]["zip"] == "02134"
        (call,) = case.expected.tool_calls
        assert call.params["address"]["zip"] == "73301"
        assert semantic_findings(case) == []


def test_generic_logs_keep_the_calls_as_made_and_the_records_read(tmp_path):
    messages = [
        {"role": "user", "content": "cancel reservation ABC123, user mia_li_3668"},
        call_msg("a", "get_reservation_details", {"reservation_id": "ABC123"}),
        result_msg("a", json.dumps({"reservation_id": "ABC123", "status": "ok"})),
        call_msg("b", "cancel_reservation", {"reservation_id": "ABC123"}),
        result_msg("b", "Error: reservation is locked"),
        call_msg("c", "cancel_reservation", {"reservation_id": "ABC123", "force": True}),
        result_msg("c", json.dumps({"status": "cancelled"})),
        {"role": "assistant", "content": "Cancelled."},
    ]
    result = cases_of(tmp_path, [chat("air-1", messages)])
    level = next(c for c in result.cases if c.provenance.operators[0].name == "conversation")
    assert level.domain.startswith("generic:")
    assert [(c.tool, c.params) for c in level.expected.tool_calls] == [
        ("cancel_reservation", {"reservation_id": "ABC123", "force": True})
    ]
    state = level.environment.state
    assert state["records"] == {
        "reservation_details": {"ABC123": {"reservation_id": "ABC123", "status": "ok"}}
    }
    assert state["tools"]["cancel_reservation"] == {
        "kind": "write",
        "params": ["force", "reservation_id"],
    }
    assert semantic_findings(level) == []


def test_generic_drafts_share_their_reads_and_keep_the_answers_each_sees(tmp_path):
    from casemill.mining.derive import generic
    from casemill.mining.parsers.openai_jsonl import parse

    messages = [
        {"role": "user", "content": "look up ABC123 twice, then cancel it"},
        call_msg("a", "get_reservation_details", {"reservation_id": "ABC123"}),
        result_msg("a", json.dumps({"status": "ok"})),
        call_msg("b", "get_reservation_details", {"reservation_id": "ABC123"}),
        result_msg("b", "not JSON"),
        call_msg("c", "cancel_reservation", {"reservation_id": "ABC123"}),
        result_msg("c", json.dumps({"status": "cancelled"})),
    ]
    log = write_jsonl(tmp_path / "log.jsonl", [chat("air-2", messages)])
    msgs = next(iter(parse(log, max_turns=500))).messages
    answers = generic.Answers()
    for upto in (None, 2, 4, len(msgs)):
        alone = generic.state(msgs, upto, msgs)
        assert generic.state(msgs, upto, msgs, answers) == alone
    first = generic.state(msgs, None, msgs, answers)["records"]["reservation_details"]
    latest = generic.state(msgs, len(msgs), msgs, answers)["records"]["reservation_details"]
    assert first == {"ABC123": {"status": "ok"}} and latest == {"ABC123": "not JSON"}


def test_the_states_the_drafts_parse_equal_the_parse_of_their_dumps(tmp_path):
    """The semantic check takes over the drafts' parsed states (`Rebuilt.parsed`) instead of
    parsing each state again: each must be what `SupportState.parse` makes of the state."""
    record = played(
        "two-bursts",
        [
            "U:The mug in W1001 is cracked, and cancel W1002 please.",
            ("get_order", {"order_id": "W1001"}),
            ("get_order", {"order_id": "W1002"}),
            ("refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}),
            ("cancel_order", {"order_id": "W1002"}),
            "A:Done.",
            "U:And please send W1001 elsewhere.",
            (
                "change_shipping_address",
                {
                    "order_id": "W1001",
                    "address": {"street1": "1 Main St", "city": "Lyon", "zip": "69001"},
                },
            ),
            "A:Done.",
        ],
    )
    log = write_jsonl(tmp_path / "log.jsonl", [record])
    (conv,) = get_parser("openai-jsonl")(log, max_turns=500)
    rebuilt = support.initial_state(conv)
    done = {id(c) for c in successful_writes(conv)}
    states = [rebuilt]
    for burst in bursts(conv):
        prior = [c for m in conv.messages[: burst.start] for c in m.calls if id(c) in done]
        states.append(support.state_before(rebuilt.state, prior))
    assert len(states) == 3 and states[2].state["orders"]["W1002"]["status"] == "cancelled"
    assert states[1].state is rebuilt.state and not states[1].parsed  # no write before it
    for got in (states[0], states[2]):  # each state the drafts make is parsed where it is made
        parsed = got.take_parsed(got.state)
        assert parsed is not None
        assert parsed == SupportState.parse(got.state)
        assert parsed.model_dump() == SupportState.parse(got.state).model_dump()
        assert got.take_parsed(got.state) is None  # handed over once


def test_with_messages_keeps_every_other_field():
    values = {f.name: object() for f in fields(Conversation)}
    conv = Conversation(**values)
    other = conv.with_messages([])
    assert other.messages == []
    for f in fields(Conversation):
        if f.name != "messages":
            assert getattr(other, f.name) is values[f.name]


def test_a_case_records_its_log_relative_to_the_working_folder_when_inside_it(
    tmp_path, monkeypatch
):
    """The corpus holds no machine's own folders: a log given by its absolute path inside the
    working folder is recorded relative to it; one outside is recorded as given."""
    record = played("where", ["U:cancel W1002", ("cancel_order", {"order_id": "W1002"})])
    (tmp_path / "logs").mkdir()
    log = write_jsonl(tmp_path / "logs" / "support.jsonl", [record])
    monkeypatch.chdir(tmp_path)
    inside = mine([log.resolve()], "openai-jsonl", redact=False)
    assert {c.provenance.source.file for c in inside.cases} == {"logs/support.jsonl"}
    monkeypatch.chdir(tmp_path / "logs")
    elsewhere = tmp_path / "elsewhere.jsonl"  # outside the working folder, logs/
    outside = mine([write_jsonl(elsewhere, [record])], "openai-jsonl", redact=False)
    assert {c.provenance.source.file for c in outside.cases} == {str(elsewhere)}
