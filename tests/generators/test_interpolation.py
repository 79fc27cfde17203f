"""Intent interpolation: compatible intents give the union, contradictory or ambiguous ones
give clarify with no write."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from casemill.packs.support.facts import writes
from tests.generators.conftest import (
    PROPERTY_SETTINGS,
    cases,
    checked_outputs,
    run_op,
    support_case,
)

BLENDS = ["blend_new_order", "blend_contradictory", "blend_ambiguous"]


@PROPERTY_SETTINGS
@given(case=cases(), name=st.sampled_from(BLENDS), seed=st.integers(0, 2**31))
def test_union_or_clarify(case, name, seed):
    for new in checked_outputs(name, case, seed):
        if name == "blend_new_order":
            old = list(case.expected.tool_calls)
            assert list(new.expected.tool_calls[: len(old)]) == old
            assert len(new.expected.tool_calls) > len(old)
            assert set(case.expected.reply_contains) <= set(new.expected.reply_contains)
            assert len(new.tags.intents) > len(case.tags.intents)
        elif name == "blend_contradictory":
            assert new.expected.outcome == "clarify" and not writes(new)
            assert any(f.any_write for f in new.expected.forbidden_calls)
        else:  # the seed's own label stays; the added request is a question
            assert new.expected.tool_calls == case.expected.tool_calls
            assert new.expected.outcome == case.expected.outcome
            assert "which order" in new.expected.reply_contains


def test_blend_spans_two_new_orders_with_their_own_calls():
    case = support_case("refund", "delivered")
    seen = set()
    for seed in range(30):
        new = run_op("blend_new_order", case, seed)[0]
        orders = set(new.environment.state["orders"])
        called = {c.params.get("order_id") for c in writes(new)} - {None}
        assert called <= orders
        seen.update(new.tags.intents)
    assert seen >= {"refund", "cancel", "change_address", "exchange", "status", "escalate"}


def test_ambiguous_other_order_asks_which_order_and_keeps_the_seeds_refund():
    # only "my other order" is ambiguous: the refund of the cracked mug the seed expected is as
    # clear as before, so it stays expected; neither unshipped order may be cancelled
    case = support_case("refund", "delivered")
    new = run_op("blend_ambiguous", case, 1)[0]
    unshipped = sorted(
        o["id"]
        for o in new.environment.state["orders"].values()
        if o["status"] in ("pending", "processing")
    )
    assert len(unshipped) == 2
    assert writes(new) == writes(case) and new.expected.outcome == "resolve"
    assert new.expected.reply_contains == (*case.expected.reply_contains, "which order")
    guarded = {
        f.params["order_id"] for f in new.expected.forbidden_calls if f.tool == "cancel_order"
    }
    assert guarded == set(unshipped)
    assert not any(f.any_write for f in new.expected.forbidden_calls)
    assert "clarify" not in new.tags.labels


def test_a_contradiction_pairs_only_requests_the_policy_says_exclude_each_other():
    # a cancel of a delivered order is refused on its own: nothing contradicts the refund, which
    # stays right, so the blend would block a valid refund
    for seed in range(16):
        assert run_op("blend_contradictory", support_case("refund", "delivered"), seed) == []
    # a cancel of a processing order and a refund of it: nothing to refund yet, no contradiction;
    # the added request must be a change the policy would also allow (the address)
    for seed in range(16):
        for new in run_op("blend_contradictory", support_case("cancel", "processing"), seed):
            added = new.customer_text.lower().split("mistake")[-1]
            assert "refund" not in added and "ship" in added, added
            assert set(new.tags.intents) == {"cancel", "change_address"}


def test_a_contradiction_never_leaves_the_choice_to_the_agent():
    # "Or cancel it, whichever is easier" on a delivered order makes the refund the right move
    # (the cancel is impossible, and the customer accepts either): labelling it clarify with no
    # write would fail the agent that refunds. Contradictions must leave the choice open.
    for intent, status in (
        ("refund", "delivered"),
        ("change_address", "pending"),
        ("cancel", "processing"),
    ):
        case = support_case(intent, status)
        for seed in range(16):
            for new in run_op("blend_contradictory", case, seed):
                text = new.customer_text.lower()
                assert "whichever" not in text and "whatever works" not in text, text
