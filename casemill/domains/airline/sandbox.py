"""The 14 tau-bench airline tools, simulated on a sandboxed copy of a case's database slice.

The tools do what the benchmark's own tools do to its database, so that a final state here is
the benchmark's final state on the same calls: a booking checks the flights (found, `available`
on the date, seats for every passenger), the payment methods (the user's; gift card and
certificate balances) and that the payments add up to the price (flights by passengers, $30
insurance a passenger, $50 a non-free bag), then takes gift-card balances down, uses certificates
up and files the reservation under `HATHAT` (then `HATHAU`, `HATHAV`); a flight change prices the
new segments (an unchanged segment in the same cabin keeps its price), takes a certificate never
and a gift card only when it covers the difference; a cancellation appends the refunds to the
payment history. What the benchmark's tools leave to the agent (the policy: who may cancel,
basic economy, the payment mix) is checked by `policy.py` on a case's expected calls, not here:
a write the agent should not have made still changes the state, as in the benchmark, and the
state check catches it.

A refusal answers a failed result whose message starts with `Error:`, as the benchmark's does.
"""

from __future__ import annotations

import copy
import functools
import json
from importlib import resources
from typing import Any

from casemill.case.model import Environment
from casemill.domains.base import SpecSandbox, ToolResult
from casemill.domains.tau2_retail.sandbox import evaluate

NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
BOOKED_AT = "2024-05-15T15:00:00"
INSURANCE_PER_PASSENGER = 30
BAG_FEE = 50


@functools.cache
def _airports() -> tuple[tuple[str, str], ...]:
    text = resources.files(__package__).joinpath("airports.json").read_text(encoding="utf-8")
    return tuple(json.loads(text).items())


def airports() -> dict[str, str]:
    """IATA code -> city, as the benchmark's `list_all_airports` answers."""
    return dict(_airports())


def _error(kind: str, message: str) -> ToolResult:
    return ToolResult.fail(kind, f"Error: {message}")


class AirlineSandbox(SpecSandbox):
    def __init__(
        self, environment: Environment, specs: dict[str, dict[str, Any]], *, faults: bool = True
    ):
        super().__init__(environment, specs, faults=faults)
        state = self.state
        self.users: dict[str, Any] = state.get("users") or {}
        self.reservations: dict[str, Any] = state.get("reservations") or {}
        self.flights: dict[str, Any] = state.get("flights") or {}

    def final_state(self) -> dict[str, Any]:
        return copy.deepcopy(
            {"users": self.users, "reservations": self.reservations, "flights": self.flights}
        )

    def peek_state(self) -> dict[str, Any]:
        return {"users": self.users, "reservations": self.reservations, "flights": self.flights}

    def comparable_state(self) -> dict[str, Any]:
        # the tools never change flights: users and reservations are the state that moves
        return copy.deepcopy({"users": self.users, "reservations": self.reservations})

    # -- reads ------------------------------------------------------------------------------
    def _t_calculate(self, expression: str) -> ToolResult:
        try:
            return ToolResult(ok=True, content=str(round(evaluate(expression), 2)))
        except (ValueError, SyntaxError, ZeroDivisionError) as exc:
            return _error("invalid_params", f"cannot calculate {expression!r}: {exc}")

    def _t_think(self, thought: str) -> ToolResult:
        return ToolResult(ok=True, content="")

    def _t_list_all_airports(self) -> ToolResult:
        return ToolResult(ok=True, content=airports())

    def _t_get_user_details(self, user_id: str) -> ToolResult:
        user = self.users.get(user_id)
        if user is None:
            return _error("not_found", "user not found")
        return ToolResult(ok=True, content=copy.deepcopy(user))

    def _t_get_reservation_details(self, reservation_id: str) -> ToolResult:
        reservation = self.reservations.get(reservation_id)
        if reservation is None:
            return _error("not_found", "reservation not found")
        return ToolResult(ok=True, content=copy.deepcopy(reservation))

    def _available(self, origin: str, destination: str | None, date: str) -> list[dict[str, Any]]:
        out = []
        for number, flight in self.flights.items():
            on_date = (flight.get("dates") or {}).get(date) or {}
            if flight.get("origin") != origin or on_date.get("status") != "available":
                continue
            if destination is not None and flight.get("destination") != destination:
                continue
            found = {k: v for k, v in flight.items() if k != "dates"}
            out.append({**found, **copy.deepcopy(on_date), "flight_number": number})
        return out

    def _t_search_direct_flight(self, origin: str, destination: str, date: str) -> ToolResult:
        return ToolResult(ok=True, content=self._available(origin, destination, date))

    def _t_search_onestop_flight(self, origin: str, destination: str, date: str) -> ToolResult:
        pairs = []
        for first in self._available(origin, None, date):
            if first["destination"] == destination:
                continue
            arrives = str(first.get("scheduled_arrival_time_est", ""))
            second_date = _next_day(date) if "+1" in arrives else date
            for second in self._available(first["destination"], destination, second_date):
                if second_date == date and second.get("scheduled_departure_time_est", "") <= (
                    arrives
                ):
                    continue
                pairs.append([{**first, "date": date}, {**second, "date": second_date}])
        return ToolResult(ok=True, content=pairs)

    # -- writes -----------------------------------------------------------------------------
    def _t_transfer_to_human_agents(self, summary: str) -> ToolResult:
        return ToolResult(ok=True, content="Transfer successful")

    def _t_send_certificate(self, user_id: str, amount: float) -> ToolResult:
        user = self.users.get(user_id)
        if user is None:
            return _error("not_found", "user not found")
        methods = user.setdefault("payment_methods", {})
        for payment_id in CERTIFICATE_IDS:
            if payment_id not in methods:
                methods[payment_id] = {"source": "certificate", "amount": amount, "id": payment_id}
                return ToolResult(
                    ok=True,
                    content=f"Certificate {payment_id} added to user {user_id} with amount {amount}.",
                )
        return _error("policy", "too many certificates sent")

    def _t_cancel_reservation(self, reservation_id: str) -> ToolResult:
        reservation = self.reservations.get(reservation_id)
        if reservation is None:
            return _error("not_found", "reservation not found")
        history = reservation.setdefault("payment_history", [])
        history.extend(
            {"payment_id": p["payment_id"], "amount": -p["amount"]} for p in list(history)
        )
        reservation["status"] = "cancelled"
        return ToolResult(ok=True, content=copy.deepcopy(reservation))

    def _t_update_reservation_passengers(
        self, reservation_id: str, passengers: list[dict[str, Any]]
    ) -> ToolResult:
        reservation = self.reservations.get(reservation_id)
        if reservation is None:
            return _error("not_found", "reservation not found")
        if len(passengers) != len(reservation.get("passengers") or []):
            return _error("policy", "number of passengers does not match")
        reservation["passengers"] = copy.deepcopy(passengers)
        return ToolResult(ok=True, content=copy.deepcopy(reservation))

    def _t_update_reservation_baggages(
        self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> ToolResult:
        reservation = self.reservations.get(reservation_id)
        if reservation is None:
            return _error("not_found", "reservation not found")
        price = BAG_FEE * max(0, nonfree_baggages - reservation.get("nonfree_baggages", 0))
        changes = {"total_baggages": total_baggages, "nonfree_baggages": nonfree_baggages}
        return self._paid_change(reservation, payment_id, price, changes)

    def _t_update_reservation_flights(
        self, reservation_id: str, cabin: str, flights: list[dict[str, Any]], payment_id: str
    ) -> ToolResult:
        reservation = self.reservations.get(reservation_id)
        if reservation is None:
            return _error("not_found", "reservation not found")
        count = len(reservation.get("passengers") or [])
        priced = self._price_change(reservation, cabin, flights, count)
        if isinstance(priced, ToolResult):
            return priced
        new_flights, price = priced
        changes = {"flights": new_flights, "cabin": cabin}
        return self._paid_change(reservation, payment_id, price, changes)

    def _t_book_reservation(self, **booking: Any) -> ToolResult:
        user = self.users.get(booking["user_id"])
        if user is None:
            return _error("not_found", "user not found")
        passengers, payments = booking["passengers"], booking["payment_methods"]
        flights, total = [], 0.0
        for wanted in booking["flights"]:
            segment = self._segment(wanted, booking["cabin"], len(passengers))
            if isinstance(segment, ToolResult):
                return segment
            flights.append(segment)
            total += segment["price"] * len(passengers)
        if booking["insurance"] == "yes":
            total += INSURANCE_PER_PASSENGER * len(passengers)
        total += BAG_FEE * booking["nonfree_baggages"]
        problem = _payment_problem(user, payments, total)
        if problem is not None:
            return problem
        for payment in payments:
            method = user["payment_methods"][payment["payment_id"]]
            if method["source"] == "gift_card":
                method["amount"] = _money(method["amount"] - payment["amount"])
            elif method["source"] == "certificate":
                del user["payment_methods"][payment["payment_id"]]
        reservation = _new_reservation(self._new_id(), booking, flights)
        self.reservations[reservation["reservation_id"]] = reservation
        user.setdefault("reservations", []).append(reservation["reservation_id"])
        return ToolResult(ok=True, content=copy.deepcopy(reservation))

    # -- helpers ----------------------------------------------------------------------------
    def _new_id(self) -> str:
        return next((r for r in NEW_RESERVATION_IDS if r not in self.reservations), "HATHAW")

    def _segment(
        self, wanted: dict[str, Any], cabin: str, count: int
    ) -> dict[str, Any] | ToolResult:
        number, date = wanted["flight_number"], wanted["date"]
        flight = self.flights.get(number)
        if flight is None:
            return _error("not_found", f"flight {number} not found")
        on_date = (flight.get("dates") or {}).get(date)
        if on_date is None:
            return _error("not_found", f"flight {number} not found on date {date}")
        if on_date.get("status") != "available":
            return _error("policy", f"flight {number} not available on date {date}")
        if (on_date.get("available_seats") or {}).get(cabin, 0) < count:
            return _error("policy", f"not enough seats on flight {number}")
        return {
            "flight_number": number,
            "date": date,
            "price": on_date["prices"][cabin],
            "origin": flight["origin"],
            "destination": flight["destination"],
        }

    def _price_change(
        self, reservation: dict[str, Any], cabin: str, flights: list[dict[str, Any]], count: int
    ) -> tuple[list[dict[str, Any]], float] | ToolResult:
        old = reservation.get("flights") or []
        new_flights, total = [], 0.0
        for wanted in flights:
            kept = next(
                (
                    f
                    for f in old
                    if f["flight_number"] == wanted["flight_number"]
                    and f["date"] == wanted["date"]
                    and cabin == reservation.get("cabin")
                ),
                None,
            )
            segment = dict(kept) if kept else self._segment(wanted, cabin, count)
            if isinstance(segment, ToolResult):
                return segment
            new_flights.append(segment)
            total += segment["price"] * count
        total -= sum(f["price"] for f in old) * count
        return new_flights, _money(total)

    def _paid_change(
        self, reservation: dict[str, Any], payment_id: str, price: float, changes: dict[str, Any]
    ) -> ToolResult:
        """`changes` made to the reservation once `price` is charged to `payment_id` (or the
        refusal of the charge, nothing changed)."""
        method = self._charge(reservation, payment_id, price)
        if isinstance(method, ToolResult):
            return method
        reservation.update(changes)
        self._pay(reservation, method, payment_id, price)
        return ToolResult(ok=True, content=copy.deepcopy(reservation))

    def _charge(
        self, reservation: dict[str, Any], payment_id: str, price: float
    ) -> dict[str, Any] | ToolResult:
        user = self.users.get(reservation.get("user_id")) or {}
        method = (user.get("payment_methods") or {}).get(payment_id)
        if method is None:
            return _error("not_found", "payment method not found")
        if method["source"] == "certificate":
            return _error("policy", "certificate cannot be used to update reservation")
        if method["source"] == "gift_card" and method.get("amount", 0) < price:
            return _error("policy", "gift card balance is not enough")
        return method

    def _pay(
        self, reservation: dict[str, Any], method: dict[str, Any], payment_id: str, price: float
    ) -> None:
        if method["source"] == "gift_card":
            method["amount"] = _money(method["amount"] - price)
        if price != 0:
            reservation.setdefault("payment_history", []).append(
                {"payment_id": payment_id, "amount": price}
            )


def _payment_problem(
    user: dict[str, Any], payments: list[dict[str, Any]], total: float
) -> ToolResult | None:
    methods = user.get("payment_methods") or {}
    for payment in payments:
        method = methods.get(payment["payment_id"])
        if method is None:
            return _error("not_found", f"payment method {payment['payment_id']} not found")
        if (
            method["source"] in ("gift_card", "certificate")
            and method["amount"] < payment["amount"]
        ):
            return _error("policy", f"not enough balance in payment method {payment['payment_id']}")
    paid = sum(p["amount"] for p in payments)
    if _money(paid) != _money(total):
        return _error(
            "policy", f"payment amount does not add up, total price is {total}, but paid {paid}"
        )
    return None


def _new_reservation(
    reservation_id: str, booking: dict[str, Any], flights: list[dict[str, Any]]
) -> dict[str, Any]:
    keys = ("user_id", "origin", "destination", "flight_type", "cabin")
    return {
        "reservation_id": reservation_id,
        **{k: booking[k] for k in keys},
        "flights": flights,
        "passengers": copy.deepcopy(booking["passengers"]),
        "payment_history": copy.deepcopy(booking["payment_methods"]),
        "created_at": BOOKED_AT,
        "total_baggages": booking["total_baggages"],
        "nonfree_baggages": booking["nonfree_baggages"],
        "insurance": booking["insurance"],
    }


def _money(value: float) -> float:
    """Dollar amounts to the cent, as one number type (so 250 and 250.0 compare equal)."""
    rounded = round(float(value), 2)
    return int(rounded) if rounded.is_integer() else rounded


def _next_day(date: str) -> str:
    from datetime import date as Date
    from datetime import timedelta

    return (Date.fromisoformat(date) + timedelta(days=1)).isoformat()
