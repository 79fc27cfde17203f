"""Outcome flips agree with the policy: the expected state is recomputed, never kept."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casemill.case.matching import forbidden_hit
from casemill.case.model import ToolCall
from casemill.domains.support.policy import Intent, decide
from casemill.domains.support.state import SupportState
from casemill.domains.support.tools import WRITE_TOOLS
from generators import apply_operator, get_operator
from generators.facts import intent_of, writes
from generators.framework import NotApplicable
from tests.generators.conftest import cases, problems, support_case

FLIPS = ["flip_not_delivered", "flip_already_refunded", "flip_shipped", "flip_out_of_stock",
         "flip_price_paid", "flip_intact", "flip_not_shipped", "flip_status"]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(name, case, seed):
    try:
        return apply_operator(get_operator(name), case, seed=seed, index=0)
    except NotApplicable:
        return []


def _blocked(case, call):
    return any(forbidden_hit(f, ToolCall(tool=call.tool, params=call.params), WRITE_TOOLS)
               for f in case.expected.forbidden_calls)


@SETTINGS
@given(case=cases(), name=st.sampled_from(FLIPS), seed=st.integers(0, 2**31))
def test_flips_agree_with_the_policy(case, name, seed):
    out = _run(name, case, seed)
    assert out == _run(name, case, seed)
    for new in out:
        assert problems(new) == []
        state = SupportState.parse(new.environment.state)
        for old_call in writes(case):
            intent = intent_of(old_call)
            if name == "flip_intact":
                intent = Intent("refund", intent.order_id, intent.item_ids, "changed_mind")
            decision = decide(state, intent)
            assert new.expected.outcome == decision.outcome
            assert list(writes(new)) == list(decision.calls)
            if decision.outcome == "refuse":
                assert _blocked(new, old_call)
            if decision.outcome == "clarify":
                assert any(f.any_write for f in new.expected.forbidden_calls)
        assert new.expected.outcome != case.expected.outcome or name == "flip_status"


def test_refund_on_an_order_still_processing_becomes_clarify():
    case = support_case("refund", "delivered")
    out = [o for s in range(8) for o in _run("flip_not_delivered", case, s)]
    by_status = {o.environment.state["orders"]["W1001"]["status"]: o for o in out}
    assert by_status["processing"].expected.outcome == "clarify"
    assert by_status["shipped"].expected.outcome == "refuse"
    assert by_status["shipped"].expected.reply_contains == ("cannot",)


def test_cancel_flips_both_ways():
    shipped = _run("flip_shipped", support_case("cancel", "processing"), 1)[0]
    assert shipped.expected.outcome == "refuse" and not writes(shipped)
    refused = support_case("cancel", "shipped")
    cancelled = _run("flip_not_shipped", refused, 1)[0]
    assert [c.tool for c in writes(cancelled)] == ["cancel_order"]
    assert cancelled.expected.reply_contains == ("cancelled",)
    assert cancelled.expected.forbidden_calls == ()


def test_intact_item_edits_the_words_and_refuses():
    new = _run("flip_intact", support_case("refund", "delivered"), 0)[0]
    assert "cracked" not in new.customer_text and "changed my mind" in new.customer_text
    assert new.expected.outcome == "refuse"


def test_status_flip_changes_the_required_status_phrase():
    case = support_case("status", "shipped")
    new = _run("flip_status", case, 3)[0]
    status = new.environment.state["orders"]["W1001"]["status"]
    assert status != "shipped" and new.expected.reply_contains == (status,)
