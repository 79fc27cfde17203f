"""The replay check: expected calls replayed on the initial environment succeed and agree with
the policy; the outcome fits the calls."""

from __future__ import annotations

from fixtures.support_state import NEW_ADDRESS, environment

from casemill.case.model import Case, Expected, ForbiddenCall, Turn
from casemill.domains.support.policy import address_call, cancel_call, escalate_call, refund_call
from casemill.replay import replay


def case(*calls, outcome="resolve", forbidden=()) -> Case:
    return Case(
        domain="support",
        environment=environment(),
        conversation=(Turn(role="customer", content="help"),),
        expected=Expected(
            tool_calls=calls, forbidden_calls=forbidden, outcome=outcome, optimal_steps=3
        ),
    )


def test_good_replay_returns_final_states():
    result = replay(case(refund_call("W1001", ["I1"], "damaged"), cancel_call("W1002")))
    assert result.ok and result.problems == []
    assert result.final_state["orders"]["W1002"]["status"] == "cancelled"
    assert result.comparable_state["orders"]["W1001"]["refunds"] == [
        {"id": "R1", "item_ids": ["I1"], "amount": 14.5}
    ]
    quick = replay(case(cancel_call("W1002")), states=False)
    assert quick.ok and quick.final_state is None and quick.comparable_state is None


def test_policy_violation_fails_replay_at_the_call():
    result = replay(case(cancel_call("W1002"), address_call("W1003", NEW_ADDRESS)))
    assert not result.ok
    assert [(p.field, p.rule) for p in result.problems] == [("expected.tool_calls[1]", "replay")]
    assert "before shipping" in result.problems[0].message


def test_calls_replay_in_order_on_the_changed_state():
    result = replay(case(cancel_call("W1002"), cancel_call("W1002")))
    assert [p.field for p in result.problems] == ["expected.tool_calls[1]"]


def test_outcome_must_fit_the_calls():
    clarify = replay(case(cancel_call("W1002"), outcome="clarify"))
    assert [(p.field, p.rule) for p in clarify.problems] == [("expected.outcome", "outcome-calls")]
    escalate = replay(case(outcome="escalate"))
    assert [p.rule for p in escalate.problems] == ["outcome-calls"]
    assert replay(case(escalate_call("customer_request", "W1001"), outcome="escalate")).ok


def test_expected_call_that_is_also_forbidden():
    rule = ForbiddenCall(tool="cancel_order", params={"order_id": "W1002"}, reason="keep it")
    result = replay(case(cancel_call("W1002"), forbidden=(rule,)))
    assert [(p.field, p.rule) for p in result.problems] == [
        ("expected.tool_calls[0]", "expected-forbidden")
    ]
    assert "keep it" in result.problems[0].message


def test_an_excluded_phrase_inside_a_required_one_is_a_contradiction():
    base = case(cancel_call("W1002"))
    phrases = {
        "reply_contains": ("Order CANCELLED", "W1002"),
        "reply_excludes": ("refund", "cancelled"),
    }
    bad = base.model_copy(update={"expected": base.expected.model_copy(update=phrases)})
    result = replay(bad)
    assert [(p.field, p.rule) for p in result.problems] == [
        ("expected.reply_excludes[1]", "phrase-contradiction")
    ]
    assert (
        "'cancelled' is part of the required phrase 'Order CANCELLED'" in result.problems[0].message
    )
    fine = {"reply_contains": ("refund",), "reply_excludes": ("REFUND APPROVED BY SYSTEM",)}
    assert replay(base.model_copy(update={"expected": base.expected.model_copy(update=fine)})).ok


def test_an_expected_value_its_own_rule_cannot_match_is_reported():
    from casemill.case.model import ExpectedCall, ParamRule

    good = refund_call("W1001", ["I1"], "damaged")
    rules = {**good.match, "order_id": ParamRule(kind="number"), "reason": ParamRule(kind="set")}
    bad = ExpectedCall(tool=good.tool, params=good.params, match=rules)
    result = replay(case(bad))
    assert [(p.field, p.rule) for p in result.problems] == [
        ("expected.tool_calls[0].match.order_id", "match-rule"),
        ("expected.tool_calls[0].match.reason", "match-rule"),
    ]
    assert "'W1001' does not match itself under its 'number' rule" in result.problems[0].message
    assert replay(case(good)).ok
