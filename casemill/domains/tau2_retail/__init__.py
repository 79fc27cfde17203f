"""The tau2-bench retail domain as a Casemill domain pack (tools simulated, no replay check).

A case's environment is a slice of tau2's `db.json`: the users the task concerns, their orders,
and the products those orders (and the expected calls) name, in tau2's own shapes:

    {"users": {user_id: user}, "orders": {order_id: order}, "products": {product_id: product},
     "absent_ids": [ids the task looks up on purpose although they do not exist]}

Tool specifications are inferred from the benchmark's expected actions (see `specs.py`). The
pack checks the environment's shape and that every id an expected call names (user, order,
line item, new item, product, payment method) exists in the environment; a read call may also
name an id the environment declares absent (a customer giving a wrong order number).

The sandbox (`sandbox.py`) simulates the tools from the retail policy so that an agent can be
run on these cases. `has_simulator` stays False: the benchmark's expected action lists include
failed attempts (task 64 tries an exchange on a pending order before the modification it
expects; task 105 exchanges with a gift card whose balance does not cover the difference), which
Casemill's replay check, where every expected call must succeed, cannot express. So cases are
checked by schema and references, and scored by their expected calls and phrases, not by replay.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from casemill.case.model import Case, Environment
from casemill.domains.base import Problem, Sandbox, SpecKinds, specs_by_name
from casemill.domains.tau2_retail.sandbox import Tau2RetailSandbox
from casemill.domains.tau2_retail.specs import is_read_tool, load_tool_specs

NAME = "tau2-retail"
_SECTIONS = ("users", "orders", "products")


@dataclass
class Tau2RetailDomain(SpecKinds):
    name: str = NAME
    tool_specs: tuple[dict[str, Any], ...] = field(default_factory=load_tool_specs)
    has_simulator: bool = False
    no_replay_reason: str = (
        "has no replay check (its sandbox runs the agent's calls, but the benchmark's expected "
        "calls include failed attempts, so no expected final state is derived)"
    )

    def sandbox(self, environment: Environment, *, faults: bool = True) -> Sandbox:
        return Tau2RetailSandbox(environment, specs_by_name(self.tool_specs), faults=faults)

    def state_problems(self, state: dict[str, Any]) -> list[Problem]:
        problems = []
        for section in _SECTIONS:
            if not isinstance(state.get(section), dict):
                problems.append(
                    Problem(
                        f"environment.state.{section}",
                        f"'{section}' must be an object keyed by id",
                        "state-shape",
                    )
                )
        if problems:
            return problems
        if not isinstance(state.get("absent_ids", []), list):
            problems.append(
                Problem(
                    "environment.state.absent_ids",
                    "'absent_ids' must be a list of ids",
                    "state-shape",
                )
            )
        key_of = {"users": "user_id", "orders": "order_id", "products": "product_id"}
        for section, key in key_of.items():
            for record_id, record in state[section].items():
                if not isinstance(record, dict) or record.get(key) != record_id:
                    problems.append(
                        Problem(
                            f"environment.state.{section}.{record_id}",
                            f"record keyed {record_id!r} must carry {key} {record_id!r}",
                            "state-keys",
                        )
                    )
        for order_id, order in state["orders"].items():
            if isinstance(order, dict) and order.get("user_id") not in state["users"]:
                problems.append(
                    Problem(
                        f"environment.state.orders.{order_id}.user_id",
                        f"user {order.get('user_id')!r} is not in the environment",
                        "missing-id",
                    )
                )
        return problems

    def reference_problems(self, case: Case) -> list[Problem]:
        """Ids named by expected calls that the environment does not hold."""
        index = _Index(case.environment.state)
        problems = []
        for number, call in enumerate(case.expected.tool_calls):
            where = f"expected.tool_calls[{number}].params"
            read = is_read_tool(call.tool)
            for param, value, kind in _named_ids(call.params):
                message = index.missing(kind, value, call.params, allow_absent=read)
                if message:
                    problems.append(Problem(f"{where}.{param}", message, "missing-id"))
        return problems


def _named_ids(params: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(param, id, kind) for every id a call names."""
    out = []
    single = {
        "user_id": "user",
        "order_id": "order",
        "product_id": "product",
        "item_id": "variant",
        "payment_method_id": "payment",
    }
    for param, kind in single.items():
        if isinstance(params.get(param), str):
            out.append((param, params[param], kind))
    for param, kind in (("item_ids", "line_item"), ("new_item_ids", "variant")):
        for position, value in enumerate(params.get(param) or []):
            out.append((f"{param}[{position}]", str(value), kind))
    return out


class _Index:
    def __init__(self, state: dict[str, Any]):
        self.users = state.get("users") or {}
        self.orders = state.get("orders") or {}
        self.products = state.get("products") or {}
        self.absent = set(state.get("absent_ids") or [])
        self.variants = {v for p in self.products.values() for v in (p.get("variants") or {})}
        self.payments = {m for u in self.users.values() for m in (u.get("payment_methods") or {})}

    def missing(
        self, kind: str, value: str, params: dict[str, Any], *, allow_absent: bool
    ) -> str | None:
        if allow_absent and value in self.absent:
            return None
        if kind == "line_item":
            order = self.orders.get(params.get("order_id"))
            if order is None:
                return None  # the order itself is reported
            if value not in {i.get("item_id") for i in order.get("items") or []}:
                return f"order {order['order_id']} has no item {value!r}"
            return None
        pools = {
            "user": self.users,
            "order": self.orders,
            "product": self.products,
            "variant": self.variants,
            "payment": self.payments,
        }
        if value not in pools[kind]:
            return f"{kind.replace('_', ' ')} {value!r} is not in the environment"
        return None


__all__ = ["NAME", "Tau2RetailDomain"]
