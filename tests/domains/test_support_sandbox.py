"""The simulated support tools: results, domain errors (never exceptions), recorded calls, and
injected faults."""

from __future__ import annotations

import pytest
from fixtures.support_state import NEW_ADDRESS, environment, state

from casemill.case.model import ToolFault
from casemill.domains import get_domain

SUPPORT = get_domain("support")


def sandbox(*faults):
    return SUPPORT.sandbox(environment(*faults))


def test_reads():
    box = sandbox()
    order = box.call("get_order", {"order_id": "#W1001"})
    assert order.ok and order.content["status"] == "delivered"
    assert [i["price"] for i in order.content["items"]] == [14.5, 16.0]
    listed = box.call("list_customer_orders", {"email": "ANA.DIAZ@example.com"})
    assert [o["order_id"] for o in listed.content["orders"]] == ["W1001", "W1002", "W1003", "W1004"]
    assert box.call("get_customer", {"customer_id": "C1002"}).content["name"] == "Ben Kim"
    assert box.call("get_order", {"order_id": "W9"}).error == "not_found"
    assert box.call("list_customer_orders", {}).error == "invalid_params"
    assert len(box.calls) == 5 and box.calls[0].call.params == {"order_id": "#W1001"}


def test_refund_in_full_and_partial():
    box = sandbox()
    full = box.call("refund_items", {"order_id": "W1001", "item_ids": ["I2"], "reason": "damaged"})
    assert full.ok and full.content["amount"] == 32.0  # quantity 2 x 16.00
    part = box.call(
        "refund_items",
        {"order_id": "W1001", "item_ids": ["I1"], "reason": "defective", "amount": 5},
    )
    assert part.ok and part.content["amount"] == 5
    assert [r["amount"] for r in box.final_state()["orders"]["W1001"]["refunds"]] == [32.0, 5.0]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged", "amount": 20},
            "above what is left to refund (14.50 of 14.50 paid)",
        ),
        ({"order_id": "W1002", "item_ids": ["I2"], "reason": "damaged"}, "only delivered orders"),
        ({"order_id": "W1001", "item_ids": ["I9"], "reason": "damaged"}, "has no item I9"),
        ({"order_id": "W1001", "item_ids": ["I1", "I1"], "reason": "damaged"}, "named twice"),
        (
            {"order_id": "W1001", "item_ids": ["I1", "I2"], "reason": "damaged", "amount": 3},
            "names exactly one item",
        ),
    ],
)
def test_refund_policy_errors(params, message):
    result = sandbox().call("refund_items", params)
    assert result.error == "policy" and message in result.content["message"]


def test_refund_above_what_was_paid_after_an_earlier_refund():
    box = sandbox()
    assert box.call(
        "refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged", "amount": 10}
    ).ok
    again = box.call("refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"})
    assert again.error == "policy" and "4.50 of 14.50" in again.content["message"]


def test_a_refund_a_cent_above_what_was_paid_is_refused():
    """The 0.01 tolerance is for matching an agent's amount, not the policy's limit."""
    over = sandbox().call(
        "refund_items",
        {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged", "amount": 14.51},
    )
    assert over.error == "policy" and "(14.50 of 14.50 paid)" in over.content["message"]
    exact = {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged", "amount": 14.5}
    assert sandbox().call("refund_items", {**exact, "amount": 14.500000001}).ok


def test_cancel():
    box = sandbox()
    assert box.call("cancel_order", {"order_id": "W1002"}).content["refund_amount"] == 32.0
    assert box.call("cancel_order", {"order_id": "W1004"}).ok
    shipped = box.call("cancel_order", {"order_id": "W1003"})
    assert shipped.error == "policy" and "is shipped" in shipped.content["message"]
    assert box.final_state()["orders"]["W1002"]["status"] == "cancelled"


def test_change_address_before_and_after_shipping():
    box = sandbox()
    ok = box.call("change_shipping_address", {"order_id": "W1002", "address": NEW_ADDRESS})
    assert ok.ok and box.final_state()["orders"]["W1002"]["address"]["city"] == "Boise"
    late = box.call("change_shipping_address", {"order_id": "W1003", "address": NEW_ADDRESS})
    assert late.error == "policy" and "before shipping" in late.content["message"]


def test_an_item_exchanged_is_the_variant_it_was_exchanged_for():
    box = sandbox()

    def exchange(variant: str):
        call = {"order_id": "W1001", "item_id": "I1", "new_variant_id": variant}
        return box.call("exchange_item", call)

    assert exchange("P100-green").ok
    again = exchange("P100-green")
    assert again.error == "policy" and "already is variant P100-green" in again.content["message"]
    assert exchange("P100-blue").ok  # back to the variant it was ordered in
    assert [
        (e["from_variant_id"], e["to_variant_id"])
        for e in box.final_state()["orders"]["W1001"]["exchanges"]
    ] == [
        ("P100-blue", "P100-green"),
        ("P100-green", "P100-blue"),
    ]


@pytest.mark.parametrize(
    ("variant", "error"),
    [
        ("P100-green", None),
        ("P100-red", "out of stock"),
        ("P100-xl", "same price"),
        ("P100-blue", "already is variant"),
        ("P999-x", "not a variant"),
    ],
)
def test_exchange(variant, error):
    result = sandbox().call(
        "exchange_item", {"order_id": "W1001", "item_id": "I1", "new_variant_id": variant}
    )
    if error is None:
        assert result.ok and result.content["new_variant_id"] == variant
    else:
        assert result.error == "policy" and error in result.content["message"]


def test_escalate_creates_a_ticket():
    box = sandbox()
    result = box.call(
        "escalate_to_human",
        {"reason": "customer_request", "summary": "wants a human", "order_id": "W1001"},
    )
    assert result.ok and result.content["ticket_id"] == "T1"
    assert box.final_state()["tickets"][0]["customer_id"] == "C1001"
    assert box.comparable_state()["tickets"] == [{"id": "T1"}]


def test_unknown_tool_and_invalid_params_are_results_not_exceptions():
    box = sandbox()
    assert box.call("teleport", {}).error == "unknown_tool"
    bad = box.call("refund_items", {"order_id": "W1001", "item_ids": "I1", "reason": "damaged"})
    assert bad.error == "invalid_params" and "item_ids" in bad.content["message"]
    wrong_reason = box.call(
        "refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "meh"}
    )
    assert wrong_reason.error == "invalid_params"
    extra = box.call("cancel_order", {"order_id": "W1002", "force": True})
    assert extra.error == "invalid_params"


def test_a_sandbox_told_the_params_are_checked_does_not_check_them_again(monkeypatch):
    """For callers that checked every call's parameters against its spec already (the semantic
    checks, before their replay): valid calls answer the same, unknown tools still fail, and
    the parameters are not checked again."""
    refund = {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}
    want = sandbox().call("refund_items", refund).content
    box = SUPPORT.sandbox(environment(), checked_params=True)

    def checked_again(*args):
        raise AssertionError("parameters checked again")

    monkeypatch.setattr("casemill.domains.support.sandbox.param_errors", checked_again)
    assert box.call("teleport", {}).error == "unknown_tool"
    assert box.call("refund_items", refund).content == want


@pytest.mark.parametrize(
    ("kind", "error"),
    [("timeout", "timeout"), ("server_error", "server_error"), ("missing", "not_found")],
)
def test_faults_fail_the_first_calls_then_recover(kind, error):
    box = sandbox(ToolFault(tool="get_order", kind=kind, times=2))
    results = [box.call("get_order", {"order_id": "W1001"}) for _ in range(3)]
    assert [r.error for r in results] == [error, error, None]
    assert results[2].content["id"] == "W1001"


def test_corrupted_fault_returns_a_damaged_record():
    box = sandbox(ToolFault(tool="get_order", kind="corrupted", params={"order_id": "W1001"}))
    bad = box.call("get_order", {"order_id": "W1001"})
    assert bad.ok and bad.content["_truncated"] and bad.content["items"] is None
    assert bad.content["id"] == "W1001"
    assert box.call("get_order", {"order_id": "W1001"}).content["items"]


def test_fault_only_matches_its_params_and_replay_ignores_faults():
    box = sandbox(ToolFault(tool="get_order", kind="timeout", params={"order_id": "W1002"}))
    assert box.call("get_order", {"order_id": "W1001"}).ok
    assert box.call("get_order", {"order_id": "W1002"}).error == "timeout"
    quiet = SUPPORT.sandbox(environment(ToolFault(tool="get_order", kind="timeout")), faults=False)
    assert quiet.call("get_order", {"order_id": "W1001"}).ok


def test_sandbox_never_touches_the_case_environment():
    env = environment()
    box = SUPPORT.sandbox(env)
    box.call("cancel_order", {"order_id": "W1002"})
    assert env.state == state()
