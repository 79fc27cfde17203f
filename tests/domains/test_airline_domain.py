"""The airline pack's checks: the state's shape, the policy on expected calls, the replay."""

from __future__ import annotations

from casemill.case.model import Case
from casemill.domains import get_domain
from casemill.domains.airline import POLICY_CONFLICT_LABEL
from casemill.replay import replay
from tests.domains.airline_state import STATE, state

DOMAIN = get_domain("airline")


def _case(calls, labels=()) -> Case:
    return Case.model_validate(
        {
            "domain": "airline",
            "environment": {"state": state()},
            "user_scenario": "I want to cancel my trip.",
            "expected": {"tool_calls": calls, "outcome": "resolve", "optimal_steps": 2},
            "tags": {"labels": list(labels)},
        }
    )


def test_the_shared_slice_shape_has_no_problems() -> None:
    assert DOMAIN.state_problems(state()) == []


def test_malformed_states_are_named_by_field() -> None:
    assert [p.field for p in DOMAIN.state_problems({"users": {}})] == [
        "environment.state.reservations",
        "environment.state.flights",
    ]
    bad = state()
    bad["reservations"]["OLD001"]["reservation_id"] = "OTHER1"
    bad["reservations"]["NEW001"]["user_id"] = "nobody_1"
    bad["users"]["ann_lee_1"]["payment_methods"]["gift_card_1"].pop("amount")
    rules = {p.field: p.rule for p in DOMAIN.state_problems(bad)}
    assert rules == {"environment.state.reservations.OLD001": "state-keys"}
    bad["reservations"]["OLD001"]["reservation_id"] = "OLD001"
    fields = [p.field for p in DOMAIN.state_problems(bad)]
    assert fields == [
        "environment.state.reservations.NEW001.user_id",
        "environment.state.users.ann_lee_1.payment_methods.gift_card_1.amount",
    ]


def test_expected_writes_are_checked_against_the_policy_in_order() -> None:
    ok = _case([{"tool": "cancel_reservation", "params": {"reservation_id": "NEW001"}}])
    assert DOMAIN.reference_problems(ok) == []
    bad = _case([{"tool": "cancel_reservation", "params": {"reservation_id": "OLD001"}}])
    [problem] = DOMAIN.reference_problems(bad)
    assert (problem.field, problem.rule) == ("expected.tool_calls[0]", "policy")
    kept = _case(
        [{"tool": "cancel_reservation", "params": {"reservation_id": "OLD001"}}],
        labels=[POLICY_CONFLICT_LABEL],
    )
    assert DOMAIN.reference_problems(kept) == []


def test_an_upgrade_then_a_flight_change_is_judged_on_the_upgraded_cabin() -> None:
    flights = {"reservation_id": "BAS001", "payment_id": "credit_card_1", "cabin": "economy"}
    case = _case(
        [
            {
                "tool": "update_reservation_flights",
                "params": flights
                | {"flights": [{"flight_number": "HAT003", "date": "2024-05-20"}]},
            },
            {
                "tool": "update_reservation_flights",
                "params": flights
                | {"flights": [{"flight_number": "HAT002", "date": "2024-05-20"}]},
            },
        ]
    )
    assert DOMAIN.reference_problems(case) == []
    result = replay(case, DOMAIN)
    assert result.ok, result.problems
    reservation = result.comparable_state["reservations"]["BAS001"]
    assert reservation["flights"][0]["flight_number"] == "HAT002"
    assert "flights" not in result.comparable_state  # they never change
    assert STATE["reservations"]["BAS001"]["cabin"] == "basic_economy"  # the case's own is intact
