"""A small hand-written airline database slice for the pack's tests (the benchmark's shapes)."""

from __future__ import annotations

import copy
from typing import Any

from casemill.case.model import Environment


def _flight(number: str, origin: str, destination: str, dates: dict[str, Any]) -> dict[str, Any]:
    return {
        "flight_number": number,
        "origin": origin,
        "destination": destination,
        "scheduled_departure_time_est": "08:00:00",
        "scheduled_arrival_time_est": "10:00:00",
        "dates": dates,
    }


def _open(economy: int, business: int, seats: int = 9) -> dict[str, Any]:
    return {
        "status": "available",
        "available_seats": {"basic_economy": seats, "economy": seats, "business": seats},
        "prices": {"basic_economy": economy - 20, "economy": economy, "business": business},
    }


def _reservation(
    rid: str, origin: str, cabin: str, flight: str, price: int, paid_with: str, booked: str
) -> dict[str, Any]:
    """A one-way reservation to SEA on 2024-05-20 for Ann, one segment."""
    segment = {"flight_number": flight, "date": "2024-05-20", "price": price}
    return {
        "reservation_id": rid,
        "user_id": "ann_lee_1",
        "origin": origin,
        "destination": "SEA",
        "flight_type": "one_way",
        "cabin": cabin,
        "flights": [segment | {"origin": origin, "destination": "SEA"}],
        "passengers": [{"first_name": "Ann", "last_name": "Lee", "dob": "1980-01-02"}],
        "payment_history": [{"payment_id": paid_with, "amount": price}],
        "created_at": f"2024-{booked}T{'08' if booked == '05-15' else '10'}:00:00",
        "total_baggages": 1 if rid == "OLD001" else 0,
        "nonfree_baggages": 0,
        "insurance": "no",
    }


STATE: dict[str, Any] = {
    "users": {
        "ann_lee_1": {
            "name": {"first_name": "Ann", "last_name": "Lee"},
            "email": "ann@example.com",
            "dob": "1980-01-02",
            "membership": "silver",
            "payment_methods": {
                "credit_card_1": {"source": "credit_card", "id": "credit_card_1"},
                "gift_card_1": {"source": "gift_card", "amount": 100, "id": "gift_card_1"},
                "certificate_1": {"source": "certificate", "amount": 250, "id": "certificate_1"},
            },
            "saved_passengers": [],
            "reservations": ["OLD001", "NEW001", "BAS001"],
        }
    },
    "reservations": {
        "OLD001": _reservation("OLD001", "JFK", "economy", "HAT001", 100, "credit_card_1", "05-01"),
        "NEW001": _reservation("NEW001", "JFK", "economy", "HAT001", 100, "gift_card_1", "05-15"),
        "BAS001": _reservation(
            "BAS001", "LGA", "basic_economy", "HAT003", 60, "credit_card_1", "05-02"
        ),
    },
    "flights": {
        "HAT001": _flight("HAT001", "JFK", "SEA", {"2024-05-20": _open(120, 400)}),
        "HAT002": _flight(
            "HAT002",
            "JFK",
            "SEA",
            {"2024-05-20": _open(150, 500), "2024-05-21": _open(90, 300, seats=0)},
        ),
        "HAT003": _flight("HAT003", "LGA", "SEA", {"2024-05-20": _open(80, 300)}),
        "HAT004": _flight("HAT004", "JFK", "DEN", {"2024-05-20": {"status": "cancelled"}}),
    },
}


def state() -> dict[str, Any]:
    return copy.deepcopy(STATE)


def environment(**changes: Any) -> Environment:
    data = state()
    data.update(changes)
    return Environment(state=data)
