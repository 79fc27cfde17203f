"""Small support cases for the agent, reference and runner tests (built here, not read from the
seeds, so that the tests pin the behaviour they name)."""

from __future__ import annotations

from typing import Any

from casemill.case.model import Case, Environment, Expected, ExpectedCall, ToolFault, Turn
from casemill.domains.support.policy import refund_call

CUSTOMERS = {
    "C1001": {"id": "C1001", "name": "Ana Diaz", "email": "ana.diaz@example.com"},
    "C1002": {"id": "C1002", "name": "Ben Okafor", "email": "ben.okafor@example.com"},
}
ADDRESS = {"street1": "1 Main St", "city": "Springfield", "state": "IL", "zip": "62704"}


def order(
    order_id: str,
    status: str,
    items: list[tuple[str, str, float]],
    *,
    customer: str = "C1001",
    note: str | None = None,
    qty: dict | None = None,
) -> dict[str, Any]:
    out = {
        "id": order_id,
        "customer_id": customer,
        "status": status,
        "items": [
            {
                "item_id": i,
                "name": n,
                "price": p,
                "quantity": (qty or {}).get(i, 1),
                "product_id": "P100",
                "variant_id": f"P100-M-{n.split()[0].lower()}",
            }
            for i, n, p in items
        ],
        "address": ADDRESS,
        "delivered_at": "2026-11-03" if status == "delivered" else None,
    }
    if note:
        out["note"] = note
    return out


def support_case(
    text: str | list[str],
    orders: list[dict[str, Any]],
    *,
    calls: tuple[ExpectedCall, ...] = (),
    outcome: str = "resolve",
    contains: tuple[str, ...] = (),
    faults: tuple[ToolFault, ...] = (),
    customer: str = "C1001",
) -> Case:
    texts = [text] if isinstance(text, str) else text
    who = CUSTOMERS[customer]
    turns = [
        Turn(
            role="system",
            content=f"Authenticated customer: {customer} ({who['name']}, {who['email']})",
        )
    ]
    turns += [Turn(role="customer", content=t) for t in texts]
    state = {
        "customers": dict(CUSTOMERS),
        "orders": {o["id"]: o for o in orders},
        "products": {
            "P100": {
                "id": "P100",
                "name": "Thing",
                "variants": [{"id": "P100-M-ceramic", "price": 14.5}],
            }
        },
    }
    return Case(
        domain="support",
        environment=Environment(state=state, faults=faults),
        conversation=tuple(turns),
        expected=Expected(
            tool_calls=calls, outcome=outcome, reply_contains=contains, optimal_steps=3
        ),
    )


def mug_case(order_id: str = "W1001", text: str | None = None) -> Case:
    """The cracked mug in a two-item delivered order: refund the mug only (14.50)."""
    return support_case(
        text or f"Hi, order {order_id} came today and the mug is cracked. Could I get a refund?",
        [
            order(
                order_id,
                "delivered",
                [("I1", "Ceramic mug 12oz", 14.5), ("I2", "Linen tea towel", 9.0)],
            )
        ],
        calls=(refund_call(order_id, ["I1"], "damaged"),),
        contains=("14.50", "refund"),
    )


def many_cases(n: int) -> list[Case]:
    """n distinct mug cases (distinct order ids, so distinct content ids)."""
    return [mug_case(f"W{2000 + i}") for i in range(n)]
