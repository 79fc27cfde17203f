"""Simulated support tools acting on a sandboxed copy of a case's environment.

`SupportSandbox.call(tool, params)` never raises for a bad call: unknown tools, parameters that do
not fit the tool's schema, policy violations and injected faults all come back as a `ToolResult`
with `ok=False` and an `error` kind, the way a real service answers. Every call is recorded.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from casemill.case.model import Environment, ToolFault
from casemill.domains.base import Sandbox, ToolResult, param_errors
from casemill.domains.support import policy
from casemill.domains.support.state import Order, Refund, SupportState, Ticket
from casemill.domains.support.tools import TOOLS_BY_NAME


def _private_copy(state: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a JSON state (a JSON round trip is ~10x faster than `copy.deepcopy`);
    states holding non-JSON objects fall back to `copy.deepcopy`."""
    try:
        return orjson.loads(orjson.dumps(state))
    except TypeError:
        return copy.deepcopy(state)


class SupportSandbox(Sandbox):
    def __init__(
        self,
        environment: Environment,
        *,
        faults: bool = True,
        parsed: SupportState | None = None,
        checked_params: bool = False,
    ):
        """`parsed`: the environment's state already parsed, which the sandbox then owns and
        changes (the caller must not use it afterwards); by default the state is copied.
        `checked_params`: the caller has checked the parameters of every call it will make
        against the tool's specification (`param_errors` finds nothing; the semantic checks do,
        before the replay), so the sandbox does not check them again."""
        super().__init__(environment, faults=faults)
        self.state = (
            parsed if parsed is not None else SupportState.parse(_private_copy(environment.state))
        )
        self._checked_params = checked_params

    # -- plumbing ---------------------------------------------------------------------------
    def _dispatch(self, tool: str, params: dict[str, Any]) -> ToolResult:
        if tool not in TOOLS_BY_NAME:
            return ToolResult.fail("unknown_tool", f"no tool named {tool!r}")
        if not self._checked_params:
            problems = param_errors(TOOLS_BY_NAME[tool], params)
            if problems:
                return ToolResult.fail("invalid_params", "; ".join(problems))
        return getattr(self, f"_t_{tool}")(**params)

    def _order(self, order_id: str) -> Order | ToolResult:
        order = self.state.orders.get(str(order_id).strip().lstrip("#"))
        if order is None:
            return ToolResult.fail("not_found", f"no order {order_id}")
        return order

    def corrupt(self, fault: ToolFault, result: ToolResult) -> ToolResult:
        content = result.content if isinstance(result.content, dict) else {}
        kept = {k: v for k, v in content.items() if k in ("id", "order_id")}
        return ToolResult(
            ok=True, content={**kept, "items": None, "status": "\ufffd\ufffd", "_truncated": True}
        )

    def final_state(self) -> dict[str, Any]:
        return self.state.dump()

    def comparable_state(self) -> dict[str, Any]:
        return self.state.comparable()

    # -- reads ------------------------------------------------------------------------------
    def _t_get_order(self, order_id: str) -> ToolResult:
        order = self._order(order_id)
        if isinstance(order, ToolResult):
            return order
        return ToolResult(ok=True, content=order.model_dump(mode="json"))

    def _t_list_customer_orders(
        self, customer_id: str | None = None, email: str | None = None
    ) -> ToolResult:
        if not customer_id and not email:
            return ToolResult.fail("invalid_params", "give customer_id or email")
        customer = None
        if customer_id:
            customer = self.state.customers.get(customer_id)
        elif email:
            customer = self.state.customer_by_email(email)
        if customer is None:
            return ToolResult.fail("not_found", "no such customer")
        orders = [
            {"order_id": o.id, "status": o.status, "items": [i.name for i in o.items]}
            for o in self.state.orders.values()
            if o.customer_id == customer.id
        ]
        return ToolResult(ok=True, content={"customer_id": customer.id, "orders": orders})

    def _t_get_customer(self, customer_id: str) -> ToolResult:
        customer = self.state.customers.get(customer_id)
        if customer is None:
            return ToolResult.fail("not_found", f"no customer {customer_id}")
        return ToolResult(ok=True, content=customer.model_dump(mode="json"))

    # -- writes -----------------------------------------------------------------------------
    def _t_refund_items(
        self, order_id: str, item_ids: list[str], reason: str, amount: float | None = None
    ) -> ToolResult:
        order = self._order(order_id)
        if isinstance(order, ToolResult):
            return order
        why = policy.check_refund(order, item_ids, reason, amount)
        if why:
            return ToolResult.fail("policy", why)
        total = amount if amount is not None else sum(order.item(i).total for i in item_ids)
        refund = Refund(
            id=f"R{len(order.refunds) + 1}",
            item_ids=list(item_ids),
            amount=round(total, 2),
            reason=reason,
        )
        order.refunds = [*order.refunds, refund]
        return ToolResult(
            ok=True, content={"refund_id": refund.id, "amount": refund.amount, "order_id": order.id}
        )

    def _t_cancel_order(self, order_id: str, reason: str = "") -> ToolResult:
        order = self._order(order_id)
        if isinstance(order, ToolResult):
            return order
        why = policy.check_cancel(order)
        if why:
            return ToolResult.fail("policy", why)
        order.status = "cancelled"
        order.cancel_reason = reason or None
        return ToolResult(
            ok=True,
            content={"order_id": order.id, "status": "cancelled", "refund_amount": order.paid},
        )

    def _t_change_shipping_address(self, order_id: str, address: dict[str, Any]) -> ToolResult:
        order = self._order(order_id)
        if isinstance(order, ToolResult):
            return order
        why = policy.check_address_change(order)
        if why:
            return ToolResult.fail("policy", why)
        order.address = address
        return ToolResult(
            ok=True,
            content={"order_id": order.id, "address": order.address.model_dump(mode="json")},
        )

    def _t_exchange_item(self, order_id: str, item_id: str, new_variant_id: str) -> ToolResult:
        order = self._order(order_id)
        if isinstance(order, ToolResult):
            return order
        why = policy.check_exchange(self.state, order, item_id, new_variant_id)
        if why:
            return ToolResult.fail("policy", why)
        item = order.item(item_id)
        order.exchanges = [
            *order.exchanges,
            {
                "item_id": item_id,
                "from_variant_id": order.variant_of(item),
                "to_variant_id": new_variant_id,
            },
        ]
        return ToolResult(
            ok=True,
            content={"order_id": order.id, "item_id": item_id, "new_variant_id": new_variant_id},
        )

    def _t_escalate_to_human(
        self, reason: str, summary: str, order_id: str | None = None
    ) -> ToolResult:
        order = self.state.orders.get(order_id) if order_id else None
        ticket = Ticket(
            id=f"T{len(self.state.tickets) + 1}",
            reason=reason,
            order_id=order.id if order else order_id,
            customer_id=order.customer_id if order else None,
            summary=summary,
        )
        self.state.tickets = [*self.state.tickets, ticket]
        return ToolResult(
            ok=True, content={"ticket_id": ticket.id, "status": "handed to a human agent"}
        )
