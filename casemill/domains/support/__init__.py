"""The built-in e-commerce customer-support domain pack."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from casemill.case.model import Case, Environment
from casemill.domains.base import Problem
from casemill.domains.support.contract import SupportContract
from casemill.domains.support.policy import INTENT_KINDS, Decision, Intent, decide
from casemill.domains.support.sandbox import SupportSandbox
from casemill.domains.support.session import signed_in_customer
from casemill.domains.support.state import SupportState
from casemill.domains.support.tools import READ_TOOLS, TOOL_SPECS, WRITE_TOOLS


class SupportDomain:
    name = "support"
    tool_specs = TOOL_SPECS
    read_tools = READ_TOOLS
    write_tools = WRITE_TOOLS
    has_simulator = True
    no_replay_reason = ""
    contract = SupportContract()

    def sandbox(
        self,
        environment: Environment,
        *,
        faults: bool = True,
        parsed: SupportState | None = None,
        checked_params: bool = False,
    ) -> SupportSandbox:
        return SupportSandbox(
            environment, faults=faults, parsed=parsed, checked_params=checked_params
        )

    def state_problems(self, state: dict[str, Any]) -> list[Problem]:
        return self.check_state(state)[1]

    def customer_facts(self, case: Case) -> dict[str, Any]:
        """What the signed-in customer knows of themselves: their id, name and email (the
        simulated customer answers an agent's question about these; which order is meant is
        the case's to say, in its conversation, not a fact to hand out when asked)."""
        customer_id = signed_in_customer(case)
        customers = case.environment.state.get("customers")
        record = customers.get(customer_id) if customer_id and isinstance(customers, dict) else None
        facts: dict[str, Any] = {"customer_id": customer_id} if customer_id else {}
        if isinstance(record, dict):
            facts.update(
                {k: record[k] for k in ("name", "email") if isinstance(record.get(k), str)}
            )
        return facts

    def check_state(
        self, state: dict[str, Any], parsed: SupportState | None = None
    ) -> tuple[SupportState | None, list[Problem]]:
        """The parsed state (None when it does not parse) and its problems: lets a caller parse
        once for `reference_problems(case, parsed=...)` and `sandbox(..., parsed=...)`.
        `parsed`: `state` already parsed by the caller (`SupportState.parse(state)`'s equal)."""
        try:
            parsed = parsed if parsed is not None else SupportState.parse(state)
        except ValidationError as exc:
            return None, [
                Problem(
                    field="environment.state." + ".".join(str(p) for p in err["loc"]),
                    message=err["msg"],
                    rule="state-shape",
                )
                for err in exc.errors()
            ]
        problems: list[Problem] = []
        for order_id, order in parsed.orders.items():
            if order.id != order_id:
                problems.append(
                    Problem(
                        f"environment.state.orders.{order_id}.id",
                        f"order keyed {order_id!r} has id {order.id!r}",
                        "state-keys",
                    )
                )
            if order.customer_id not in parsed.customers:
                problems.append(
                    Problem(
                        f"environment.state.orders.{order_id}.customer_id",
                        f"customer {order.customer_id!r} is not in the environment",
                        "missing-id",
                    )
                )
        return parsed, problems

    def reference_problems(self, case: Case, parsed: SupportState | None = None) -> list[Problem]:
        """Ids in expected calls (order, items, customer) that the environment does not hold,
        and orders or customers (by id or email) in them other than the signed-in customer's,
        when the case names one (the agent serves that customer only). `parsed`: the case's state already
        parsed (see `check_state`), read only here."""
        try:
            state = parsed if parsed is not None else SupportState.parse(case.environment.state)
        except ValidationError:
            return []  # reported by state_problems
        problems = []
        customer = signed_in_customer(case)
        for index, call in enumerate(case.expected.tool_calls):
            where = f"expected.tool_calls[{index}].params"
            order_id = call.params.get("order_id")
            order = state.orders.get(str(order_id).strip().lstrip("#")) if order_id else None
            if order_id and order is None:
                problems.append(
                    Problem(
                        f"{where}.order_id",
                        f"order {order_id!r} is not in the environment",
                        "missing-id",
                    )
                )
            elif order is not None and customer and order.customer_id != customer:
                problems.append(
                    Problem(
                        f"{where}.order_id",
                        f"order {order.id} belongs to customer {order.customer_id}, not to the signed-in customer {customer}",
                        "other-customer",
                    )
                )
            item_ids = list(call.params.get("item_ids") or [])
            if call.params.get("item_id"):
                item_ids.append(call.params["item_id"])
            for item_id in item_ids:
                if order is not None and order.item(str(item_id)) is None:
                    problems.append(
                        Problem(
                            f"{where}.item_ids",
                            f"order {order.id} has no item {item_id!r}",
                            "missing-id",
                        )
                    )
            customer_id = call.params.get("customer_id")
            if customer_id and customer_id not in state.customers:
                problems.append(
                    Problem(
                        f"{where}.customer_id",
                        f"customer {customer_id!r} is not in the environment",
                        "missing-id",
                    )
                )
            elif customer_id and customer and customer_id != customer:
                problems.append(
                    Problem(
                        f"{where}.customer_id",
                        f"customer {customer_id} is not the signed-in customer {customer}",
                        "other-customer",
                    )
                )
            email = call.params.get("email")
            owner = _owner(state, email) if customer and not customer_id else None
            if owner is not None and owner != customer:
                problems.append(
                    Problem(
                        f"{where}.email",
                        f"email {email!r} is customer {owner}'s, not the signed-in customer "
                        f"{customer}'s",
                        "other-customer",
                    )
                )
        return problems


def _owner(state: SupportState, email: Any) -> str | None:
    """The id of the customer whose email `email` is, as the simulator finds it, or None."""
    if not isinstance(email, str) or not email.strip():
        return None
    customer = state.customer_by_email(email)
    return customer.id if customer is not None else None


__all__ = ["INTENT_KINDS", "Decision", "Intent", "SupportDomain", "SupportState", "decide"]
