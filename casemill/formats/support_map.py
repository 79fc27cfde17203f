"""Mapping the book's e-commerce shapes (chapter and companion formats) to the support domain.

The book's order: `{order_id, status, total, currency, items: [{sku, name, qty, unit_price}],
delivered_at?, placed_at?, shipping_address?: {name, street1, street2, city, state, zip,
country}}` becomes a `SupportState` with one customer and one order:

| book | support state |
| --- | --- |
| `order_id` | `orders[ID].id` (synthesised `W1001` when missing) |
| `status` ("Delivered", "Processing", | `pending / processing / shipped / delivered / |
|   "Pending Shipment", ...)           |   cancelled` |
| `items[n].sku / name / qty /         | `items[n].product_id / name / quantity / price`, |
|   unit_price`                        |   `item_id` `I<n+1>` unless given |
| `total` | checked against the items' sum (`Order.paid`), written back from it |
| `currency` | must be USD (the support domain's currency) |
| `shipping_address` | `orders[ID].address`; its `name` names the customer |
| `placed_at`, `delivered_at` | the same fields |
| (none) | customer `C1001`, named after the shipping address or "Imported Customer" |

Tool calls are mapped in `support_calls`. Every inference is appended to `notes`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from casemill.case.model import MAX_TEXT, Turn
from casemill.formats.result import FieldProblem

DEFAULT_CUSTOMER_ID = "C1001"
DEFAULT_ORDER_ID = "W1001"
DEFAULT_CUSTOMER_NAME = "Imported Customer"
AUTH_PREFIX = "Authenticated customer: "

STATUS_IN: dict[str, str] = {
    "pending": "pending",
    "pending shipment": "pending",
    "awaiting shipment": "pending",
    "placed": "pending",
    "processing": "processing",
    "processed": "processing",
    "shipped": "shipped",
    "in transit": "shipped",
    "out for delivery": "shipped",
    "delivered": "delivered",
    "cancelled": "cancelled",
    "canceled": "cancelled",
}
STATUS_OUT: dict[str, str] = {
    "pending": "Pending Shipment",
    "processing": "Processing",
    "shipped": "Shipped",
    "delivered": "Delivered",
    "cancelled": "Cancelled",
}
ROLE_IN: dict[str, str] = {
    "customer": "customer",
    "user": "customer",
    "human": "customer",
    "assistant": "assistant",
    "agent": "assistant",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
}


def as_amount(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FieldProblem(field, f"expected a number, got {type(value).__name__} {value!r}")
    if value < 0:
        raise FieldProblem(field, f"expected a non-negative amount, got {value}")
    return round(float(value), 2)


def as_text(value: Any, field: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise FieldProblem(field, f"expected a non-empty string, got {value!r}")
    return value


def slug_email(name: str) -> str:
    local = ".".join(re.findall(r"[a-z0-9]+", name.lower())) or "customer"
    return f"{local}@example.com"


# -- orders -------------------------------------------------------------------------------------
def map_items(items: Any, where: str, notes: list[str]) -> list[dict[str, Any]]:
    if not isinstance(items, list) or not items:
        raise FieldProblem(where, "expected a non-empty list of line items")
    out = []
    for n, item in enumerate(items):
        at = f"{where}[{n}]"
        if not isinstance(item, dict):
            raise FieldProblem(at, f"expected a line item object, got {type(item).__name__}")
        price = item.get("unit_price", item.get("price"))
        if price is None:
            raise FieldProblem(f"{at}.unit_price", "a line item needs unit_price")
        qty = item.get("qty", item.get("quantity", 1))
        if isinstance(qty, bool) or not isinstance(qty, int) or qty < 1:
            raise FieldProblem(f"{at}.qty", f"expected a positive whole number, got {qty!r}")
        line: dict[str, Any] = {
            "item_id": as_text(item.get("item_id", f"I{n + 1}"), f"{at}.item_id"),
            "name": as_text(item.get("name"), f"{at}.name"),
            "price": as_amount(price, f"{at}.unit_price"),
            "quantity": qty,
        }
        sku = item.get("sku", item.get("product_id"))
        if sku is not None:
            line["product_id"] = as_text(sku, f"{at}.sku")
        out.append(line)
    if any("item_id" not in i for i in items if isinstance(i, dict)):
        notes.append("line item ids I1.. synthesised by position")
    return out


def map_address(value: Any, where: str) -> tuple[dict[str, Any], str | None]:
    if not isinstance(value, dict):
        raise FieldProblem(where, f"expected an address object, got {type(value).__name__}")
    address = {
        k: value[k]
        for k in ("street1", "street2", "city", "state", "zip", "country")
        if value.get(k) not in (None,)
    }
    for key in ("street1", "city", "zip"):
        as_text(address.get(key), f"{where}.{key}")
    for key, item in address.items():
        as_text(item, f"{where}.{key}", required=False)
    name = value.get("name")
    return address, (name if isinstance(name, str) and name.strip() else None)


def map_order(order: Any, notes: list[str], *, where: str = "order") -> dict[str, Any]:
    """The support state for one book order (see the module's table)."""
    if not isinstance(order, dict):
        raise FieldProblem(where, f"expected an order object, got {type(order).__name__}")
    status_raw = as_text(order.get("status"), f"{where}.status")
    status = STATUS_IN.get(status_raw.strip().lower())
    if status is None:
        raise FieldProblem(
            f"{where}.status",
            f"unknown order status {status_raw!r}; "
            f"known: {', '.join(sorted(set(STATUS_OUT.values())))}",
        )
    currency = order.get("currency", "USD")
    if currency != "USD":
        raise FieldProblem(
            f"{where}.currency",
            f"currency {currency!r} is not supported; the support domain is in USD",
        )
    order_id = order.get("order_id")
    if order_id is None:
        order_id = DEFAULT_ORDER_ID
        notes.append(f"order id {DEFAULT_ORDER_ID} synthesised")
    order_id = as_text(order_id, f"{where}.order_id").strip().lstrip("#")
    items = map_items(order.get("items"), f"{where}.items", notes)
    out: dict[str, Any] = {
        "id": order_id,
        "customer_id": DEFAULT_CUSTOMER_ID,
        "status": status,
        "items": items,
    }
    name = None
    if order.get("shipping_address") is not None:
        out["address"], name = map_address(order["shipping_address"], f"{where}.shipping_address")
    for key in ("placed_at", "delivered_at"):
        if order.get(key) is not None:
            out[key] = as_text(order[key], f"{where}.{key}")
    paid = round(sum(i["price"] * i["quantity"] for i in items), 2)
    if (
        order.get("total") is not None
        and abs(as_amount(order["total"], f"{where}.total") - paid) > 0.005
    ):
        notes.append(
            f"order total {order['total']} differs from the items' sum {paid:.2f}; the sum is kept"
        )
    customer_name = name or DEFAULT_CUSTOMER_NAME
    notes.append(
        f"customer {DEFAULT_CUSTOMER_ID} ({customer_name}, {slug_email(customer_name)}) synthesised"
    )
    customer = {
        "id": DEFAULT_CUSTOMER_ID,
        "name": customer_name,
        "email": slug_email(customer_name),
    }
    return {"customers": {DEFAULT_CUSTOMER_ID: customer}, "orders": {order_id: out}}


def export_order(state: dict[str, Any], order_id: str | None = None) -> dict[str, Any] | None:
    """The book's order object for one order of a support state (the first when not named)."""
    orders = state.get("orders") or {}
    if not orders:
        return None
    order = orders.get(order_id) if order_id in orders else next(iter(orders.values()))
    items = []
    for n, item in enumerate(order["items"]):
        line: dict[str, Any] = {}
        if item["item_id"] != f"I{n + 1}":
            line["item_id"] = item["item_id"]
        if item.get("product_id"):
            line["sku"] = item["product_id"]
        line.update(name=item["name"], qty=item.get("quantity", 1), unit_price=item["price"])
        items.append(line)
    paid = round(sum(i["price"] * i.get("quantity", 1) for i in order["items"]), 2)
    out: dict[str, Any] = {
        "order_id": order["id"],
        "status": STATUS_OUT[order["status"]],
        "total": paid,
        "currency": "USD",
        "items": items,
    }
    if order.get("address"):
        customer = (state.get("customers") or {}).get(order.get("customer_id"), {})
        name = customer.get("name")
        address = {"name": name} if name and name != DEFAULT_CUSTOMER_NAME else {}
        out["shipping_address"] = {**address, **order["address"]}
    for key in ("placed_at", "delivered_at"):
        if order.get(key):
            out[key] = order[key]
    return out


def the_order(state: dict[str, Any]) -> dict[str, Any]:
    return next(iter(state["orders"].values()))


def auth_turn(state: dict[str, Any]) -> Turn:
    customer = next(iter(state["customers"].values()))
    return Turn(
        role="system",
        content=f"{AUTH_PREFIX}{customer['id']} ({customer['name']}, {customer['email']})",
    )


# -- conversations ------------------------------------------------------------------------------
def map_turns(
    turns: Any, where: str, role_of: Callable[[str, str], str]
) -> tuple[list[Turn], list[str]]:
    """Turns and the original role of each (role_of maps a source role or raises)."""
    if not isinstance(turns, list) or not turns:
        raise FieldProblem(where, "expected a non-empty list of turns")
    out, roles = [], []
    for n, turn in enumerate(turns):
        at = f"{where}[{n}]"
        if not isinstance(turn, dict):
            raise FieldProblem(at, f"expected a turn object, got {type(turn).__name__}")
        role = turn.get("role")
        if not isinstance(role, str) or not role.strip():
            raise FieldProblem(f"{at}.role", f"expected a role name, got {role!r}")
        content = turn.get("content", "")
        if not isinstance(content, str):
            raise FieldProblem(f"{at}.content", f"expected a string, got {type(content).__name__}")
        if len(content) > MAX_TEXT:
            raise FieldProblem(
                f"{at}.content",
                f"{len(content):,} characters, over the {MAX_TEXT:,}-character limit",
            )
        mapped = role_of(role, f"{at}.role")
        tool_call_id = turn.get("tool_call_id") if mapped == "tool" else None
        if tool_call_id is not None and not isinstance(tool_call_id, str):
            raise FieldProblem(f"{at}.tool_call_id", f"expected a string, got {tool_call_id!r}")
        out.append(Turn(role=mapped, content=content, tool_call_id=tool_call_id))  # type: ignore[arg-type]
        roles.append(role)
    if not any(t.role == "customer" for t in out):
        raise FieldProblem(where, "the conversation has no customer turn")
    return out, roles


def chapter_role(role: str, where: str) -> str:
    mapped = ROLE_IN.get(role.strip().lower())
    if mapped is None:
        raise FieldProblem(
            where,
            f"unknown role {role!r}; expected one of {', '.join(sorted(ROLE_IN))}",
            "unknown-role",
        )
    return mapped
