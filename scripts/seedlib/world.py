"""Build a seed's environment (customers, orders with line items, products with variants) and
scripted conversation turns, from the catalogue.

`order("W1001", "C1001", "delivered", "P100-OS-blue", ("P105-OS-clear", 2))` gives an order whose
line items are `I1`, `I2`... in the order written, priced from the catalogue. `world(...)` turns
orders into an `Environment`, with every customer and product they mention. Tool turns in a
scripted history are produced by the real support sandbox, so they say what the tools say.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from casemill.case.ids import canonical_json, short_hash
from casemill.case.model import Environment, ToolCall, Turn
from casemill.domains.support.sandbox import SupportSandbox
from casemill.domains.support.state import SupportState
from seedlib.catalog import CUSTOMERS, PRODUCTS

PLACED = "2026-10-27"
DELIVERED = "2026-11-03"


@dataclass(frozen=True)
class OrderSpec:
    order_id: str
    customer_id: str
    status: str
    lines: tuple[tuple[str, int], ...]
    placed_at: str = PLACED
    delivered_at: str | None = None
    refunded: tuple[str, ...] = ()
    address: dict[str, str] | None = None
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def order(
    order_id: str,
    customer_id: str,
    status: str,
    *lines: str | tuple[str, int],
    placed: str = PLACED,
    delivered: str | None = None,
    refunded: tuple[str, ...] = (),
    note: str | None = None,
) -> OrderSpec:
    """One order; `lines` are variant ids, or (variant id, quantity); `refunded` names line items
    already refunded in full (for damage) before the conversation starts."""
    norm = tuple((ln, 1) if isinstance(ln, str) else (ln[0], ln[1]) for ln in lines)
    if status == "delivered" and delivered is None:
        delivered = DELIVERED
    return OrderSpec(order_id, customer_id, status, norm, placed, delivered, refunded, note=note)


def product_of(variant_id: str) -> str:
    return variant_id.split("-", 1)[0]


def variant_price(variant_id: str) -> float:
    name, price, variants = PRODUCTS[product_of(variant_id)]
    flag = variants[variant_id.split("-", 1)[1]]
    return flag[1] if isinstance(flag, tuple) else price


def item_name(variant_id: str) -> str:
    """`Ceramic mug 12oz (blue)`, `Cotton crew t-shirt (M, black)`."""
    name = PRODUCTS[product_of(variant_id)][0]
    size, colour = variant_id.split("-")[1:3]
    detail = colour if size == "OS" else f"{size}, {colour}"
    return f"{name} ({detail})"


def address_of(customer_id: str) -> dict[str, str]:
    _, street, city, state, zip_code = CUSTOMERS[customer_id]
    return {"street1": street, "city": city, "state": state, "zip": zip_code}


def email_of(customer_id: str) -> str:
    first, last = CUSTOMERS[customer_id][0].lower().split(" ", 1)
    return f"{first}.{last.replace(' ', '')}@example.com"


def system_turn(customer_id: str) -> Turn:
    name = CUSTOMERS[customer_id][0]
    return Turn(
        role="system",
        content=f"Authenticated customer: {customer_id} ({name}, {email_of(customer_id)})",
    )


def _customer(customer_id: str) -> dict[str, Any]:
    number = customer_id[1:]
    return {
        "id": customer_id,
        "name": CUSTOMERS[customer_id][0],
        "email": email_of(customer_id),
        "address": address_of(customer_id),
        "payment_methods": [{"id": f"card_{number}", "kind": "card", "last4": number}],
    }


def _product(product_id: str) -> dict[str, Any]:
    name, _, variants = PRODUCTS[product_id]
    out = []
    for suffix, flag in variants.items():
        size, colour = suffix.split("-")
        vid = f"{product_id}-{suffix}"
        available = flag[0] if isinstance(flag, tuple) else flag
        options = {"colour": colour} if size == "OS" else {"size": size, "colour": colour}
        out.append(
            {"id": vid, "options": options, "price": variant_price(vid), "available": available}
        )
    return {"id": product_id, "name": name, "variants": out}


def _order(spec: OrderSpec) -> dict[str, Any]:
    items = []
    for index, (variant_id, quantity) in enumerate(spec.lines, start=1):
        items.append(
            {
                "item_id": f"I{index}",
                "name": item_name(variant_id),
                "price": variant_price(variant_id),
                "quantity": quantity,
                "product_id": product_of(variant_id),
                "variant_id": variant_id,
            }
        )
    refunds = []
    for number, item_id in enumerate(spec.refunded, start=1):
        line = next(i for i in items if i["item_id"] == item_id)
        amount = round(line["price"] * line["quantity"], 2)
        refunds.append(
            {"id": f"R{number}", "item_ids": [item_id], "amount": amount, "reason": "damaged"}
        )
    return {
        "id": spec.order_id,
        "customer_id": spec.customer_id,
        "status": spec.status,
        "items": items,
        "address": spec.address or address_of(spec.customer_id),
        "payment_method_id": f"card_{spec.customer_id[1:]}",
        "placed_at": spec.placed_at,
        "delivered_at": spec.delivered_at,
        "note": spec.note,
        "refunds": refunds,
    }


def world(signed_in: str, *orders: OrderSpec, others: tuple[str, ...] = ()) -> Environment:
    """The environment of one seed: the signed-in customer, every customer and product the
    orders mention, and `others` (customers with no order here)."""
    customer_ids = sorted({signed_in, *others, *(o.customer_id for o in orders)})
    product_ids = sorted({product_of(v) for o in orders for v, _ in o.lines})
    state = SupportState.parse(
        {
            "customers": {c: _customer(c) for c in customer_ids},
            "orders": {o.order_id: _order(o) for o in orders},
            "products": {p: _product(p) for p in product_ids},
        }
    )
    return Environment(state=state.dump())


def customer(text: str) -> Turn:
    return Turn(role="customer", content=text)


def agent(text: str) -> Turn:
    return Turn(role="assistant", content=text)


def lookup(env: Environment, tool: str, **params: Any) -> tuple[Turn, Turn]:
    """An assistant turn calling a read tool and the tool turn with what the sandbox answers."""
    call_id = "call_" + short_hash(tool + canonical_json(params), 12)
    result = SupportSandbox(Environment(state=copy.deepcopy(env.state))).call(tool, params)
    if not result.ok:
        raise ValueError(f"scripted lookup {tool}({params}) failed: {result.as_text()}")
    return (
        Turn(role="assistant", tool_calls=(ToolCall(tool=tool, params=params, id=call_id),)),
        Turn(role="tool", content=result.as_text(), tool_call_id=call_id),
    )
