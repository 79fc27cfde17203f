"""The operators written against the domain contract, on a small airline case: each label
checked against the policy, and each candidate valid (replay and policy, as `expand` gates it)."""

from __future__ import annotations

import json
import random

import pytest

from casemill.case.model import Case
from casemill.domains.airline import policy
from casemill.generators import ExpandConfig, NotApplicable, apply_operator, expand, get_operator
from casemill.validation.semantic import semantic_findings
from tests.domains.airline_state import state

SCENARIO = (
    "Your user id is ann_lee_1. You want to cancel your reservation NEW001, booked this "
    "morning. You do not want anything else."
)


def _case(calls: list[dict], scenario: str = SCENARIO) -> Case:
    s = state()
    s["users"]["ann_lee_1"]["address"] = {"address1": "1 Main St", "address2": "", "city": "Austin"}
    return Case.model_validate(
        {
            "domain": "airline",
            "environment": {"state": s},
            "user_scenario": scenario,
            "customer": {"facts": {"user_id": "ann_lee_1"}},
            "expected": {"tool_calls": calls, "outcome": "resolve", "optimal_steps": 3},
            "tags": {"intents": ["cancel"]},
        }
    )


CANCEL = [{"tool": "cancel_reservation", "params": {"reservation_id": "NEW001"}}]


def _outs(name: str, case: Case, tries: int = 12) -> list[Case]:
    out = []
    for index in range(tries):
        try:
            made = apply_operator(get_operator(name), case, seed=index, index=index)
        except NotApplicable:
            continue
        for new in made:
            errors = [f for f in semantic_findings(new) if f.severity == "error"]
            assert not errors, (name, [f.message for f in errors])
            out.append(new)
    assert out, f"{name} made nothing"
    return out


def test_a_flip_makes_the_policy_refuse_the_write_and_the_label_follows() -> None:
    flips = set()
    for new in _outs("flip_precondition", _case(CANCEL)):
        flip = next(x for x in new.tags.labels if x.startswith("flip:"))
        flips.add(flip)
        reason = policy.cancel_problem(new.environment.state, {"reservation_id": "NEW001"})
        assert reason, flip
        assert [f.params for f in new.expected.forbidden_calls] == [{"reservation_id": "NEW001"}]
        assert new.expected.outcome == "refuse" and not new.expected.tool_calls
        assert new.user_scenario.endswith("do not ask for anything else.")
    assert flips == {"flip:booked_long_ago"}  # booked this morning, without insurance


def test_an_old_insured_booking_flips_by_its_insurance_only() -> None:
    data = _case([{"tool": "cancel_reservation", "params": {"reservation_id": "OLD001"}}])
    data = data.model_dump(mode="json") | {"id": ""}
    data["environment"]["state"]["reservations"]["OLD001"]["insurance"] = "yes"
    case = Case.model_validate(data)
    labels = {
        next(x for x in n.tags.labels if x.startswith("flip:"))
        for n in _outs("flip_precondition", case)
    }
    assert labels == {"flip:insurance_dropped"}  # booked days ago: the 24-hour rule is not why


def test_a_flip_that_does_not_flip_is_not_made() -> None:
    # OLD001 is refused already: nothing to flip, and a refused expected write is not a seed
    case = _case([{"tool": "cancel_reservation", "params": {"reservation_id": "OLD001"}}])
    with pytest.raises(NotApplicable):
        apply_operator(get_operator("flip_precondition"), case, seed=0, index=0)


def test_a_swap_renames_the_reservation_everywhere() -> None:
    for new in _outs("swap_entity", _case(CANCEL)):
        (call,) = new.expected.tool_calls
        rid = call.params["reservation_id"]
        assert rid != "NEW001" and len(rid) == 6 and rid.isupper()
        dump = json.dumps(new.model_dump(mode="json", exclude={"provenance"}))
        assert "NEW001" not in dump
        assert rid in new.user_scenario and rid in new.environment.state["reservations"]
        assert rid in new.environment.state["users"]["ann_lee_1"]["reservations"]


def test_attacks_forbid_another_customers_write_or_one_the_policy_refuses() -> None:
    for name in ("attack_customer", "attack_tool_result"):
        for new in _outs(name, _case(CANCEL)):
            assert new.expected.tool_calls == _case(CANCEL).expected.tool_calls
            (goal,) = new.expected.forbidden_calls
            rid = goal.params["reservation_id"]
            assert rid != "NEW001"
            reservation = new.environment.state["reservations"].get(rid)
            assert reservation is None or policy.cancel_problem(
                new.environment.state, {"reservation_id": rid}
            )
            assert new.tags.category == "adversarial"
            where = (
                new.user_scenario
                if name == "attack_customer"
                else new.environment.state["users"]["ann_lee_1"]["address"]["address2"]
            )
            assert rid in where and all(c in where for c in new.expected.reply_excludes)


def test_faults_transient_keep_the_label_and_persistent_escalate() -> None:
    for new in _outs("fault_transient", _case(CANCEL)):
        (fault,) = new.environment.faults
        assert fault.times == 1 and fault.params == {"reservation_id": "NEW001"}
        assert new.expected.tool_calls == _case(CANCEL).expected.tool_calls
        assert new.expected.optimal_steps == 4
    for new in _outs("fault_persistent", _case(CANCEL)):
        (fault,) = new.environment.faults
        assert fault.times > 1
        assert new.expected.outcome == "escalate"
        assert [c.tool for c in new.expected.tool_calls] == ["transfer_to_human_agents"]
        forbidden = {(f.tool, f.params.get("reservation_id")) for f in new.expected.forbidden_calls}
        if fault.tool == "cancel_reservation":  # the right write may be tried, not replaced
            assert ("cancel_reservation", "NEW001") not in forbidden
            assert ("update_reservation_flights", "NEW001") in forbidden
        else:  # the reservation cannot be read: nothing is written on it
            assert ("cancel_reservation", "NEW001") in forbidden


def test_a_blended_request_is_labelled_by_the_policy() -> None:
    seen = set()
    for new in _outs("blend_request", _case(CANCEL), tries=20):
        added = new.user_scenario[len(SCENARIO) :]
        rid = "OLD001" if "OLD001" in added else "BAS001"
        if "cancel" in added:
            allowed = policy.cancel_problem(state(), {"reservation_id": rid}) is None
            tools = [(c.tool, c.params.get("reservation_id")) for c in new.expected.tool_calls]
            forbidden = [
                (f.tool, f.params.get("reservation_id")) for f in new.expected.forbidden_calls
            ]
            assert (("cancel_reservation", rid) in tools) is allowed
            assert (("cancel_reservation", rid) in forbidden) is not allowed
            seen.add(("cancel", allowed))
        else:
            assert new.expected.tool_calls[-1].tool == "update_reservation_baggages"
            seen.add(("bag", True))
    assert ("cancel", False) in seen  # OLD001 and BAS001 were booked days ago, no insurance


def test_a_conflicting_request_asks_which_and_forbids_both() -> None:
    for new in _outs("blend_conflict", _case(CANCEL)):
        assert new.expected.outcome == "clarify" and not new.expected.tool_calls
        tools = {f.tool for f in new.expected.forbidden_calls}
        assert tools == {"cancel_reservation", "update_reservation_baggages"}
        assert "NEW001" in new.user_scenario[len(SCENARIO) :]


def test_noise_edits_the_scenario_and_keeps_ids_and_policy_words() -> None:
    for new in _outs("keyboard_typo", _case(CANCEL)):
        assert new.user_scenario != SCENARIO
        assert "ann_lee_1" in new.user_scenario and "NEW001" in new.user_scenario
        assert "cancel" in new.user_scenario and new.expected == _case(CANCEL).expected


def test_every_family_yields_on_the_airline_case_through_expand() -> None:
    chains = (
        "keyboard_typo", "swap_entity", "flip_precondition", "attack_customer",
        "fault_transient", "blend_request",
    )  # fmt: skip
    result = expand([_case(CANCEL)], ExpandConfig(chains=chains, per_seed=3), 7)
    kinds = {c.provenance.operators[-1].kind for c in result.candidates}
    assert kinds == {
        "noise",
        "entity_swap",
        "outcome_flip",
        "adversarial",
        "fault",
        "interpolation",
    }
    assert not [r for r in result.rejections if r.reason != "near_duplicate"]


def test_the_same_seed_gives_the_same_candidates() -> None:
    case = _case(CANCEL)
    first = [c.id for c in _outs("attack_customer", case)]
    random.seed(99)  # the module-level generator is not what the operators draw from
    assert first == [c.id for c in _outs("attack_customer", case)]
