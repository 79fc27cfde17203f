"""The airline policy's predicates, each with values that allow and values that forbid."""

from __future__ import annotations

import pytest

from casemill.domains.airline import policy
from tests.domains.airline_state import state


def _reservation(s, rid):
    return s["reservations"][rid]


def test_cancel_within_24_hours_of_booking_is_allowed() -> None:
    assert policy.cancel_problem(state(), {"reservation_id": "NEW001"}) is None


def test_cancel_of_an_old_economy_booking_needs_a_reason_the_policy_knows() -> None:
    s = state()
    why = policy.cancel_problem(s, {"reservation_id": "OLD001"})
    assert why and "cannot be cancelled" in why
    _reservation(s, "OLD001")["insurance"] = "yes"
    assert policy.cancel_problem(s, {"reservation_id": "OLD001"}) is None
    s = state()
    _reservation(s, "OLD001")["cabin"] = "business"
    assert policy.cancel_problem(s, {"reservation_id": "OLD001"}) is None


def test_cancel_after_an_airline_cancellation_is_allowed_and_a_flown_trip_is_not() -> None:
    s = state()
    s["flights"]["HAT001"]["dates"]["2024-05-20"] = {"status": "cancelled"}
    assert policy.cancel_problem(s, {"reservation_id": "OLD001"}) is None
    s["flights"]["HAT001"]["dates"]["2024-05-20"] = {"status": "landed"}
    assert "flown" in policy.cancel_problem(s, {"reservation_id": "NEW001"})


def test_basic_economy_changes_cabin_but_not_flights() -> None:
    same = [{"flight_number": "HAT003", "date": "2024-05-20"}]
    other = [{"flight_number": "HAT002", "date": "2024-05-20"}]
    params = {"reservation_id": "BAS001", "cabin": "economy"}
    assert policy.flights_change_problem(state(), params | {"flights": same}) is None
    why = policy.flights_change_problem(state(), params | {"flights": other})
    assert why and "basic economy" in why


def test_a_flight_change_keeps_the_route_by_city() -> None:
    params = {"reservation_id": "OLD001", "cabin": "economy"}
    s = state()
    s["flights"]["HAT005"] = {**s["flights"]["HAT002"], "flight_number": "HAT005", "origin": "LGA"}
    lga = [{"flight_number": "HAT005", "date": "2024-05-20"}]  # LGA is New York too
    assert policy.flights_change_problem(s, params | {"flights": lga}) is None
    den = [{"flight_number": "HAT004", "date": "2024-05-20"}]
    assert "origin, destination" in policy.flights_change_problem(s, params | {"flights": den})


@pytest.mark.parametrize(
    ("membership", "cabin", "passengers", "free"),
    [
        ("regular", "basic_economy", 1, 0),
        ("regular", "economy", 2, 2),
        ("regular", "business", 1, 2),
        ("silver", "basic_economy", 1, 1),
        ("silver", "economy", 1, 2),
        ("silver", "business", 2, 6),
        ("gold", "basic_economy", 1, 2),
        ("gold", "economy", 3, 9),
        ("gold", "business", 1, 3),
    ],
)
def test_free_bags_by_membership_and_cabin(membership, cabin, passengers, free) -> None:
    assert policy.free_bags(membership, cabin, passengers) == free


def test_bags_can_be_added_not_removed_and_past_the_allowance_are_paid() -> None:
    params = {"reservation_id": "OLD001", "payment_id": "credit_card_1"}  # silver economy: 2 free
    assert (
        policy.baggage_problem(state(), params | {"total_baggages": 2, "nonfree_baggages": 0})
        is None
    )
    assert "at least 1 are paid" in policy.baggage_problem(
        state(), params | {"total_baggages": 3, "nonfree_baggages": 0}
    )
    assert "not removed" in policy.baggage_problem(
        state(), params | {"total_baggages": 0, "nonfree_baggages": 0}
    )


def test_a_booking_pays_with_at_most_one_certificate_and_one_card() -> None:
    s = state()
    s["users"]["ann_lee_1"]["payment_methods"]["certificate_2"] = {
        "source": "certificate",
        "amount": 50,
        "id": "certificate_2",
    }
    booking = {
        "user_id": "ann_lee_1",
        "cabin": "economy",
        "passengers": [{"first_name": "Ann", "last_name": "Lee", "dob": "1980-01-02"}],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "payment_methods": [{"payment_id": "certificate_1", "amount": 100}],
    }
    assert policy.booking_problem(s, booking) is None
    two = booking | {
        "payment_methods": [
            {"payment_id": "certificate_1", "amount": 100},
            {"payment_id": "certificate_2", "amount": 50},
        ]
    }
    assert "at most 1 certificate" in policy.booking_problem(s, two)
    six = booking | {"passengers": booking["passengers"] * 6}
    assert "at most 5 passengers" in policy.booking_problem(s, six)


def test_compensation_goes_to_eligible_users_in_the_policys_amounts() -> None:
    assert policy.compensation_problem(state(), {"user_id": "ann_lee_1", "amount": 100}) is None
    assert policy.compensation_problem(state(), {"user_id": "ann_lee_1", "amount": 50}) is None
    assert "not $100 or $50" in policy.compensation_problem(
        state(), {"user_id": "ann_lee_1", "amount": 400}
    )
    s = state()
    s["users"]["ann_lee_1"]["membership"] = "regular"
    assert "no compensation" in policy.compensation_problem(
        s, {"user_id": "ann_lee_1", "amount": 100}
    )
