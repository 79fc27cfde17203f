"""Environment faults: the label rule holds and the sandbox really misbehaves that way."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from casemill.domains import get_domain
from casemill.packs.support.facts import writes
from tests.generators.conftest import (
    PROPERTY_SETTINGS,
    cases,
    checked_outputs,
    run_op,
    support_case,
)

FAULTS = [
    "fault_lookup_transient",
    "fault_lookup_persistent",
    "fault_write_transient",
    "fault_write_persistent",
]


@PROPERTY_SETTINGS
@given(case=cases(), name=st.sampled_from(FAULTS), seed=st.integers(0, 2**31))
def test_fault_label_rules(case, name, seed):
    for new in checked_outputs(name, case, seed):
        fault = new.environment.faults[0]
        if name.endswith("transient"):
            assert fault.times == 1
            assert new.expected.tool_calls == case.expected.tool_calls
            assert new.expected.optimal_steps == case.expected.optimal_steps + 1
            continue
        assert fault.times >= 5
        assert new.expected.outcome == "escalate"
        escalations = [c for c in writes(new) if c.tool == "escalate_to_human"]
        assert [c.params["reason"] for c in escalations] == ["tool_failure"]
        assert len(writes(new)) == 1
        assert new.expected.reply_contains == ("human",)
        if name == "fault_lookup_persistent":
            for call in writes(case):
                assert any(f.tool == call.tool for f in new.expected.forbidden_calls)
            failing = new.environment.faults[0].params["order_id"]
            assert not any(
                c.tool == "get_order" and c.params.get("order_id") == failing
                for c in new.expected.tool_calls
            ), "a lookup that cannot succeed"


def test_transient_lookup_fault_fails_once_then_answers():
    case = support_case("cancel", "processing")
    new = run_op("fault_lookup_transient", case, 0)[0]
    box = get_domain("support").sandbox(new.environment)
    first, second = (
        box.call("get_order", {"order_id": "W1001"}),
        box.call("get_order", {"order_id": "W1001"}),
    )
    assert first.error in ("timeout", "server_error") or first.content.get("_truncated")
    assert second.ok and second.content["status"] == "processing"


def test_persistent_write_fault_keeps_failing_and_the_write_is_not_forbidden():
    case = support_case("refund", "delivered")
    new = run_op("fault_write_persistent", case, 0)[0]
    box = get_domain("support").sandbox(new.environment)
    results = [
        box.call("refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"})
        for _ in range(3)
    ]
    assert all(r.error == "server_error" for r in results)
    assert not any(f.tool == "refund_items" for f in new.expected.forbidden_calls)
    assert {f.tool for f in new.expected.forbidden_calls} == {
        "cancel_order",
        "change_shipping_address",
        "exchange_item",
    }
