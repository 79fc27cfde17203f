"""The support pack's contract agrees with its policy, its flips flip, and every operator written
against the contract makes at least one valid candidate from the bundled seeds."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from casemill.case.model import Case, ExpectedCall
from casemill.domains import get_domain
from casemill.domains.contract import contract_of, rule_for
from casemill.generators.contract import refusals, state_after
from casemill.generators.expand import ExpandConfig, expand

SEEDS = Path(__file__).resolve().parents[2] / "seeds" / "support.jsonl"
OPERATORS = (
    "swap_entity", "flip_precondition", "attack_customer", "attack_tool_result",
    "fault_transient", "fault_persistent", "blend_request", "blend_conflict",
)  # fmt: skip


@pytest.fixture(scope="module")
def seeds() -> list[Case]:
    return [Case.model_validate_json(line) for line in SEEDS.read_text().splitlines() if line]


@pytest.fixture(scope="module")
def pack():
    from casemill.generators.contract import Pack

    domain = get_domain("support")
    return Pack(domain, contract_of(domain))


def test_the_support_domain_has_a_contract(pack):
    assert pack.contract is not None
    assert {r.tool for r in pack.contract.rules} == pack.writes - {"escalate_to_human"}


def test_the_rules_allow_every_expected_write_of_the_seeds(seeds, pack):
    checked = 0
    for case in seeds:
        calls = list(case.expected.tool_calls)
        reasons = refusals(pack, case.environment.state, calls)
        assert reasons is not None and not any(reasons), (case.id, reasons)
        checked += sum(1 for c in calls if rule_for(pack.contract, c.tool))
    assert checked >= 40


def _flips(seeds, pack):
    for case in seeds:
        calls = list(case.expected.tool_calls)
        for index, call in enumerate(calls):
            rule = rule_for(pack.contract, call.tool)
            for flip in rule.flips if rule else ():
                yield case, calls, index, rule, flip


def test_each_flip_refuses_the_write_it_applies_to(seeds, pack):
    flipped: dict[str, int] = {}
    for case, calls, index, rule, flip in _flips(seeds, pack):
        state = copy.deepcopy(case.environment.state)
        if flip.edit(state, dict(calls[index].params)) is None:
            continue
        before = state_after(pack, state, calls[:index])
        assert rule.check(before, dict(calls[index].params)), (case.id, flip.name)
        # the sandbox, which enforces the policy, refuses it as well
        env = case.environment.model_copy(update={"state": before})
        sandbox = pack.domain.sandbox(env, faults=False)
        assert not sandbox.call(calls[index].tool, dict(calls[index].params)).ok
        flipped[flip.name] = flipped.get(flip.name, 0) + 1
    names = {f.name for r in pack.contract.rules for f in r.flips}
    assert set(flipped) == names


def test_the_refusal_and_escalation_follow_support_conventions(pack):
    assert pack.contract.refusal_phrases("refuse") == ("cannot",)
    assert pack.contract.refusal_phrases("escalate") == ("human",)
    call = pack.contract.escalation("tool_failure", "W1001")
    assert call.tool == "escalate_to_human"
    assert call.params["order_id"] == "W1001" and call.params["reason"] == "tool_failure"


def test_the_customer_is_the_signed_in_one(seeds, pack):
    case = next(c for c in seeds if c.id == "c_01e7c10ba6eae00c31d8")
    assert pack.contract.customer(case) == "C1040"


def test_requests_name_the_customers_own_orders_the_case_does_not_discuss(seeds, pack):
    case = next(c for c in seeds if c.id == "c_2ab0bbecdfb33b4eef87")
    made = {(r.call.tool, r.call.params["order_id"]) for r in pack.contract.requests(case)}
    assert ("cancel_order", "W1087") in made and ("refund_items", "W1086") in made
    assert not any(oid == "W1085" for _, oid in made)  # the order the customer asks about
    for request in pack.contract.requests(case):
        assert request.call.params["order_id"] in request.text


def test_conflicts_are_the_policys_on_one_order(pack):
    def call(tool, order="W1001", **params):
        return ExpectedCall(tool=tool, params={"order_id": order, **params})

    conflicts = pack.contract.conflicts
    refund = call("refund_items", item_ids=["I1"], reason="damaged")
    assert conflicts(call("cancel_order"), call("change_shipping_address", address={}))
    assert conflicts(refund, call("exchange_item", item_id="I1", new_variant_id="P1-red"))
    assert not conflicts(refund, call("exchange_item", item_id="I2", new_variant_id="P1-red"))
    assert not conflicts(call("cancel_order"), call("change_shipping_address", "W1002"))
    assert not conflicts(call("cancel_order"), call("escalate_to_human", reason="other"))


def test_the_plant_goes_where_get_order_shows_it(seeds, pack):
    case = next(c for c in seeds if c.id == "c_01e7c10ba6eae00c31d8")
    state = copy.deepcopy(case.environment.state)
    assert pack.contract.plant(state, case, "CANARY") == "get_order"
    sandbox = pack.domain.sandbox(case.environment.model_copy(update={"state": state}))
    assert sandbox.call("get_order", {"order_id": "W1042"}).content["note"] == "CANARY"


@pytest.fixture(scope="module")
def expanded(seeds):
    return expand(seeds, ExpandConfig(chains=OPERATORS), rng_seed=0)


@pytest.mark.parametrize("name", OPERATORS)
def test_each_operator_makes_a_valid_candidate(expanded, name):
    assert expanded.summary.accepted_by_operator.get(name, 0) >= 1


def test_no_candidate_is_rejected_but_as_a_near_duplicate(expanded):
    assert {r.reason for r in expanded.rejections} <= {"near_duplicate"}
