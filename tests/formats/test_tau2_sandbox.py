"""The simulated tau2 retail tools: on a hand-written state, and replaying the benchmark's own
expected action lists."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from casemill.case.model import Environment
from casemill.domains import get_domain
from casemill.domains.tau2_retail.sandbox import evaluate

STATE = {
    "users": {
        "ana_diaz_1001": {
            "user_id": "ana_diaz_1001",
            "name": {"first_name": "Ana", "last_name": "Diaz"},
            "address": {"zip": "10001"},
            "email": "ana.diaz@example.com",
            "payment_methods": {
                "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "balance": 10.0},
                "paypal_1": {"source": "paypal", "id": "paypal_1"},
            },
            "orders": ["#W1000001", "#W1000002"],
        }
    },
    "orders": {
        "#W1000001": {
            "order_id": "#W1000001",
            "user_id": "ana_diaz_1001",
            "status": "delivered",
            "items": [
                {
                    "name": "Mug",
                    "product_id": "P1",
                    "item_id": "111",
                    "price": 9.5,
                    "options": {"color": "red"},
                },
                {
                    "name": "Lamp",
                    "product_id": "P2",
                    "item_id": "211",
                    "price": 40.0,
                    "options": {},
                },
            ],
            "payment_history": [
                {"transaction_type": "payment", "amount": 49.5, "payment_method_id": "paypal_1"}
            ],
        },
        "#W1000002": {
            "order_id": "#W1000002",
            "user_id": "ana_diaz_1001",
            "status": "pending",
            "items": [
                {
                    "name": "Mug",
                    "product_id": "P1",
                    "item_id": "111",
                    "price": 9.5,
                    "options": {"color": "red"},
                }
            ],
            "payment_history": [
                {"transaction_type": "payment", "amount": 9.5, "payment_method_id": "gift_card_1"}
            ],
        },
    },
    "products": {
        "P1": {
            "product_id": "P1",
            "name": "Mug",
            "variants": {
                "111": {
                    "item_id": "111",
                    "options": {"color": "red"},
                    "available": True,
                    "price": 9.5,
                },
                "112": {
                    "item_id": "112",
                    "options": {"color": "blue"},
                    "available": True,
                    "price": 12.0,
                },
                "113": {
                    "item_id": "113",
                    "options": {"color": "gold"},
                    "available": False,
                    "price": 30.0,
                },
            },
        },
        "P2": {
            "product_id": "P2",
            "name": "Lamp",
            "variants": {
                "211": {"item_id": "211", "options": {}, "available": True, "price": 40.0}
            },
        },
    },
}


@pytest.fixture
def sandbox():
    return get_domain("tau2-retail").sandbox(Environment(state=copy.deepcopy(STATE)), faults=False)


def test_lookups(sandbox) -> None:
    assert (
        sandbox.call(
            "find_user_id_by_name_zip", {"first_name": "ana", "last_name": "DIAZ", "zip": "10001"}
        ).content
        == "ana_diaz_1001"
    )
    assert (
        sandbox.call("find_user_id_by_email", {"email": "Ana.Diaz@example.com"}).content
        == "ana_diaz_1001"
    )
    missing = sandbox.call("get_order_details", {"order_id": "#W9"})
    assert missing.ok and missing.content == {"error": "not_found", "message": "order not found"}
    assert sandbox.call("get_item_details", {"item_id": "112"}).content["price"] == 12.0
    assert sandbox.call("calculate", {"expression": "(9.5 + 40) * 2 / 3"}).content == "33.0"
    assert not sandbox.call("calculate", {"expression": "__import__('os')"}).ok


def test_cancel_refunds_a_gift_card_at_once(sandbox) -> None:
    result = sandbox.call(
        "cancel_pending_order", {"order_id": "#W1000002", "reason": "ordered by mistake"}
    )
    assert result.ok
    state = sandbox.final_state()
    order = state["orders"]["#W1000002"]
    assert order["status"] == "cancelled" and order["cancel_reason"] == "ordered by mistake"
    assert order["payment_history"][-1] == {
        "transaction_type": "refund",
        "amount": 9.5,
        "payment_method_id": "gift_card_1",
    }
    assert state["users"]["ana_diaz_1001"]["payment_methods"]["gift_card_1"]["balance"] == 19.5


def test_policy_refusals_change_nothing(sandbox) -> None:
    refusals = [
        (
            "cancel_pending_order",
            {"order_id": "#W1000001", "reason": "no longer needed"},
        ),  # delivered
        ("cancel_pending_order", {"order_id": "#W1000002", "reason": "too slow"}),
        (
            "return_delivered_order_items",
            {"order_id": "#W1000001", "item_ids": ["111", "111"], "payment_method_id": "paypal_1"},
        ),
        (
            "exchange_delivered_order_items",
            {
                "order_id": "#W1000001",
                "item_ids": ["111"],
                "new_item_ids": ["113"],
                "payment_method_id": "paypal_1",
            },
        ),
        (
            "modify_pending_order_items",
            {
                "order_id": "#W1000002",
                "item_ids": ["111"],
                "new_item_ids": ["211"],
                "payment_method_id": "paypal_1",
            },
        ),
    ]
    for tool, params in refusals:
        result = sandbox.call(tool, params)
        assert not result.ok and result.error == "policy", (tool, result.content)
    assert sandbox.final_state() == STATE


def test_return_exchange_and_modify(sandbox) -> None:
    assert sandbox.call(
        "exchange_delivered_order_items",
        {
            "order_id": "#W1000001",
            "item_ids": ["111"],
            "new_item_ids": ["112"],
            "payment_method_id": "gift_card_1",
        },
    ).ok
    order = sandbox.final_state()["orders"]["#W1000001"]
    assert (order["status"], order["exchange_new_items"], order["exchange_price_difference"]) == (
        "exchange requested",
        ["112"],
        2.5,
    )
    assert sandbox.call(
        "modify_pending_order_items",
        {
            "order_id": "#W1000002",
            "item_ids": ["111"],
            "new_item_ids": ["112"],
            "payment_method_id": "gift_card_1",
        },
    ).ok
    state = sandbox.final_state()
    pending = state["orders"]["#W1000002"]
    assert pending["status"] == "pending (item modified)"
    assert pending["items"][0] == {
        "name": "Mug",
        "product_id": "P1",
        "item_id": "112",
        "price": 12.0,
        "options": {"color": "blue"},
    }
    assert pending["payment_history"][-1] == {
        "transaction_type": "payment",
        "amount": 2.5,
        "payment_method_id": "gift_card_1",
    }
    assert state["users"]["ana_diaz_1001"]["payment_methods"]["gift_card_1"]["balance"] == 7.5


def test_wrong_parameters_are_reported_not_raised(sandbox) -> None:
    result = sandbox.call("get_order_details", {"order": "#W1000001"})
    assert result.error == "invalid_params"
    assert sandbox.call("refund_everything", {}).error == "unknown_tool"
    assert evaluate("-2 * (3 + 1)") == -8.0


@pytest.mark.shared_data
def test_replaying_the_benchmark_actions(shared_data: Path) -> None:
    """Every expected action of the 114 tasks runs in the sandbox; only the two failed attempts
    the benchmark itself lists are refused by the policy."""
    from casemill.formats import import_tau2

    cases = import_tau2(shared_data / "tau2-retail" / "tasks.json").cases
    domain = get_domain("tau2-retail")
    refused = set()
    for case in cases:
        sandbox = domain.sandbox(case.environment, faults=False)
        for index, call in enumerate(case.expected.tool_calls):
            result = sandbox.call(call.tool, dict(call.params))
            if not result.ok:
                refused.add((case.provenance.source.conversation_id, index, result.error))
    assert refused == {("64", 6, "policy"), ("105", 0, "policy")}
