"""Outcome flips agree with the policy: the expected state is recomputed, never kept."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from casemill.case.matching import forbidden_hit
from casemill.case.model import Case, ToolCall, derive
from casemill.domains import get_domain
from casemill.domains.support.policy import Intent, decide, intent_of, refund_call
from casemill.domains.support.state import SupportState
from casemill.domains.support.tools import WRITE_TOOLS
from casemill.packs.support.facts import writes
from tests.generators.conftest import (
    PROPERTY_SETTINGS,
    cases,
    checked_outputs,
    problems,
    run_op,
    support_case,
)

FLIPS = [
    "flip_not_delivered",
    "flip_already_refunded",
    "flip_shipped",
    "flip_out_of_stock",
    "flip_price_paid",
    "flip_intact",
    "flip_not_shipped",
    "flip_status",
]


def _blocked(case, call):
    return any(
        forbidden_hit(f, ToolCall(tool=call.tool, params=call.params), WRITE_TOOLS)
        for f in case.expected.forbidden_calls
    )


@PROPERTY_SETTINGS
@given(case=cases(), name=st.sampled_from(FLIPS), seed=st.integers(0, 2**31))
def test_flips_agree_with_the_policy(case, name, seed):
    for new in checked_outputs(name, case, seed):
        state = SupportState.parse(new.environment.state)
        for old_call in writes(case):
            intent = intent_of(old_call)
            if name == "flip_intact":
                intent = Intent("refund", intent.order_id, intent.item_ids, "changed_mind")
            if name == "flip_price_paid":  # more than was paid asked: the item in full
                intent = Intent("refund", intent.order_id, intent.item_ids, intent.reason)
            decision = decide(state, intent)
            assert new.expected.outcome == decision.outcome
            assert list(writes(new)) == list(decision.calls)
            if decision.outcome == "refuse" or name == "flip_price_paid":
                # out of stock cannot be seen before trying: the attempt is not forbidden
                assert _blocked(new, old_call) == (name != "flip_out_of_stock")
            if decision.outcome == "clarify":
                assert any(f.any_write for f in new.expected.forbidden_calls)
        if name == "flip_price_paid":
            assert writes(new) != writes(case)
        else:
            assert new.expected.outcome != case.expected.outcome or name == "flip_status"


def _saying(case: Case, text: str) -> Case:
    """`case` with its last customer turn saying `text`."""
    said = case.conversation[-1].model_copy(update={"content": text})
    return case.model_copy(update={"conversation": (*case.conversation[:-1], said)})


def _scenario(case: Case, scenario: str) -> Case:
    """`case` told by a simulated user with `scenario` (its customer turns dropped)."""
    return derive(case, conversation=case.conversation[:1], user_scenario=scenario)


def _missing(text: str) -> Case:
    """A refund of an item the customer says is missing (the only reason an order not yet
    delivered fits), the customer saying `text`."""
    case = _saying(support_case("refund", "delivered"), text)
    (call,) = case.expected.tool_calls
    moved = call.model_copy(update={"params": {**call.params, "reason": "missing"}})
    expected = case.expected.model_copy(update={"tool_calls": (moved,)})
    return case.model_copy(update={"expected": expected})


NEVER_CAME = "I still don't have the mug from order W1001. Could you refund it please?"


def test_refund_on_an_order_still_processing_becomes_clarify():
    case = _missing(NEVER_CAME)
    out = [o for s in range(8) for o in run_op("flip_not_delivered", case, s)]
    by_status = {o.environment.state["orders"]["W1001"]["status"]: o for o in out}
    assert by_status["processing"].expected.outcome == "clarify"
    assert by_status["shipped"].expected.outcome == "refuse"
    assert by_status["shipped"].expected.reply_contains == ("cannot",)


@pytest.mark.parametrize(
    "text",
    [
        "Hi, order W1001 came today and the mug is cracked down the side. Refund it please.",
        "The mug from order W1001 arrived cracked. Could you refund it please?",
        "I got it yesterday and the mug from W1001 is cracked. Refund please.",
    ],
)
def test_not_delivered_skips_a_customer_who_says_the_order_arrived(text):
    case = _saying(support_case("refund", "delivered"), text)
    assert case.customer_text.endswith(text)
    assert [o for s in range(8) for o in run_op("flip_not_delivered", case, s)] == []


def test_not_delivered_skips_a_user_scenario_that_says_the_order_arrived():
    base = support_case("refund", "delivered")
    scenario = "You are Ana Diaz. The mug from order W1001 you received is cracked; get a refund."
    case = _scenario(base, scenario)
    assert case.customer_text == ""
    assert [o for s in range(8) for o in run_op("flip_not_delivered", case, s)] == []
    waiting = _scenario(
        _missing(NEVER_CAME), "You are Ana Diaz. You still do not have the mug from order W1001."
    )
    assert len(run_op("flip_not_delivered", waiting, 0)) == 1


def test_not_delivered_skips_an_item_the_customer_has():
    """A cracked, defective or wrong item is in the customer's hands: its order was delivered,
    whatever the words."""
    case = _saying(
        support_case("refund", "delivered"),
        "The mug from order W1001 is cracked, could you refund it please?",
    )
    assert [o for s in range(8) for o in run_op("flip_not_delivered", case, s)] == []


def test_not_delivered_still_flips_a_customer_who_does_not_say_it_arrived():
    case = _missing(NEVER_CAME)
    out = run_op("flip_not_delivered", case, 0)
    assert len(out) == 1
    state = SupportState.parse(out[0].environment.state)
    decision = decide(state, intent_of(writes(case)[0]))
    assert state.orders["W1001"].status in ("processing", "shipped")
    assert out[0].expected.outcome == decision.outcome != "resolve"
    assert list(writes(out[0])) == list(decision.calls) == []
    assert out[0].provenance.operators[-1].version == "2"


def test_cancel_flips_both_ways():
    shipped = run_op("flip_shipped", support_case("cancel", "processing"), 1)[0]
    assert shipped.expected.outcome == "refuse" and not writes(shipped)
    refused = support_case("cancel", "shipped")
    cancelled = run_op("flip_not_shipped", refused, 1)[0]
    assert [c.tool for c in writes(cancelled)] == ["cancel_order"]
    assert cancelled.expected.reply_contains == ("cancelled",)
    assert cancelled.expected.forbidden_calls == ()


def test_intact_item_edits_the_words_and_refuses():
    new = run_op("flip_intact", support_case("refund", "delivered"), 0)[0]
    assert "cracked" not in new.customer_text
    assert new.customer_text.endswith("I just changed my mind and would like a refund.")
    assert new.expected.outcome == "refuse"


def test_status_flip_changes_the_required_status_phrase():
    case = support_case("status", "shipped")
    new = run_op("flip_status", case, 3)[0]
    status = new.environment.state["orders"]["W1001"]["status"]
    assert status != "shipped" and new.expected.reply_contains == (status,)


def test_out_of_stock_refuses_without_forbidding_the_attempt():
    new = run_op("flip_out_of_stock", support_case("exchange", "delivered"), 0)[0]
    assert new.expected.outcome == "refuse" and not writes(new)
    assert not any(f.tool == "exchange_item" for f in new.expected.forbidden_calls)
    box = get_domain("support").sandbox(new.environment)
    tried = box.call(
        "exchange_item", {"order_id": "W1001", "item_id": "I1", "new_variant_id": "P100-green"}
    )
    assert (
        tried.error == "policy"
        and box.final_state() == SupportState.parse(new.environment.state).dump()
    )


def _partial_refund(text: str) -> Case:
    base = support_case("refund", "delivered", price=40.0)
    call = refund_call("W1001", ["I1"], "damaged", 20.0)
    turns = [t.model_dump(mode="json") for t in base.conversation]
    turns[-1]["content"] = text
    expected = base.expected.model_copy(update={"tool_calls": (call,)})
    return derive(base, conversation=turns, expected=expected.model_dump(mode="json"))


def test_price_paid_flip_needs_the_amount_in_the_customer_words():
    named = _partial_refund("My mug from W1001 is cracked. Refund me 20.00 and I will keep it.")
    relative = _partial_refund("My mug from W1001 is cracked. Refund half of what I paid.")
    (flipped,) = run_op("flip_price_paid", named, 3)
    # the item refunded in full, what was paid (as seed W1024 and the reference agent do), and
    # the 20.00 asked for forbidden as more than was paid
    paid = flipped.environment.state["orders"]["W1001"]["items"][0]["price"]
    assert paid < 20.0 and flipped.expected.outcome == "resolve"
    (refund,) = flipped.expected.tool_calls
    assert refund.tool == "refund_items" and "amount" not in refund.params
    assert refund.params["item_ids"] == ["I1"]
    assert f"{paid:.2f}" in flipped.expected.reply_contains
    asked = flipped.expected.forbidden_calls[-1]
    assert (asked.tool, asked.params, asked.reason) == (
        "refund_items",
        {"order_id": "W1001", "amount": 20.0},
        "more than was paid",
    )
    assert "over_refund" in flipped.tags.labels and problems(flipped) == []
    assert run_op("flip_price_paid", relative, 3) == []


def test_not_shipped_skips_a_customer_who_says_the_order_arrived():
    refused = support_case("cancel", "delivered")
    assert len(run_op("flip_not_shipped", refused, 0)) == 1  # flipped when nothing says arrived
    said = refused.conversation[-1].model_copy(
        update={
            "content": "Cancel my order W1001. The mug came yesterday but I don't want it anymore."
        }
    )
    arrived = refused.model_copy(update={"conversation": (*refused.conversation[:-1], said)})
    assert arrived.customer_text.endswith("came yesterday but I don't want it anymore.")
    assert [o for s in range(4) for o in run_op("flip_not_shipped", arrived, s)] == []


def test_not_shipped_skips_a_user_scenario_that_says_the_order_arrived():
    refused = support_case("cancel", "delivered")
    scenario = "You are Ana Diaz. The mug from order W1001 came yesterday; cancel the order."
    arrived = _scenario(refused, scenario)
    assert arrived.customer_text == ""
    assert [o for s in range(4) for o in run_op("flip_not_shipped", arrived, s)] == []
    waiting = derive(arrived, user_scenario="You are Ana Diaz. Cancel order W1001.")
    (flipped,) = run_op("flip_not_shipped", waiting, 0)
    assert flipped.provenance.operators[-1].version == "3"


def test_not_shipped_still_flips_a_customer_who_says_the_order_has_not_arrived():
    refused = support_case("cancel", "delivered")
    for text in (
        "Cancel my order W1001, it hasn't arrived yet.",
        "Cancel my order W1001. I never received it.",
        "Cancel order W1001, it has not been delivered.",
    ):
        said = refused.conversation[-1].model_copy(update={"content": text})
        waiting = refused.model_copy(update={"conversation": (*refused.conversation[:-1], said)})
        assert waiting.customer_text.endswith(text)
        assert len(run_op("flip_not_shipped", waiting, 0)) == 1, text


@pytest.mark.parametrize(
    "text",
    [
        "My mug from W1001 is cracked. Would $20 back be okay?",
        "My mug from W1001 is cracked, I'd keep it for 20 dollars back.",
        "My mug from W1001 is cracked. Refund me $ 20.00 and I will keep it.",
    ],
)
def test_price_paid_flip_reads_whole_dollar_amounts(text):
    flipped = run_op("flip_price_paid", _partial_refund(text), 3)
    assert flipped and flipped[0].expected.forbidden_calls[-1].params["amount"] == 20.0


@pytest.mark.parametrize(
    "text",
    [
        "Order W1020 has a cracked mug, refund 2 of them.",
        "My mug is cracked, $200 back please.",
        "Refund 120.00.",
    ],
)
def test_price_paid_flip_does_not_take_other_numbers_for_the_amount(text):
    assert run_op("flip_price_paid", _partial_refund(text), 3) == []


def _with_text(case, text):
    turns = list(case.conversation)
    turns[-1] = turns[-1].model_copy(update={"content": text})
    return derive(case, conversation=turns)


def test_intact_flip_skips_a_text_that_still_describes_the_fault():
    # Turning only the damage word around leaves "it won't even turn on" or "a hole along the
    # seam" beside "nothing is actually wrong": a defective item the policy refunds, labelled
    # refuse. Nor can an attributive damage word be flipped ("a in perfect condition handle").
    case = support_case("refund", "delivered")
    for text in (
        "The box was crushed and the mug from W1001 is damaged, it won't even turn on.",
        "The mug from W1001 has a hole along the seam, it looks defective. Refund please?",
        "The mug from W1001 arrived with a cracked handle. Can you refund it?",
        "Order W1001 came today and the mug is cracked down the side. A refund please.",
        "The mug from W1001 arrived broken, there was glass all over the box.",
    ):
        for seed in range(4):
            assert run_op("flip_intact", _with_text(case, text), seed) == [], text


def test_intact_flip_turns_a_plain_damage_statement_around():
    case = _with_text(
        support_case("refund", "delivered"), "The mug from W1001 arrived cracked. Refund it please."
    )
    (new,) = run_op("flip_intact", case, 1)
    assert new.customer_text.startswith("The mug from W1001 arrived ")
    assert "cracked" not in new.customer_text and new.expected.outcome == "refuse"
