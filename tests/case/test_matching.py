"""Parameter matching: every rule kind, whole calls, and forbidden-call rules."""

from __future__ import annotations

import pytest

from casemill.case.matching import (
    call_matches,
    forbidden_hit,
    normalize_id,
    params_match,
    value_matches,
)
from casemill.case.model import ExpectedCall, ForbiddenCall, ParamRule, ToolCall
from casemill.domains.support.policy import refund_call
from casemill.domains.support.tools import WRITE_TOOLS


@pytest.mark.parametrize(
    ("rule", "expected", "actual", "ok"),
    [
        (ParamRule(), {"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1.0}, True),
        (ParamRule(), "W1001", "w1001", False),
        (ParamRule(), [1, 2], [2, 1], False),
        (ParamRule(kind="number", tolerance=0.01), 14.5, "14.505", True),
        (ParamRule(kind="number", tolerance=0.01), 14.5, "$14.50", True),
        (ParamRule(kind="number", tolerance=0.01), 14.5, 14.52, False),
        (ParamRule(kind="number"), 1, True, False),
        (ParamRule(kind="number"), 1, "one", False),
        (ParamRule(kind="casefold"), "Denver ", "denver", True),
        (ParamRule(kind="casefold"), "Denver", "Denvers", False),
        (ParamRule(kind="id"), "W1001", " #w1001", True),
        (ParamRule(kind="id"), "W1001", "W1002", False),
        (ParamRule(kind="set"), [1, 2], [2, 1], True),
        (ParamRule(kind="set"), [1, 2], [1, 2, 2], False),
        (ParamRule(kind="set", ids=True), ["I1", "I2"], ["#i2", "i1"], True),
        (ParamRule(kind="set"), ["I1"], "I1", False),
        (ParamRule(kind="contains"), "cracked mug", "The CRACKED MUG arrived", True),
        (ParamRule(kind="contains"), "mug", "a lamp", False),
        (ParamRule(kind="any"), "x", None, True),
    ],
)
def test_value_matches_every_rule_kind(rule, expected, actual, ok):
    assert value_matches(expected, actual, rule) is ok


def test_normalize_id():
    assert normalize_id(" # w1001 ") == "W1001"


def test_params_and_calls():
    expected = refund_call("W1001", ["I1", "I2"], "damaged", amount=10)
    sent = {"order_id": "#w1001", "item_ids": ["I2", "I1"], "reason": "defective", "amount": 10.004}
    assert params_match(expected, sent)
    assert not params_match(expected, {k: v for k, v in sent.items() if k != "amount"})
    assert call_matches(expected, ToolCall(tool="refund_items", params=sent))
    assert not call_matches(expected, ToolCall(tool="cancel_order", params=sent))
    extra = {**sent, "note": "extra params are allowed"}
    assert params_match(expected, extra)
    assert not params_match(ExpectedCall(tool="t", params={"x": "W1"}), {"x": "w1"})


def test_forbidden_rules():
    any_write = ForbiddenCall(any_write=True)
    assert forbidden_hit(any_write, ToolCall(tool="cancel_order"), WRITE_TOOLS)
    assert not forbidden_hit(any_write, ToolCall(tool="get_order"), WRITE_TOOLS)

    scarf = ForbiddenCall(tool="refund_items", params={"order_id": "W1001", "item_ids": ["I2"]})
    hit = ToolCall(tool="refund_items", params={"order_id": "#w1001", "item_ids": ["I1", "I2"]})
    miss = ToolCall(tool="refund_items", params={"order_id": "W1001", "item_ids": ["I1"]})
    assert forbidden_hit(scarf, hit, WRITE_TOOLS)
    assert not forbidden_hit(scarf, miss, WRITE_TOOLS)
    assert not forbidden_hit(
        scarf, ToolCall(tool="cancel_order", params={"order_id": "W1001"}), WRITE_TOOLS
    )
    assert not forbidden_hit(scarf, ToolCall(tool="refund_items", params={}), WRITE_TOOLS)

    too_much = ForbiddenCall(tool="refund_items", params={"amount": 46.5})
    assert forbidden_hit(
        too_much, ToolCall(tool="refund_items", params={"amount": 46.504}), WRITE_TOOLS
    )
    assert not forbidden_hit(
        too_much, ToolCall(tool="refund_items", params={"amount": 14.5}), WRITE_TOOLS
    )

    whole = ForbiddenCall(tool="cancel_order")
    assert forbidden_hit(
        whole, ToolCall(tool="cancel_order", params={"order_id": "W7"}), WRITE_TOOLS
    )


def test_match_rules_must_name_params():
    with pytest.raises(ValueError, match="not in params"):
        ExpectedCall(tool="t", params={}, match={"x": ParamRule(kind="any")})
