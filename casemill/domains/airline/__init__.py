"""The tau-bench airline domain as a Casemill domain pack: 14 tools simulated, with replay.

A case's environment is the slice of the benchmark's database the case needs, in its own shapes:

    {"users": {user_id: user}, "reservations": {reservation_id: reservation},
     "flights": {flight_number: flight with its dates}}

(`casemill.formats.tau_bench` cuts it: the user, their reservations, the flights those name and
the flights from and to every airport the task touches.) The tools (`sandbox.py`) do to that
state what the benchmark's tools do to the database, so the expected calls replay and the final
state is compared with an agent's (`comparable_state`: users and reservations; flights never
change). The policy's rules (`policy.py`) are predicates checked on the expected calls by
`reference_problems`; `state_problems` checks the slice's shape and that what it names is in it.
Tool specifications (`tools.json`) are the benchmark's public ones; read tools are `get_`,
`search_`, `list_`, `calculate` and `think`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from casemill.case.model import Case, Environment
from casemill.domains.airline.contract import AirlineContract
from casemill.domains.airline.policy import problem as policy_problem
from casemill.domains.airline.sandbox import AirlineSandbox
from casemill.domains.base import Problem, Sandbox, SpecKinds, specs_by_name

NAME = "airline"
# a case label saying its expected calls break the policy on purpose: kept as the source has
# them (an imported benchmark's own label error), so the policy is not checked on them
POLICY_CONFLICT_LABEL = "policy-conflict:kept"
KEYS = {"users": None, "reservations": "reservation_id", "flights": "flight_number"}


def load_tool_specs() -> tuple[dict[str, Any], ...]:
    text = resources.files(__package__).joinpath("tools.json").read_text(encoding="utf-8")
    return tuple(json.loads(text))


@dataclass
class AirlineDomain(SpecKinds):
    name: str = NAME
    tool_specs: tuple[dict[str, Any], ...] = field(default_factory=load_tool_specs)
    has_simulator: bool = True
    no_replay_reason: str = ""
    contract: AirlineContract = field(default_factory=AirlineContract)

    def sandbox(self, environment: Environment, *, faults: bool = True) -> Sandbox:
        return AirlineSandbox(environment, specs_by_name(self.tool_specs), faults=faults)

    def state_problems(self, state: dict[str, Any]) -> list[Problem]:
        problems = _shape_problems(state)
        return problems or _link_problems(state)

    def reference_problems(self, case: Case) -> list[Problem]:
        """Expected writes the policy forbids, each judged on the state the expected calls
        before it leave (ids the environment lacks are the replay's to report)."""
        if POLICY_CONFLICT_LABEL in case.tags.labels:
            return []
        calls = [(c.tool, c.params) for c in case.expected.tool_calls]
        return self.policy_problems(case.environment, calls)

    def policy_problems(
        self, environment: Environment, calls: list[tuple[str, dict[str, Any]]]
    ) -> list[Problem]:
        """Each write of `calls` the policy forbids on the state the calls before it leave."""
        sandbox = self.sandbox(environment, faults=False)
        problems = []
        for index, (tool, params) in enumerate(calls):
            if tool in self.write_tools:
                why = policy_problem(tool, sandbox.final_state(), params)
                if why:
                    problems.append(Problem(f"expected.tool_calls[{index}]", why, "policy"))
            sandbox.call(tool, params)
        return problems


def _shape_problems(state: dict[str, Any]) -> list[Problem]:
    problems = []
    for section, key in KEYS.items():
        records = state.get(section)
        if not isinstance(records, dict):
            problems.append(
                Problem(
                    f"environment.state.{section}",
                    f"'{section}' must be an object keyed by id",
                    "state-shape",
                )
            )
            continue
        for record_id, record in records.items():
            if not isinstance(record, dict) or (key and record.get(key) != record_id):
                problems.append(
                    Problem(
                        f"environment.state.{section}.{record_id}",
                        f"record keyed {record_id!r} must be an object"
                        + (f" carrying {key} {record_id!r}" if key else ""),
                        "state-keys",
                    )
                )
    return problems


def _link_problems(state: dict[str, Any]) -> list[Problem]:
    """Reservations of users in the slice; users' payment methods well formed."""
    problems = []
    for rid, reservation in state["reservations"].items():
        if reservation.get("user_id") not in state["users"]:
            problems.append(
                Problem(
                    f"environment.state.reservations.{rid}.user_id",
                    f"user {reservation.get('user_id')!r} is not in the environment",
                    "missing-id",
                )
            )
    for uid, user in state["users"].items():
        for pid, method in (user.get("payment_methods") or {}).items():
            if not isinstance(method, dict) or method.get("source") not in (
                "credit_card",
                "gift_card",
                "certificate",
            ):
                problems.append(
                    Problem(
                        f"environment.state.users.{uid}.payment_methods.{pid}",
                        "a payment method needs a source: credit_card, gift_card or certificate",
                        "state-shape",
                    )
                )
            elif method["source"] != "credit_card" and not isinstance(
                method.get("amount"), int | float
            ):
                problems.append(
                    Problem(
                        f"environment.state.users.{uid}.payment_methods.{pid}.amount",
                        f"a {method['source']} needs a numeric balance 'amount'",
                        "state-shape",
                    )
                )
    return problems


__all__ = ["NAME", "POLICY_CONFLICT_LABEL", "AirlineDomain"]
