"""Content ids and canonical JSON: the same case has the same id on every machine and Python
version (golden ids pinned as literals), and ids ignore key order and empty values."""

from __future__ import annotations

import copy
import gc
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from casemill.case import Case, canonical_json, content_id, derive
from casemill.case.ids import (
    IdentityMemo,
    NotPlain,
    canonical_array,
    canonical_bytes,
    canonical_member,
    canonical_object,
    canonical_pruned,
    prune_plain,
    short_hash,
)
from casemill.case.model import MAX_TEXT, Environment, _canonical_dump, environment_parts

MINIMAL = {
    "domain": "support",
    "conversation": [{"role": "customer", "content": "Where is my order W1001?"}],
    "expected": {"outcome": "clarify", "optimal_steps": 2},
}
MONEY = {
    "domain": "support",
    "environment": {
        "state": {
            "orders": {
                "W1001": {
                    "id": "W1001",
                    "customer_id": "C1001",
                    "status": "delivered",
                    "items": [
                        {"item_id": "I1", "name": "Ceramic mug 12oz", "price": 14.5},
                        {"item_id": "I2", "name": "Wool scarf", "price": 32.0},
                    ],
                }
            },
            "customers": {
                "C1001": {"id": "C1001", "name": "Ana Diaz", "email": "ana.diaz@example.com"}
            },
        }
    },
    "conversation": [
        {
            "role": "system",
            "content": "Authenticated customer: C1001 (Ana Diaz, ana.diaz@example.com)",
        },
        {"role": "customer", "content": "My order W1001 arrived and the mug is cracked."},
    ],
    "expected": {
        "tool_calls": [
            {
                "tool": "refund_items",
                "params": {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"},
                "match": {
                    "order_id": {"kind": "id"},
                    "item_ids": {"kind": "set", "ids": True},
                    "reason": {"kind": "any"},
                },
            }
        ],
        "outcome": "resolve",
        "reply_contains": ["14.50", "refund"],
        "optimal_steps": 3,
    },
    "tags": {"category": "capability", "intents": ["refund"], "difficulty": "easy"},
}
UNICODE = {
    "domain": "support",
    "user_scenario": (
        "Du bist Zoë Müller — du möchtest Bestellung W1002 stornieren. 注文をキャンセル"
    ),
    "expected": {
        "outcome": "refuse",
        "forbidden_calls": [{"any_write": True, "reason": "shipped"}],
        "reply_contains": ["cannot"],
        "optimal_steps": 2,
    },
    "tags": {"category": "adversarial"},
}
GOLDEN = [
    (MINIMAL, "c_3937ca7fecdd1dd11d31"),
    (MONEY, "c_9fc0cffddaa173c3f04b"),
    (UNICODE, "c_c63ac2b1351949b8b391"),
]


@pytest.mark.parametrize(("data", "want"), GOLDEN)
def test_golden_ids(data, want):
    case = Case.model_validate(data)
    assert case.id == want
    assert Case.model_validate({**data, "id": want}).id == want
    assert Case.model_validate_json(case.model_dump_json()).id == want


def test_id_ignores_fields_outside_the_meaning():
    data = copy.deepcopy(MONEY)
    data["tags"] = {"category": "robustness"}
    data["provenance"] = {"origin": "generated", "seed": 7}
    data["review"] = {"status": "approved", "reviewer": "kim"}
    assert Case.model_validate(data).id == GOLDEN[1][1]


def test_id_ignores_key_order_and_empty_values():
    reordered = json.loads(json.dumps(MONEY, sort_keys=True))
    reordered["expected"] = dict(reversed(list(reordered["expected"].items())))
    reordered["expected"]["reply_excludes"] = []
    reordered["environment"]["faults"] = []
    reordered["user_scenario"] = None
    assert Case.model_validate(reordered).id == GOLDEN[1][1]


def test_int_valued_floats_hash_like_ints():
    data = copy.deepcopy(MONEY)
    data["environment"]["state"]["orders"]["W1001"]["items"][1]["price"] = 32
    assert Case.model_validate(data).id == GOLDEN[1][1]


def test_any_content_change_changes_the_id():
    data = copy.deepcopy(MONEY)
    data["conversation"][1]["content"] += " "
    assert Case.model_validate(data).id != GOLDEN[1][1]


def test_canonical_json_form():
    value = {
        "b": 1,
        "a": {"z": None, "y": "", "x": [], "w": {}, "v": [None, ""]},
        "c": 2.0,
        "d": "é",
    }
    assert canonical_json(value) == '{"a":{"v":[null,""]},"b":1,"c":2,"d":"é"}'
    assert canonical_json({"nested": {"empty": {"deeper": None}}}) == "{}"
    assert canonical_json([1.5, 2**60 * 1.0, -0.0]) == "[1.5,1.152921504606847e+18,0]"
    assert content_id({"a": 1}) == "c_" + short_hash('{"a":1}', 20)


def test_canonical_json_refuses_nan():
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.text(max_size=4), json_values, max_size=6))
def test_canonical_json_is_independent_of_key_order(value):
    shuffled = dict(reversed(list(value.items())))
    assert canonical_json(value) == canonical_json(shuffled)
    assert json.loads(canonical_json(value)) == json.loads(
        canonical_json(json.loads(canonical_json(value)))
    )


def _reference_canonical_json(value):
    """The definition, written the slow and obvious way (the oracle for the fast one)."""

    def prune(v):
        if isinstance(v, dict):
            out = {k: prune(x) for k, x in v.items()}
            return {
                k: x for k, x in out.items() if x is not None and x != "" and x != [] and x != {}
            }
        if isinstance(v, list | tuple):
            return [prune(x) for x in v]
        if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
            return int(v)
        return v

    return json.dumps(
        prune(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


any_floats = st.floats(allow_nan=False, allow_infinity=False) | st.floats(-1e-3, 1e-3)
oracle_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(2**62, 2**70)
    | any_floats
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=3), inner, max_size=4)
        | st.tuples(inner, inner)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(oracle_values)
def test_canonical_json_matches_its_definition(value):
    assert canonical_json(value) == _reference_canonical_json(value)


def test_derive_gives_a_new_validated_case_and_leaves_the_original():
    case = Case.model_validate(MONEY)
    changed = derive(case, user_scenario="You are Ana; the mug is cracked.")
    assert changed.id != case.id and changed.user_scenario
    assert case.user_scenario is None and case.id == GOLDEN[1][1]
    same = derive(case)
    assert same.id == case.id
    with pytest.raises(ValidationError):
        derive(case, conversation=[], user_scenario=None)


def test_models_are_frozen_and_forbid_unknown_fields():
    case = Case.model_validate(MONEY)
    with pytest.raises(ValidationError):
        case.domain = "other"
    with pytest.raises(ValidationError):
        case.expected.outcome = "refuse"
    with pytest.raises(ValidationError, match="Extra inputs"):
        Case.model_validate({**MINIMAL, "colour": "blue"})


def test_edited_content_with_the_old_id_is_refused():
    data = {**copy.deepcopy(MINIMAL), "id": GOLDEN[1][1]}
    with pytest.raises(ValidationError, match="does not match the case's content"):
        Case.model_validate(data)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=3), oracle_values, max_size=5), st.lists(oracle_values))
def test_canonical_json_composes_from_members_and_elements(obj, items):
    members = {k: canonical_member(v) for k, v in obj.items()}
    assert canonical_object(members) == canonical_bytes(obj)
    assert canonical_array(canonical_bytes(v) for v in items) == canonical_bytes(items)
    assert canonical_bytes(obj) == canonical_json(obj).encode("utf-8")


def _repo_cases():
    root = Path(__file__).resolve().parents[2]
    for path in sorted([*root.glob("seeds/*.jsonl"), *root.glob("corpus/*.jsonl")]):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                yield json.loads(line)


ODD_NUMBERS = {
    **copy.deepcopy(MONEY),
    "environment": {"state": {"tiny": 1e-7, "big": 2**70, "whole": 3.0, "none": None}},
}


@pytest.mark.parametrize("data", [MINIMAL, MONEY, UNICODE, ODD_NUMBERS])
def test_canonical_meaning_is_the_canonical_json_of_the_meaning(data):
    case = Case.model_validate(data)
    assert case.canonical_meaning() == canonical_json(case.meaning()).encode("utf-8")
    assert case.id == content_id(case.meaning())


def test_ids_of_the_seeds_and_the_corpus_are_their_meanings_hash():
    datas = list(_repo_cases())
    assert datas
    for data in datas:
        case = Case.model_validate(data)
        assert case.id == data["id"] == content_id(case.meaning())


def test_identity_memo_computes_once_per_object_and_forgets_the_dead():
    calls = []
    memo = IdentityMemo(lambda obj: calls.append(obj.id) or len(calls))
    one, two = Case.model_validate(MINIMAL), Case.model_validate(MONEY)
    assert (memo(one), memo(one), memo(two), memo(one)) == (1, 1, 2, 1)
    assert len(memo) == 2
    del one
    gc.collect()
    assert len(memo) == 1 and memo(two) == 2


def test_derive_keeps_the_parents_parts_and_validates_the_new_ones():
    case = Case.model_validate(MONEY)
    turns = list(case.conversation)
    turns[1] = turns[1].model_copy(update={"content": "The mug is broken."})
    new = derive(case, conversation=turns)
    assert new.environment is case.environment and new.expected is case.expected
    assert new.conversation[0] is case.conversation[0]
    assert new.conversation[1].content == "The mug is broken."
    assert new.id == Case.model_validate({**new.model_dump(mode="json"), "id": ""}).id
    too_long = turns[1].model_copy(update={"content": "x" * (MAX_TEXT + 1)})
    with pytest.raises(ValidationError, match="at most"):
        derive(case, conversation=[turns[0], too_long])
    no_steps = case.expected.model_copy(update={"optimal_steps": 0})
    with pytest.raises(ValidationError, match="greater than or equal"):
        derive(case, expected=no_steps)
    kept_calls = derive(case, expected=case.expected.model_copy(update={"outcome": "refuse"}))
    assert kept_calls.expected.tool_calls[0] is case.expected.tool_calls[0]


@settings(max_examples=300, deadline=None)
@given(oracle_values)
def test_plain_data_prunes_like_its_json_dump(value):
    """`prune_plain` reads plain data and frozen models without dumping them: the same canonical
    JSON as the dump's (the state of an environment is an `Any` dict, so it is dumped as is)."""
    env = Environment(state={"v": value})
    dumped = env.model_dump(mode="json")
    assert _canonical_dump(env) == canonical_bytes(dumped)
    assert environment_parts(env)[1] == canonical_member(dumped["state"])
    try:
        assert canonical_pruned(prune_plain(env)) == canonical_bytes(dumped)
    except NotPlain:  # orjson refuses ints over 64 bits: the dump is taken instead
        assert any(abs(v) >= 2**63 for v in _ints(value)), value


def _ints(value):
    if isinstance(value, dict | list | tuple):
        for v in value.values() if isinstance(value, dict) else value:
            yield from _ints(v)
    elif type(value) is int:
        yield value


def test_parts_of_the_seeds_and_the_corpus_read_plain_as_dumped():
    for data in _repo_cases():
        case = Case.model_validate(data)
        for part in (*case.conversation, case.expected, case.environment, case.tags):
            want = canonical_bytes(part.model_dump(mode="json"))
            assert _canonical_dump(part) == canonical_bytes(prune_plain(part)) == want
        faults, state, _ = environment_parts(case.environment)
        assert faults == canonical_member(case.environment.model_dump(mode="json")["faults"])
        assert state == canonical_member(case.environment.model_dump(mode="json")["state"])


def test_what_is_not_plain_is_dumped_first():
    review = Case.model_validate({**MINIMAL, "review": {"decided_at": "2026-01-02T03:04:05Z"}})
    with pytest.raises(NotPlain):
        prune_plain(review.review)
    assert _canonical_dump(review.review) == canonical_bytes(review.review.model_dump(mode="json"))
    for odd in ({"inf": math.inf}, {"set": {1}}):
        with pytest.raises(NotPlain):
            prune_plain(odd)
    with pytest.raises(NotPlain):
        canonical_pruned(prune_plain({1: "int key"}))


texts = st.text(max_size=6) | st.sampled_from(["", "0.00001", "1e-7", "é\u2028"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["customer", "system", "tool"]), texts, texts), max_size=3),
    st.lists(st.dictionaries(st.text(max_size=3), oracle_values, max_size=3), max_size=2),
    texts,
    texts,
)
def test_canonical_meaning_written_at_once_is_the_composed_one(turns, params, domain, scenario):
    """Turns and expected calls read from their fields, `expected` composed from its calls' and
    the meaning written in one pass from its parts' give the canonical JSON of the dump, whatever
    the strings and numbers (small floats take the standard library's path)."""
    conversation = [{"role": r, "content": c, "tool_call_id": i or None} for r, c, i in turns]
    conversation.append(
        {
            "role": "assistant",
            "tool_calls": [{"tool": "t", "params": p, "id": domain} for p in params],
        }
    )
    rules = [{"kind": "number", "tolerance": 1e-6}, {"kind": "exact"}, {"kind": "id", "ids": True}]
    data = {
        "domain": domain or "d",
        "conversation": conversation,
        "user_scenario": scenario or "s",
        "expected": {
            "tool_calls": [
                {"tool": "t", "params": p, "match": dict(zip(p, rules, strict=False))}
                for p in params
            ],
            "forbidden_calls": [{"tool": "f", "params": {"x": 1e-5}}] if params else [],
            "outcome": "resolve",
            "reply_contains": [scenario],
            "optimal_steps": 1,
        },
    }
    case = Case.model_validate(data)
    assert case.canonical_meaning() == canonical_json(case.meaning()).encode("utf-8")
    for part in (*case.conversation, case.expected, *case.expected.tool_calls):
        assert _canonical_dump(part) == canonical_bytes(part.model_dump(mode="json"))
