"""The airline pack's simulated tools: what each does to the state, with values."""

from __future__ import annotations

from typing import Any

import pytest

from casemill.domains import get_domain
from tests.domains.airline_state import environment

ANN = [{"first_name": "Ann", "last_name": "Lee", "dob": "1980-01-02"}]


@pytest.fixture()
def box():
    return get_domain("airline").sandbox(environment(), faults=False)


def _booking(**changes: Any) -> dict[str, Any]:
    booking = {
        "user_id": "ann_lee_1",
        "origin": "JFK",
        "destination": "SEA",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": "HAT002", "date": "2024-05-20"}],
        "passengers": ANN,
        "payment_methods": [
            {"payment_id": "certificate_1", "amount": 150},
            {"payment_id": "credit_card_1", "amount": 80},
        ],
        "total_baggages": 3,
        "nonfree_baggages": 1,
        "insurance": "yes",
    }
    return booking | changes


def test_fourteen_tools_split_into_reads_and_writes() -> None:
    domain = get_domain("airline")
    assert len(domain.tool_specs) == 14
    assert domain.has_simulator
    assert "book_reservation" in domain.write_tools
    assert {"get_user_details", "search_onestop_flight", "calculate", "think"} <= domain.read_tools
    assert not domain.read_tools & domain.write_tools


def test_booking_prices_flights_insurance_and_bags_and_pays(box) -> None:
    result = box.call("book_reservation", _booking())  # 150 + 30 insurance + 50 bag = 230
    assert result.ok, result.content
    state = box.comparable_state()
    booked = state["reservations"]["HATHAT"]
    assert booked["flights"][0]["price"] == 150
    assert booked["created_at"] == "2024-05-15T15:00:00"
    methods = state["users"]["ann_lee_1"]["payment_methods"]
    assert "certificate_1" not in methods  # a certificate is used up whole
    assert state["users"]["ann_lee_1"]["reservations"][-1] == "HATHAT"
    assert box.call(
        "book_reservation",
        _booking(payment_methods=[{"payment_id": "credit_card_1", "amount": 230}]),
    ).ok
    assert "HATHAU" in box.comparable_state()["reservations"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"payment_methods": [{"payment_id": "credit_card_1", "amount": 229}]}, "does not add up"),
        ({"payment_methods": [{"payment_id": "gift_card_1", "amount": 230}]}, "not enough balance"),
        ({"flights": [{"flight_number": "HAT009", "date": "2024-05-20"}]}, "HAT009 not found"),
        ({"flights": [{"flight_number": "HAT002", "date": "2024-05-21"}]}, "not enough seats"),
        ({"flights": [{"flight_number": "HAT004", "date": "2024-05-20"}]}, "not available"),
    ],
)
def test_a_refused_booking_says_error_and_changes_nothing(box, changes, message) -> None:
    before = box.comparable_state()
    result = box.call("book_reservation", _booking(**changes))
    assert not result.ok
    assert result.content["message"].startswith("Error:")
    assert message in result.content["message"]
    assert box.comparable_state() == before


def test_a_flight_change_keeps_an_unchanged_segment_at_its_price(box) -> None:
    same = [{"flight_number": "HAT001", "date": "2024-05-20"}]
    result = box.call(
        "update_reservation_flights",
        {
            "reservation_id": "OLD001",
            "cabin": "economy",
            "flights": same,
            "payment_id": "gift_card_1",
        },
    )
    assert result.ok
    reservation = box.comparable_state()["reservations"]["OLD001"]
    assert reservation["flights"][0]["price"] == 100  # not today's 120
    assert len(reservation["payment_history"]) == 1  # nothing charged


def test_a_cabin_change_charges_the_difference_to_a_gift_card(box) -> None:
    flights = [{"flight_number": "HAT001", "date": "2024-05-20"}]
    params = {"reservation_id": "OLD001", "cabin": "business", "flights": flights}
    refused = box.call("update_reservation_flights", params | {"payment_id": "gift_card_1"})
    assert "gift card balance is not enough" in refused.content["message"]  # 300 > 100
    assert not box.call("update_reservation_flights", params | {"payment_id": "certificate_1"}).ok
    assert box.call("update_reservation_flights", params | {"payment_id": "credit_card_1"}).ok
    reservation = box.comparable_state()["reservations"]["OLD001"]
    assert reservation["cabin"] == "business"
    assert reservation["payment_history"][-1] == {"payment_id": "credit_card_1", "amount": 300}


def test_bags_charge_only_the_added_non_free_ones(box) -> None:
    params = {"reservation_id": "NEW001", "total_baggages": 4, "payment_id": "gift_card_1"}
    assert box.call("update_reservation_baggages", params | {"nonfree_baggages": 2}).ok
    state = box.comparable_state()
    assert state["users"]["ann_lee_1"]["payment_methods"]["gift_card_1"]["amount"] == 0
    assert state["reservations"]["NEW001"]["payment_history"][-1]["amount"] == 100


def test_cancel_refunds_every_payment(box) -> None:
    assert box.call("cancel_reservation", {"reservation_id": "OLD001"}).ok
    reservation = box.comparable_state()["reservations"]["OLD001"]
    assert reservation["status"] == "cancelled"
    assert reservation["payment_history"][-1] == {"payment_id": "credit_card_1", "amount": -100}
    assert not box.call("cancel_reservation", {"reservation_id": "NOPE00"}).ok


def test_passengers_change_but_not_their_number(box) -> None:
    other = [{"first_name": "Bo", "last_name": "Lee", "dob": "2000-01-01"}]
    params = {"reservation_id": "NEW001"}
    assert box.call("update_reservation_passengers", params | {"passengers": other}).ok
    refused = box.call("update_reservation_passengers", params | {"passengers": other + ANN})
    assert "number of passengers does not match" in refused.content["message"]


def test_certificates_sent_take_the_benchmarks_ids(box) -> None:
    result = box.call("send_certificate", {"user_id": "ann_lee_1", "amount": 100})
    assert result.ok
    methods = box.comparable_state()["users"]["ann_lee_1"]["payment_methods"]
    assert methods["certificate_3221322"]["amount"] == 100


def test_reads(box) -> None:
    direct = box.call(
        "search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}
    )
    assert [f["flight_number"] for f in direct.content] == ["HAT001", "HAT002"]
    assert box.call("list_all_airports", {}).content["LGA"] == "New York"
    assert box.call("calculate", {"expression": "2 * (150 - 100)"}).content == "100.0"
    assert box.call("get_reservation_details", {"reservation_id": "OLD001"}).ok
    assert not box.call("get_user_details", {"user_id": "nobody_1"}).ok
    assert not box.call("get_user_details", {"user": "ann_lee_1"}).ok  # bad parameters
