"""Cases of the `airline` pack from logs of the tau-bench airline tools (`--domain airline`).

The environment is rebuilt from what the log's reads returned, in the pack's shapes
(`casemill.domains.airline`): each user from the first `get_user_details` result, each
reservation from the first `get_reservation_details` result, each flight from the search
results (`search_direct_flight`, `search_onestop_flight`: the flight with the dates it was found
on, status, seats and prices); a flight date no search showed but a successful booking or flight
change priced is known from that write's result: available, the price paid in its cabin, seats
for its passengers at least (the case's notes say so). A record read only after a successful write that may have
changed it (a booking or certificate for the user, a change to one of the user's reservations,
a change to the reservation itself) is not the initial state, and is left out. A decision
point's environment is that initial state with the conversation's earlier successful writes
replayed on the pack's sandbox, so the expected calls replay against the state the agent faced.

Expected calls carry the rules of imported airline cases (`casemill.formats.tau_bench`). A case
whose rebuilt state does not hold what its calls need (the replay fails), or whose calls break
the airline policy, is not an airline case: `problem` says why, and the caller keeps it on the
log's recorded tools instead, with that reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from casemill.case.model import Case, ExpectedCall
from casemill.domains.airline import NAME, AirlineDomain
from casemill.domains.base import replayed
from casemill.formats.tau_bench import INTENTS
from casemill.formats.tau_bench import expected_calls as airline_calls
from casemill.mining.derive.common import is_read
from casemill.mining.model import Conversation, LoggedCall
from casemill.validation.semantic import semantic_findings

USER_WRITES = ("book_reservation", "send_certificate")


@dataclass
class Rebuilt:
    state: dict[str, Any]
    left_out: list[str] = field(default_factory=list)  # records read only after a write
    priced: list[str] = field(default_factory=list)  # flight dates known from a write's result


def _loads(text: str | None) -> Any:
    try:
        return orjson.loads(text) if text else None
    except orjson.JSONDecodeError:
        return None


class _Reader:
    """The records of a conversation's reads, in order, noting what its writes changed."""

    def __init__(self) -> None:
        self.users: dict[str, Any] = {}
        self.reservations: dict[str, Any] = {}
        self.flights: dict[str, Any] = {}
        self.changed: set[tuple[str, str]] = set()  # ("user" | "reservation", id)
        self.left_out: list[str] = []
        self.priced: list[tuple[dict[str, Any], str, int]] = []  # (segment, cabin, passengers)

    def take(self, kind: str, key: Any, value: Any, into: dict[str, Any]) -> None:
        if not isinstance(key, str) or not isinstance(value, dict) or key in into:
            return
        if (kind, key) in self.changed:
            self.left_out.append(f"{kind} {key} (read only after a write changed it)")
            return
        into[key] = value

    def flight(self, found: Any, date: Any) -> None:
        if not isinstance(found, dict) or not isinstance(date, str):
            return
        number = found.get("flight_number")
        if not isinstance(number, str):
            return
        keys = ("origin", "destination", "scheduled_departure_time_est")
        base = {k: v for k, v in found.items() if k in keys + ("scheduled_arrival_time_est",)}
        flight = self.flights.setdefault(number, {"flight_number": number, **base, "dates": {}})
        on_date = {k: found[k] for k in ("status", "available_seats", "prices") if k in found}
        flight["dates"].setdefault(date, on_date)

    def read(self, call: LoggedCall) -> None:
        value = _loads(call.result)
        args = call.arguments
        if call.tool == "get_user_details":
            self.take("user", args.get("user_id"), value, self.users)
        elif call.tool == "get_reservation_details":
            self.take("reservation", args.get("reservation_id"), value, self.reservations)
        elif call.tool == "search_direct_flight" and isinstance(value, list):
            for found in value:
                self.flight(found, args.get("date"))
        elif call.tool == "search_onestop_flight" and isinstance(value, list):
            for pair in value:
                for leg in pair if isinstance(pair, list) else []:
                    self.flight(leg, leg.get("date") if isinstance(leg, dict) else None)

    def wrote(self, call: LoggedCall) -> None:
        args = call.arguments
        if call.tool in USER_WRITES:
            self.changed.add(("user", str(args.get("user_id"))))
        rid = args.get("reservation_id")
        if isinstance(rid, str):
            self.changed.add(("reservation", rid))
            owner = (self.reservations.get(rid) or {}).get("user_id")
            self.changed.add(("user", str(owner)))
        booked = _loads(call.result)
        if call.tool == "book_reservation" and isinstance(booked, dict):
            self.changed.add(("reservation", str(booked.get("reservation_id"))))
        if call.tool in ("book_reservation", "update_reservation_flights"):
            self._priced(booked, self.reservations.get(rid) if isinstance(rid, str) else None)

    def _priced(self, after: Any, before: dict[str, Any] | None) -> None:
        """The segments a successful booking or flight change priced, from the reservation it
        answered: each was available, in its cabin, for its passengers, at its price."""
        if not isinstance(after, dict) or not isinstance(after.get("flights"), list):
            return
        cabin, count = after.get("cabin"), len(after.get("passengers") or [])
        old = (before or {}).get("flights") or []
        for segment in after["flights"]:
            kept = segment in old and (before or {}).get("cabin") == cabin
            if isinstance(segment, dict) and isinstance(cabin, str) and count and not kept:
                self.priced.append((segment, cabin, count))

    def add_priced(self) -> list[str]:
        """The flight dates that only a write's result shows, added (`_priced`); what each
        holds is said in the returned notes."""
        said = []
        for segment, cabin, count in self.priced:
            number, date = segment.get("flight_number"), segment.get("date")
            if not isinstance(number, str) or not isinstance(date, str):
                continue
            base = {k: segment[k] for k in ("origin", "destination") if k in segment}
            flight = self.flights.setdefault(number, {"flight_number": number, **base, "dates": {}})
            if date in flight["dates"]:
                continue
            flight["dates"][date] = {
                "status": "available",
                "available_seats": {cabin: count},
                "prices": {cabin: segment.get("price")},
            }
            said.append(f"{number} {date} {cabin}")
        return said


def initial_state(conversation: Conversation) -> Rebuilt:
    reader = _Reader()
    for call in conversation.calls():
        if call.error or call.result is None:
            continue
        if is_read(call.tool):
            reader.read(call)
        else:
            reader.wrote(call)
    priced = reader.add_priced()
    state = {
        "users": reader.users,
        "reservations": reader.reservations,
        "flights": dict(sorted(reader.flights.items())),
    }
    return Rebuilt(state, reader.left_out, priced)


def notes(rebuilt: Rebuilt) -> list[str]:
    """What a case's rebuilt environment holds that the log's reads did not show."""
    if not rebuilt.priced:
        return []
    return [
        "flight dates known only from a write's result ("
        + ", ".join(rebuilt.priced)
        + "): available, at the price paid in that cabin, with seats for the passengers at "
        "least (the other cabins and the exact seats are not in the log)"
    ]


def state_before(state: dict[str, Any], writes: list[LoggedCall]) -> dict[str, Any]:
    """`state` with `writes` (successful in the log) replayed on the pack's sandbox."""
    if not writes:
        return state
    return replayed(AirlineDomain(), state, [(c.tool, c.arguments) for c in writes]).final_state()


def expected_calls(state: dict[str, Any], writes: list[LoggedCall]) -> tuple[ExpectedCall, ...]:
    calls = airline_calls(state, [(c.tool, c.arguments) for c in writes])
    return tuple(ExpectedCall.model_validate(c) for c in calls)


def intents(writes: list[LoggedCall]) -> list[str]:
    return list(dict.fromkeys(INTENTS[c.tool] for c in writes if c.tool in INTENTS)) or ["status"]


def problem(case: Case, rebuilt: Rebuilt) -> str | None:
    """Why `case` cannot be an airline case (its state or calls fail the pack's checks: the
    replay of its expected calls, references, the policy), or None."""
    errors = [f for f in semantic_findings(case) if f.severity == "error"]
    if not errors:
        return None
    said = "; ".join(f"{f.field}: {f.message}" if f.field else f.message for f in errors[:3])
    if rebuilt.left_out:
        said += "; not rebuilt from the log: " + ", ".join(rebuilt.left_out[:3])
    return (
        "the airline state it needs cannot be rebuilt from the log, or its calls fail the "
        f"airline checks ({said})"
    )


__all__ = [
    "NAME",
    "Rebuilt",
    "expected_calls",
    "initial_state",
    "intents",
    "notes",
    "problem",
    "state_before",
]
