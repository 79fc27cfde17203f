"""The fast acceptor never accepts what jsonschema refuses, and accepts ordinary valid
parameters (so the fast path is taken)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from casemill.domains.base import param_errors
from casemill.domains.fastschema import compile_acceptor
from casemill.domains.support.tools import TOOL_SPECS, TOOLS_BY_NAME

PARAMS = [t["function"]["parameters"] for t in TOOL_SPECS]

leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2),
    st.sampled_from(["", "W1001", "I1", "damaged", "customer_request", "Boise", "x" * 3]),
    st.decimals(-1, 1, allow_nan=False),
    st.tuples(st.just("I1")),
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["street1", "city", "zip", "state", "extra"]), inner, max_size=4
        )
    ),
    max_leaves=8,
)
KEYS = sorted({k for p in PARAMS for k in p["properties"]} | {"unknown"})


COMPILED = [(compile_acceptor(p), Draft202012Validator(p)) for p in PARAMS]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(COMPILED), st.dictionaries(st.sampled_from(KEYS), values, max_size=5))
def test_acceptor_never_accepts_an_invalid_instance(compiled, instance):
    accept, validator = compiled
    assert accept is not None
    if accept(instance):
        assert validator.is_valid(instance), instance


@pytest.mark.parametrize(
    ("tool", "params"),
    [
        ("get_order", {"order_id": "W1001"}),
        ("list_customer_orders", {"email": "a@example.com"}),
        ("refund_items", {"order_id": "W1", "item_ids": ["I1"], "reason": "damaged", "amount": 5}),
        (
            "change_shipping_address",
            {"order_id": "W1", "address": {"street1": "1", "city": "B", "zip": "2"}},
        ),
        ("escalate_to_human", {"reason": "safety", "summary": ""}),
    ],
)
def test_valid_parameters_take_the_fast_path(tool, params):
    schema = TOOLS_BY_NAME[tool]["function"]["parameters"]
    assert compile_acceptor(schema)(params) is True
    assert param_errors(TOOLS_BY_NAME[tool], params) == []


def test_unsure_types_fall_back_and_errors_keep_their_words():
    schema = TOOLS_BY_NAME["refund_items"]["function"]["parameters"]
    params = {"order_id": "W1", "item_ids": ["I1"], "reason": "damaged", "amount": Decimal("-1")}
    assert compile_acceptor(schema)(params) is False
    assert param_errors(TOOLS_BY_NAME["refund_items"], params) == [
        "amount: Decimal('-1') is less than or equal to the minimum of 0"
    ]


def test_unsupported_keywords_do_not_compile():
    assert compile_acceptor({"type": "string", "pattern": "^W"}) is None
    assert compile_acceptor({"oneOf": [{"type": "string"}]}) is None
    assert compile_acceptor({"$ref": "https://example.org/other.json"}) is None
    recursive = {
        "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}},
        "$ref": "#/$defs/n",
    }
    assert compile_acceptor(recursive) is None


def test_refs_and_any_of():
    schema = {
        "$defs": {"id": {"type": "string", "minLength": 1}},
        "type": "object",
        "properties": {"a": {"anyOf": [{"$ref": "#/$defs/id"}, {"type": "null"}]}},
        "additionalProperties": {"type": "integer"},
    }
    accept = compile_acceptor(schema)
    assert accept({"a": "x", "b": 1}) and accept({"a": None})
    assert not accept({"a": ""}) and not accept({"a": 3}) and not accept({"b": "no"})
    assert compile_acceptor({"type": ["string", "null"]}) is None
