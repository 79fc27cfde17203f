"""The airline policy's rules as predicates: for each write, allowed (None) or the reason not.

The benchmark's tools leave these rules to the agent ("the API does not check these for the
agent"), so the sandbox does not refuse on them; the pack checks them on a case's expected
calls (`AirlineDomain.reference_problems`), one write after the other on the state the earlier
ones left. Every predicate takes the state (`users`, `reservations`, `flights`, as in the
sandbox) and the call's parameters.

The clock is the policy's: 2024-05-15 15:00 EST.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from casemill.domains.airline.sandbox import airports

NOW = datetime(2024, 5, 15, 15, 0, 0)
MAX_PASSENGERS = 5
MAX_PER_SOURCE = {"certificate": 1, "credit_card": 1, "gift_card": 3}
# free checked bags a passenger, by membership and cabin
FREE_BAGS = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 3},
}
FLOWN = ("landed", "flying")
CANCELLED_GESTURE, DELAYED_GESTURE = 100, 50

State = dict[str, Any]
Predicate = Callable[[State, dict[str, Any]], str | None]


def free_bags(membership: str, cabin: str, passengers: int) -> int:
    """The free checked bags of a reservation."""
    return FREE_BAGS.get(membership, FREE_BAGS["regular"]).get(cabin, 0) * passengers


def status(state: State, segment: dict[str, Any]) -> str:
    flight = (state.get("flights") or {}).get(segment.get("flight_number")) or {}
    return str(((flight.get("dates") or {}).get(segment.get("date")) or {}).get("status", ""))


def _reservation(state: State, params: dict[str, Any]) -> dict[str, Any] | None:
    return (state.get("reservations") or {}).get(params.get("reservation_id"))


def _owner(state: State, reservation: dict[str, Any]) -> dict[str, Any]:
    return (state.get("users") or {}).get(reservation.get("user_id")) or {}


def cancel_problem(state: State, params: dict[str, Any]) -> str | None:
    """Within 24 h of booking, or a flight the airline cancelled: always; otherwise business, or
    (basic) economy with travel insurance. Never once a segment is flown."""
    reservation = _reservation(state, params)
    if reservation is None:
        return None  # the replay reports the unknown reservation
    segments = reservation.get("flights") or []
    if any(status(state, s) in FLOWN for s in segments):
        return "a segment is already flown: only a human agent can help (transfer)"
    booked = datetime.fromisoformat(str(reservation.get("created_at", "1970-01-01T00:00:00")))
    if NOW - booked <= timedelta(hours=24):
        return None
    if any(status(state, s) == "cancelled" for s in segments):
        return None
    if reservation.get("cabin") == "business" or reservation.get("insurance") == "yes":
        return None
    return (
        f"{reservation.get('cabin')} reservation booked {reservation.get('created_at')} "
        "(over 24 h ago), no flight cancelled by the airline and no travel insurance: "
        "it cannot be cancelled"
    )


def _same_route(reservation: dict[str, Any], flights: list[dict[str, Any]], state: State) -> bool:
    known = state.get("flights") or {}
    ends = [known.get(f.get("flight_number")) for f in flights]
    if not flights or any(e is None for e in ends):
        return True  # the replay reports unknown flights
    city = airports()
    start, end = city.get(ends[0]["origin"]), city.get(ends[-1]["destination"])
    origin, destination = (
        city.get(reservation.get("origin")),
        city.get(reservation.get("destination")),
    )
    if reservation.get("flight_type") == "round_trip":
        turn = any(city.get(e["destination"]) == destination for e in ends)
        return start == origin and end == origin and turn
    return start == origin and end == destination


def flights_change_problem(state: State, params: dict[str, Any]) -> str | None:
    """Basic economy keeps its flights (its cabin may change); the others keep origin,
    destination (cities: JFK and LGA are both New York) and trip type; a flown segment stays as it is."""
    reservation = _reservation(state, params)
    if reservation is None:
        return None
    old = {(f["flight_number"], f["date"]) for f in reservation.get("flights") or []}
    new = {(f["flight_number"], f["date"]) for f in params.get("flights") or []}
    if old == new:
        return None  # a cabin change: allowed for every reservation
    if reservation.get("cabin") == "basic_economy":
        return "basic economy flights cannot be modified (only the cabin can change)"
    flown = {
        (f["flight_number"], f["date"])
        for f in reservation.get("flights") or []
        if status(state, f) in FLOWN
    }
    if flown - new:
        return "a flown segment cannot be changed"
    if not _same_route(reservation, params.get("flights") or [], state):
        return "a change keeps the reservation's origin, destination and trip type"
    return None


def baggage_problem(state: State, params: dict[str, Any]) -> str | None:
    """Bags can be added, not removed; the non-free ones are at least those past the free
    allowance of the booking user's membership and the cabin."""
    reservation = _reservation(state, params)
    if reservation is None:
        return None
    if params.get("total_baggages", 0) < reservation.get("total_baggages", 0):
        return "checked bags can be added but not removed"
    membership = str(_owner(state, reservation).get("membership", "regular"))
    passengers = len(reservation.get("passengers") or [])
    free = free_bags(membership, str(reservation.get("cabin")), passengers)
    return _bag_count_problem(params, free)


def _bag_count_problem(params: dict[str, Any], free: int) -> str | None:
    least = max(0, int(params.get("total_baggages", 0)) - free)
    if int(params.get("nonfree_baggages", 0)) < least:
        return f"{params.get('total_baggages')} bags with {free} free: at least {least} are paid"
    return None


def booking_problem(state: State, params: dict[str, Any]) -> str | None:
    """At most five passengers; at most one certificate, one credit card and three gift cards;
    the bags past the free allowance paid."""
    if len(params.get("passengers") or []) > MAX_PASSENGERS:
        return f"a reservation has at most {MAX_PASSENGERS} passengers"
    user = (state.get("users") or {}).get(params.get("user_id")) or {}
    methods = user.get("payment_methods") or {}
    sources = Counter(
        (methods.get(p.get("payment_id")) or {}).get("source")
        for p in params.get("payment_methods") or []
    )
    for source, most in MAX_PER_SOURCE.items():
        if sources[source] > most:
            return f"a reservation uses at most {most} {source.replace('_', ' ')}(s)"
    free = free_bags(
        str(user.get("membership", "regular")),
        str(params.get("cabin")),
        len(params.get("passengers") or []),
    )
    return _bag_count_problem(params, free)


def compensation_problem(state: State, params: dict[str, Any]) -> str | None:
    """A certificate only for a silver/gold member, or one with a reservation that is insured
    or business; $100 (cancelled flight) or $50 (delayed) a passenger of one reservation."""
    user = (state.get("users") or {}).get(params.get("user_id"))
    if user is None:
        return None
    reservations = [
        r
        for r in (state.get("reservations") or {}).values()
        if r.get("user_id") == params.get("user_id")
    ]
    eligible = user.get("membership") in ("silver", "gold") or any(
        r.get("insurance") == "yes" or r.get("cabin") == "business" for r in reservations
    )
    if not eligible:
        return "a regular member without insurance flying (basic) economy gets no compensation"
    counts = {len(r.get("passengers") or []) for r in reservations}
    amounts = {g * n for g in (CANCELLED_GESTURE, DELAYED_GESTURE) for n in counts}
    if reservations and params.get("amount") not in amounts:
        return f"a certificate of {params.get('amount')} is not $100 or $50 a passenger"
    return None


PREDICATES: dict[str, Predicate] = {
    "cancel_reservation": cancel_problem,
    "update_reservation_flights": flights_change_problem,
    "update_reservation_baggages": baggage_problem,
    "book_reservation": booking_problem,
    "send_certificate": compensation_problem,
}


def problem(tool: str, state: State, params: dict[str, Any]) -> str | None:
    """Why the policy forbids this write on this state, or None (allowed, or not a write the
    policy governs)."""
    check = PREDICATES.get(tool)
    return check(state, params) if check else None
