"""The final state kept as what changed: applying the delta gives the final state back, equal
as JSON (types included), for any JSON objects."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from casemill.evaluation.states import apply_delta, state_delta

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-3, 3, allow_nan=False),
    st.text(max_size=3),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=8,
)
states = st.dictionaries(st.sampled_from(["orders", "users", "x", "y"]), values, max_size=4)


@settings(max_examples=400, deadline=None)
@given(states, states)
def test_apply_of_the_delta_is_the_final_state_as_json(initial, final):
    rebuilt = apply_delta(initial, state_delta(initial, final))
    assert json.dumps(rebuilt, sort_keys=True) == json.dumps(final, sort_keys=True)


def test_the_delta_keeps_only_what_changed_and_tells_one_from_true():
    initial = {"orders": {"W1": {"status": "pending"}, "W2": {"n": 1}}, "flag": 1}
    final = {"orders": {"W1": {"status": "cancelled"}, "W2": {"n": 1}}, "flag": True}
    assert state_delta(initial, final) == {
        "set": {"orders": {"W1": {"status": "cancelled"}}},
        "values": {"flag": True},
    }
    assert state_delta(initial, initial) == {}
    gone = state_delta(initial, {"orders": {"W1": {"status": "pending"}}})
    assert gone == {"removed": {"orders": ["W2"]}, "dropped": ["flag"]}
