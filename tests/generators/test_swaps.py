"""Entity swaps rewrite every affected parameter, consistently across turns and environment."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casemill.case.model import Case, derive
from casemill.domains.support.state import SupportState
from casemill.generators import apply_operator, get_operator
from casemill.packs.support.facts import money, refund_amount, signed_in, writes
from tests.generators.conftest import cases, checked_outputs, problems, run_op, support_case

SWAPS = ["swap_order_id", "swap_customer", "swap_product", "swap_amount", "swap_address"]
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(case=cases(), name=st.sampled_from(SWAPS), seed=st.integers(0, 2**31))
def test_swaps_are_deterministic_valid_and_keep_the_outcome(case, name, seed):
    for new in checked_outputs(name, case, seed):
        assert new.expected.outcome == case.expected.outcome
        assert [c.tool for c in new.expected.tool_calls] == [
            c.tool for c in case.expected.tool_calls
        ]


@SETTINGS
@given(case=cases(), seed=st.integers(0, 2**31))
def test_order_id_swap_leaves_no_trace_of_the_old_id(case, seed):
    new = apply_operator(get_operator("swap_order_id"), case, seed=seed, index=0)[0]
    old_id = next(iter(case.environment.state["orders"]))
    new_id = next(iter(new.environment.state["orders"]))
    dumped = json.dumps(new.meaning())
    assert old_id not in dumped and old_id.lower() not in dumped
    assert new_id in new.customer_text or new_id.lower() in new.customer_text
    for call in new.expected.tool_calls:
        if "order_id" in call.params:
            assert call.params["order_id"] == new_id


@SETTINGS
@given(case=cases(), seed=st.integers(0, 2**31))
def test_customer_swap_rewrites_system_turn_state_and_params(case, seed):
    new = apply_operator(get_operator("swap_customer"), case, seed=seed, index=0)[0]
    cid, name, email = signed_in(new)
    assert cid in new.environment.state["customers"]
    assert new.environment.state["customers"][cid]["email"] == email
    assert signed_in(case)[0] not in json.dumps(new.meaning())
    assert all(o["customer_id"] == cid for o in new.environment.state["orders"].values())


def test_amount_swap_rewrites_the_refund_phrase():
    case = support_case("refund", "delivered", price=20.0, quantity=2)
    new = apply_operator(get_operator("swap_amount"), case, seed=1, index=0)[0]
    state = SupportState.parse(new.environment.state)
    amount = money(refund_amount(state, writes(new)[0]))
    assert amount != "40.00"
    assert new.expected.reply_contains[0] == amount
    assert problems(new) == []


def test_amount_swap_leaves_a_demand_judged_against_the_price_paid():
    """The customer asks $30 back for a $14.50 mug, and refunding $30 is forbidden as more than
    was paid: scaled to $43.50 the price would pass the demand the text still makes."""
    from casemill.generators.framework import NotApplicable

    seed = _seed("c_18cd148972ad3349beb1")
    assert seed.expected.forbidden_calls[0].params["amount"] == 30
    with pytest.raises(NotApplicable, match="forbidden refund amount"):
        get_operator("swap_amount").fn(seed, random.Random(0))


def _seed(case_id: str) -> Case:
    seeds = Path(__file__).resolve().parents[2] / "seeds" / "support.jsonl"
    return next(
        Case.model_validate_json(line)
        for line in seeds.read_text().splitlines()
        if f'"{case_id}"' in line
    )


def test_product_swap_leaves_an_item_named_by_a_word_another_item_shares():
    """W1061 holds a glass tumbler set and wine glasses: renaming "glass" would rename both in
    the customer's words, and the clarification the case tests would no longer make sense."""
    seed = _seed("c_54bc8bcf19789888177c")
    names = [i["name"] for o in seed.environment.state["orders"].values() for i in o["items"]]
    assert names[:2] == ["Glass tumbler set of 4 (clear)", "Wine glasses set of 2 (clear)"]
    for n in range(8):
        for new in run_op("swap_product", seed, n):
            kept = [i["name"] for o in new.environment.state["orders"].values() for i in o["items"]]
            assert "Glass tumbler set of 4 (clear)" in kept, n
            assert "glass" in new.customer_text.lower(), n


def test_address_swap_rewrites_text_params_and_city():
    case = support_case("change_address", "pending")
    new = apply_operator(get_operator("swap_address"), case, seed=2, index=0)[0]
    address = writes(new)[0].params["address"]
    assert address["street1"] in new.customer_text and address["city"] in new.customer_text
    assert "Springfield" not in new.customer_text
    assert new.expected.reply_contains == (address["city"],)


def test_product_swap_renames_item_product_and_word():
    case = support_case("exchange", "delivered")
    new = apply_operator(get_operator("swap_product"), case, seed=4, index=0)[0]
    item = new.environment.state["orders"]["W1001"]["items"][0]
    product = new.environment.state["products"]["P100"]
    assert item["name"].startswith(product["name"]) and "mug" not in item["name"].lower()
    assert "mug" not in new.customer_text
    assert problems(new) == []


def test_product_swap_never_renames_the_colour_the_customer_names_the_item_by():
    # "The blue one" names the item by its variant (kept in "Ceramic mug 12oz (blue)"), not its
    # product: swapping the product must not turn "blue" into the new product's word.
    case = support_case("refund", "delivered")
    turns = list(case.conversation)
    turns[-1] = turns[-1].model_copy(update={"content": "The blue one from W1001 arrived cracked."})
    case = derive(case, conversation=turns)
    for seed in range(10):
        for new in run_op("swap_product", case, seed):
            assert "The blue one" in new.customer_text, (seed, new.customer_text)


def _with_second_order(case: Case, name: str) -> Case:
    """`case` whose customer has a second, delivered order W1002 holding `name`."""
    state = json.loads(json.dumps(case.environment.state))
    cid = next(iter(state["customers"]))
    state["orders"]["W1002"] = {
        "id": "W1002",
        "customer_id": cid,
        "status": "delivered",
        "items": [{"item_id": "I1", "name": name, "price": 27.5}],
        "address": {"street1": "1 Main St", "city": "Dayton", "zip": "45402"},
    }
    return derive(case, environment={"state": state})


def _item_names(case: Case) -> list[str]:
    return [i["name"] for o in case.environment.state["orders"].values() for i in o["items"]]


def test_product_swap_never_makes_the_customers_word_fit_two_orders():
    # the mug of W1001 renamed to a water bottle: "the bottle from W1001" would then fit the
    # bottle of W1002 too, while the label still refunds W1001's item
    case = _with_second_order(support_case("refund", "delivered"), "Steel water bottle 750ml")
    seen = 0
    for seed in range(60):
        for new in run_op("swap_product", case, seed):
            seen += 1
            renamed = new.environment.state["orders"]["W1001"]["items"][0]["name"]
            assert "bottle" not in renamed.lower() and "water" not in renamed.lower(), renamed
    assert seen


def test_product_swap_keeps_the_kind_the_text_speaks_of():
    # "the skillet ... cooks fine" must not become a silk tie that cooks fine; a mug becomes
    # another drinking vessel, never a tie or a lamp
    mug = support_case("refund", "delivered")
    kinds = set()
    for seed in range(60):
        for new in run_op("swap_product", mug, seed):
            kinds.add(new.environment.state["orders"]["W1001"]["items"][0]["name"])
    assert kinds and all(
        any(w in n.lower() for w in ("bottle", "glasses", "tumbler", "cup")) for n in kinds
    ), kinds
    turns = list(mug.conversation)
    turns[-1] = turns[-1].model_copy(
        update={"content": "The skillet from W1001 cooks fine but its handle came off. Refund?"}
    )
    state = json.loads(json.dumps(mug.environment.state))
    state["orders"]["W1001"]["items"][0]["name"] = "Cast iron skillet 10in (black)"
    state["products"]["P100"]["name"] = "Cast iron skillet 10in"
    skillet = derive(mug, conversation=turns, environment={"state": state})
    for seed in range(60):
        for new in run_op("swap_product", skillet, seed):
            name = _item_names(new)[0].lower()
            assert any(w in name for w in ("skillet", "kettle", "pan", "pot")), name
