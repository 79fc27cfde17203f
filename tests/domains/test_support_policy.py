"""`policy.decide`: the correct outcome and expected calls for every intent and order status."""

from __future__ import annotations

import pytest
from fixtures.support_state import NEW_ADDRESS, state

from casemill.domains.support.policy import Intent, decide
from casemill.domains.support.state import ORDER_STATUSES, SupportState


def world(status: str | None = None) -> SupportState:
    raw = state()
    if status is not None:
        for order in raw["orders"].values():
            order["status"] = status
    return SupportState.parse(raw)


def intent(kind: str, **kw) -> Intent:
    defaults = {
        "order_id": "W1001",
        "item_ids": ("I1",),
        "reason": "damaged",
        "address": NEW_ADDRESS,
        "new_variant_id": "P100-green",
    }
    return Intent(kind=kind, **{**defaults, **kw})


EXPECTED = {
    # status -> outcome (and write tool) per intent
    "refund": {
        "pending": ("clarify", None),
        "processing": ("clarify", None),
        "shipped": ("refuse", None),
        "delivered": ("resolve", "refund_items"),
        "cancelled": ("refuse", None),
    },
    "cancel": {
        "pending": ("resolve", "cancel_order"),
        "processing": ("resolve", "cancel_order"),
        "shipped": ("refuse", None),
        "delivered": ("refuse", None),
        "cancelled": ("refuse", None),
    },
    "change_address": {
        "pending": ("resolve", "change_shipping_address"),
        "processing": ("resolve", "change_shipping_address"),
        "shipped": ("refuse", None),
        "delivered": ("refuse", None),
        "cancelled": ("refuse", None),
    },
    "exchange": {
        "pending": ("refuse", None),
        "processing": ("refuse", None),
        "shipped": ("refuse", None),
        "delivered": ("resolve", "exchange_item"),
        "cancelled": ("refuse", None),
    },
    "status": {s: ("resolve", None) for s in ORDER_STATUSES},
    "escalate": {s: ("escalate", "escalate_to_human") for s in ORDER_STATUSES},
}


@pytest.mark.parametrize("status", ORDER_STATUSES)
@pytest.mark.parametrize("kind", list(EXPECTED))
def test_decide_every_intent_and_status(kind, status):
    decision = decide(world(status), intent(kind))
    outcome, tool = EXPECTED[kind][status]
    assert decision.outcome == outcome, decision.why
    assert [c.tool for c in decision.calls] == ([tool] if tool else [])
    assert decision.why


def test_refund_call_names_the_item_and_order():
    call = decide(world(), intent("refund")).calls[0]
    assert call.params == {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}
    assert call.match["order_id"].kind == "id" and call.match["item_ids"].ids


def test_unknown_order_or_missing_slots_ask():
    assert decide(world(), intent("refund", order_id=None)).outcome == "clarify"
    assert decide(world(), intent("refund", item_ids=())).outcome == "clarify"
    assert decide(world(), intent("exchange", new_variant_id=None)).outcome == "clarify"
    assert decide(world("pending"), intent("change_address", address=None)).outcome == "clarify"


def test_refusals_follow_the_policy():
    assert decide(world(), intent("refund", reason="changed_mind")).outcome == "refuse"
    assert decide(world(), intent("refund", amount=99.0)).outcome == "refuse"
    assert decide(world(), intent("exchange", new_variant_id="P100-red")).outcome == "refuse"


def test_status_answers_with_the_status_and_no_write():
    decision = decide(world("shipped"), intent("status"))
    assert decision.calls == () and decision.phrases == ("shipped",)


def test_an_order_id_written_with_spaces_names_the_order():
    """The sandbox and the id match rule read ' W1001' as W1001; the reference check did not."""
    from casemill.case.model import derive
    from casemill.validation.semantic import semantic_findings
    from tests.generators.conftest import support_case

    case = support_case("refund", "delivered")
    expected = case.expected.model_dump(mode="json")
    expected["tool_calls"][-1]["params"]["order_id"] = " W1001"
    spaced = derive(case, expected=expected)
    assert spaced.expected.tool_calls[-1].params["order_id"] == " W1001"
    assert [str(f) for f in semantic_findings(spaced) if f.severity == "error"] == []
