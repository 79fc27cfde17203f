"""`casemill import --from tau-bench`: tau-bench airline tasks as `airline` cases.

A task (`{"task_id", "user_id", "instruction", "actions": [{"name", "kwargs"}], "outputs"}`)
becomes one case:

| task             | case                                                                      |
| ---------------- | ------------------------------------------------------------------------- |
| `instruction`    | `user_scenario` (what the simulated customer wants and knows)             |
| `user_id`        | `customer.facts`: user id, name, e-mail and date of birth from the DB     |
| `actions` writes | `expected.tool_calls`, in order; a payment id that the replay shows was   |
|                  | never charged (a change costing nothing) matches any value, a transfer's  |
|                  | `summary` too: the benchmark judges the database, which they leave alone; |
|                  | `flights` matches any value: segments are judged in the final state (the  |
|                  | tools read only number and date, so extra keys an agent sends are moot)   |
| `actions` reads  | dropped, named in the notes: the reward never looks at reads              |
| `outputs`        | `expected.reply_contains` (the benchmark looks for each in what the agent |
|                  | said, ignoring case and commas)                                           |
| the database     | `environment.state`: the user, their reservations and the reservations    |
|                  | the actions name, the flights those hold, and the bookable flights from   |
|                  | or to every airport the task touches, on the days around the dates of its |
|                  | upcoming reservations, its actions and its instruction ("May 20")         |

Outcome: a `transfer_to_human_agents` action -> escalate; any other write -> resolve; no write
-> resolve when the agent must say something, refuse otherwise. The database folder is `db/`
beside the tasks file (`users.json`, `flights.json`, `reservations.json`) unless `environment`
names another.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from casemill.case.model import Environment
from casemill.domains.airline import NAME as DOMAIN
from casemill.domains.airline import POLICY_CONFLICT_LABEL, AirlineDomain
from casemill.domains.airline.sandbox import airports
from casemill.domains.recorded import is_read_tool
from casemill.errors import UserError
from casemill.formats.common import case_data, import_records, named_calls, require
from casemill.formats.records import SourceRecord, read_records
from casemill.formats.result import FieldProblem, ImportResult

FORMAT = "tau-bench"
TODAY = "2024-05-15"
DB_FILES = ("users", "flights", "reservations")
INTENTS = {
    "book_reservation": "book",
    "cancel_reservation": "cancel",
    "update_reservation_flights": "change_flight",
    "update_reservation_baggages": "change_baggage",
    "update_reservation_passengers": "change_passengers",
    "send_certificate": "compensation",
    "transfer_to_human_agents": "escalate",
}
PAID_BY = {"update_reservation_flights", "update_reservation_baggages"}


class AirlineDb:
    """The benchmark's database folder, read once."""

    def __init__(self, folder: Path, data: dict[str, dict[str, Any]]):
        self.folder = folder
        self.users, self.flights, self.reservations = (data[n] for n in DB_FILES)

    @classmethod
    def load(cls, folder: str | Path) -> AirlineDb:
        folder = Path(folder)
        data = {}
        for name in DB_FILES:
            path = folder / f"{name}.json"
            try:
                data[name] = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise UserError(
                    f"{path}: no such file (the airline database: {', '.join(DB_FILES)} .json "
                    "in one folder; point at it with --environment)"
                ) from None
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise UserError(f"{path}: not a JSON database: {exc}") from None
            if not isinstance(data[name], dict):
                raise UserError(f"{path}: expected an object keyed by id")
        return cls(folder, data)


def _actions(task: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return named_calls(require(task, "actions", list), "actions", "kwargs")


def _outputs(task: dict[str, Any]) -> list[str]:
    outputs = task.get("outputs") or []
    if not isinstance(outputs, list) or not all(isinstance(o, str | int | float) for o in outputs):
        raise FieldProblem("outputs", "expected a list of strings")
    return [str(o) for o in outputs]


def _task_airports(db: AirlineDb, text: str, reservations: list[str], actions) -> set[str]:
    known = airports()
    found = {code for code in re.findall(r"\b[A-Z]{3}\b", text) if code in known}
    low = text.lower()
    found |= {code for code, city in known.items() if city.lower() in low}
    for rid in reservations:
        for segment in db.reservations[rid].get("flights") or []:
            found |= {segment.get("origin"), segment.get("destination")}
    for _, kwargs in actions:
        found |= {kwargs.get("origin"), kwargs.get("destination")}
        for segment in kwargs.get("flights") or []:
            flight = db.flights.get(segment.get("flight_number")) or {}
            found |= {flight.get("origin"), flight.get("destination")}
    return {a for a in found if a}


def _upcoming(reservation: dict[str, Any]) -> bool:
    return any(s.get("date", "") >= TODAY for s in reservation.get("flights") or [])


def _task_dates(db: AirlineDb, text: str, named: list[str], actions) -> set[str]:
    """The dates a task may book or move to: those of the reservations it may change, of
    its actions' flights and the May dates its instruction names, each with the days around."""
    held = [s["date"] for r in named for s in db.reservations[r].get("flights") or []]
    days = {int(d[-2:]) for d in held if d.startswith("2024-05-")}
    days |= {int(d) for d in re.findall(r"\bMay (\d{1,2})\b", text)}
    for _, kwargs in actions:
        days |= {int(s["date"][-2:]) for s in kwargs.get("flights") or [] if "date" in s}
    return {f"2024-05-{d:02d}" for day in days for d in (day - 1, day, day + 1) if 1 <= d <= 31}


def _routes(flights: dict[str, Any], ports: set[str]) -> set[str]:
    """The flights a search between two of `ports` can answer: direct ones, and both legs of
    every one-stop connection."""
    out = {n for n, f in flights.items() if f["origin"] in ports and f["destination"] in ports}
    first = {n: f for n, f in flights.items() if f["origin"] in ports}
    second = {n: f for n, f in flights.items() if f["destination"] in ports}
    via = {f["destination"] for f in first.values()} & {f["origin"] for f in second.values()}
    out |= {n for n, f in first.items() if f["destination"] in via}
    out |= {n for n, f in second.items() if f["origin"] in via}
    return out


def _flight_slice(flight: dict[str, Any], held: set[str], bookable: set[str]) -> dict[str, Any]:
    """The flight with the dates a reservation holds and the task's bookable dates."""
    dates = {
        d: v
        for d, v in (flight.get("dates") or {}).items()
        if d in held or (d >= TODAY and d in bookable and v.get("status") == "available")
    }
    return {**flight, "dates": dates}


def slice_environment(
    db: AirlineDb, user_id: str, actions: list[tuple[str, dict[str, Any]]], text: str
) -> dict[str, Any]:
    """The part of the database a task needs (see the module's table)."""
    users = [user_id] + [k["user_id"] for _, k in actions if k.get("user_id") in db.users]
    reservations = [r for u in users for r in db.users[u].get("reservations") or []]
    reservations += [k["reservation_id"] for _, k in actions if "reservation_id" in k]
    reservations = [r for r in dict.fromkeys(reservations) if r in db.reservations]
    users += [db.reservations[r]["user_id"] for r in reservations]
    held: dict[str, set[str]] = {}
    for rid in reservations:
        for segment in db.reservations[rid].get("flights") or []:
            held.setdefault(segment["flight_number"], set()).add(segment["date"])
    for _, kwargs in actions:
        for segment in kwargs.get("flights") or []:
            held.setdefault(segment.get("flight_number"), set())
    named = [k["reservation_id"] for _, k in actions if k.get("reservation_id") in db.reservations]
    upcoming = [r for r in reservations if _upcoming(db.reservations[r])]
    ports = _task_airports(db, text, named, actions)
    bookable = _task_dates(db, text, named + upcoming, actions)
    numbers = set(held) | _routes(db.flights, ports)
    flights = {
        n: _flight_slice(db.flights[n], held.get(n, set()), bookable)
        for n in sorted(numbers)
        if n in db.flights
    }
    return {
        "users": {u: db.users[u] for u in dict.fromkeys(users) if u in db.users},
        "reservations": {r: db.reservations[r] for r in reservations},
        "flights": {n: f for n, f in flights.items() if f["dates"] or n in held},
    }


def _charged(state: dict[str, Any], writes: list[tuple[str, dict[str, Any]]]) -> list[bool]:
    """Per write, whether replaying it charged or refunded anything (a payment appended)."""
    sandbox = AirlineDomain().sandbox(Environment(state=state), faults=False)
    out = []
    for name, kwargs in writes:
        before = len(
            (sandbox.reservations.get(kwargs.get("reservation_id")) or {}).get(
                "payment_history", []
            )
        )
        result = sandbox.call(name, kwargs)
        after = (sandbox.reservations.get(kwargs.get("reservation_id")) or {}).get(
            "payment_history", []
        )
        out.append(not result.ok or len(after) != before)
    return out


def expected_calls(
    state: dict[str, Any], writes: list[tuple[str, dict[str, Any]]]
) -> list[dict[str, Any]]:
    calls = []
    for (name, kwargs), charged in zip(writes, _charged(state, writes), strict=True):
        match: dict[str, Any] = {}
        if name in PAID_BY and not charged:
            match["payment_id"] = {"kind": "any"}
        if "flights" in kwargs:
            match["flights"] = {"kind": "any"}
        if name == "transfer_to_human_agents" and "summary" in kwargs:
            match["summary"] = {"kind": "any"}
        calls.append({"tool": name, "params": kwargs, "match": match})
    return calls


def _outcome(writes: list[tuple[str, dict[str, Any]]], outputs: list[str]) -> tuple[str, str]:
    if any(n == "transfer_to_human_agents" for n, _ in writes):
        return "escalate", "a transfer_to_human_agents action is expected"
    if writes:
        return "resolve", "write actions are expected"
    if outputs:
        return "resolve", "no write action; the agent must say the outputs"
    return "refuse", "no write action and nothing to say: the request must not be carried out"


def _facts(db: AirlineDb, user_id: str) -> dict[str, Any]:
    user = db.users[user_id]
    name = user.get("name") or {}
    facts = {
        "user_id": user_id,
        "first_name": name.get("first_name"),
        "last_name": name.get("last_name"),
        "email": user.get("email"),
        "date_of_birth": user.get("dob"),
    }
    return {k: v for k, v in facts.items() if v}


class _Mapper:
    def __init__(self, db: AirlineDb, keep_policy_conflicts: bool):
        self.db = db
        self.keep = keep_policy_conflicts

    def __call__(self, record: SourceRecord) -> dict[str, Any]:
        task = record.value
        if not isinstance(task, dict):
            raise FieldProblem("(record)", f"expected a task object, got {type(task).__name__}")
        task_id = str(require(task, "task_id", (str, int)))
        user_id = require(task, "user_id", str)
        if user_id not in self.db.users:
            raise FieldProblem("user_id", f"user {user_id!r} is not in {self.db.folder}")
        text = require(task, "instruction", str).strip()
        if not text:
            raise FieldProblem("instruction", "the instruction is empty")
        actions, outputs = _actions(task), _outputs(task)
        writes = [(n, k) for n, k in actions if not is_read_tool(n)]
        reads = [n for n, _ in actions if is_read_tool(n)]
        state = slice_environment(self.db, user_id, actions, text)
        outcome, why = _outcome(writes, outputs)
        notes = [f"outcome '{outcome}' inferred: {why}"]
        if reads:
            notes.append("the benchmark's solution also reads (not required): " + ", ".join(reads))
        notes.append(
            f"environment: slice of {self.db.folder} ({len(state['users'])} users, "
            f"{len(state['reservations'])} reservations, {len(state['flights'])} flights)"
        )
        data = case_data(
            record,
            FORMAT,
            domain=DOMAIN,
            state=state,
            user_scenario=text,
            expected={
                "tool_calls": expected_calls(state, writes),
                "outcome": outcome,
                "reply_contains": outputs,
                "optimal_steps": len(actions) + 1,
            },
            intents=list(dict.fromkeys(INTENTS[n] for n, _ in writes if n in INTENTS))
            or ["status"],
            difficulty_="hard" if len(writes) >= 2 else ("easy" if len(actions) <= 1 else "medium"),
            source_id=task_id,
            notes=notes,
        )
        data["customer"] = {"facts": _facts(self.db, user_id)}
        if self.keep:
            self._mark_conflicts(data, writes)
        return data

    def _mark_conflicts(self, data: dict[str, Any], writes) -> None:
        """Keep a task whose expected writes break the policy, labelled and noted as such."""
        environment = Environment(state=data["environment"]["state"])
        problems = AirlineDomain().policy_problems(environment, writes)
        if not problems:
            return
        data["tags"]["labels"].append(POLICY_CONFLICT_LABEL)
        data["provenance"]["label_confidence"] = "low"
        said = "; ".join(f"{p.field}: {p.message}" for p in problems)
        data["provenance"]["notes"] += (
            f"; kept although the expected calls break the policy: {said}"
        )


def import_tau_bench(
    path: str | Path,
    environment: str | Path | None = None,
    *,
    keep_policy_conflicts: bool = False,
) -> ImportResult:
    """Import tau-bench airline tasks; `environment` is the database folder (default: `db/`
    beside the tasks file). A task whose expected writes break the airline policy is
    quarantined, unless `keep_policy_conflicts`: then it is kept with the label
    `policy-conflict:kept`, low label confidence and the broken rule in its notes (to judge
    agents the way the benchmark does, label errors included)."""
    path = Path(path)
    db = AirlineDb.load(environment or path.with_name("db"))
    mapper = _Mapper(db, keep_policy_conflicts)
    result, _ = import_records(FORMAT, path, mapper, read_records(path))
    notes = (
        f"tau-bench tasks imported into the {DOMAIN} domain: environment sliced from "
        f"{db.folder}; expected calls are the write actions, replayed on the sandbox",
    )
    return ImportResult(
        result.format, result.source, result.read, result.cases, result.quarantined, notes, {}
    )
