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

Tools are mapped by `TOOL_MAP` (book name -> support tool); `issue_refund {order_id, amount}`
becomes `refund_items` with the line items the amount pays for, `modify_order {order_id,
shipping_address}` becomes `change_shipping_address`. Every inference is appended to `notes`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from casemill.case.model import ExpectedCall, Turn
from casemill.domains.support.policy import (
    address_call,
    cancel_call,
    escalate_call,
    exchange_call,
    refund_call,
)
from casemill.domains.support.tools import ESCALATION_REASONS, READ_TOOLS, TOOLS_BY_NAME
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
# book / companion tool name -> support tool name
TOOL_MAP: dict[str, str] = {
    "issue_refund": "refund_items",
    "refund_order": "refund_items",
    "refund_items": "refund_items",
    "cancel_order": "cancel_order",
    "modify_order": "change_shipping_address",
    "update_shipping_address": "change_shipping_address",
    "change_shipping_address": "change_shipping_address",
    "exchange_item": "exchange_item",
    "escalate_to_human": "escalate_to_human",
    "transfer_to_human": "escalate_to_human",
    "get_order": "get_order",
    "lookup_order": "get_order",
    "get_order_status": "get_order",
    "get_order_details": "get_order",
    "list_customer_orders": "list_customer_orders",
    "get_customer": "get_customer",
}
# support tool -> the book's name, for export
TOOL_OUT: dict[str, str] = {
    "refund_items": "issue_refund",
    "change_shipping_address": "modify_order",
    "cancel_order": "cancel_order",
    "exchange_item": "exchange_item",
    "escalate_to_human": "escalate_to_human",
    "get_order": "get_order",
    "list_customer_orders": "list_customer_orders",
    "get_customer": "get_customer",
}
INTENT_OF: dict[str, str] = {
    "refund_items": "refund",
    "cancel_order": "cancel",
    "change_shipping_address": "change_address",
    "exchange_item": "exchange",
    "escalate_to_human": "escalate",
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
DAMAGE_REASONS: tuple[tuple[str, str], ...] = (
    ("defective", "defective"),
    ("wrong", "wrong_item"),
    ("missing", "missing"),
    ("cracked", "damaged"),
    ("broken", "damaged"),
    ("shattered", "damaged"),
    ("damaged", "damaged"),
)
ORDER_ID_RE = re.compile(r"#?\b([A-Z]\d{4,})\b", re.IGNORECASE)
ADDRESS_RE = re.compile(
    r"(?P<street1>\d+\s+[A-Za-z0-9 .'-]+?\s"
    r"(?:St|Street|Rd|Road|Ave|Avenue|Blvd|Dr|Drive|Ln|Lane|Way|Ct|Pl)\.?)"
    r",?\s+(?P<city>[A-Za-z .'-]+?),?\s+(?:(?P<state>[A-Z]{2})\s+)?(?P<zip>\d{5})\b"
)


def _num(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FieldProblem(field, f"expected a number, got {type(value).__name__} {value!r}")
    if value < 0:
        raise FieldProblem(field, f"expected a non-negative amount, got {value}")
    return round(float(value), 2)


def _text(value: Any, field: str, *, required: bool = True) -> str:
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
            "item_id": _text(item.get("item_id", f"I{n + 1}"), f"{at}.item_id"),
            "name": _text(item.get("name"), f"{at}.name"),
            "price": _num(price, f"{at}.unit_price"),
            "quantity": qty,
        }
        sku = item.get("sku", item.get("product_id"))
        if sku is not None:
            line["product_id"] = _text(sku, f"{at}.sku")
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
        _text(address.get(key), f"{where}.{key}")
    for key, item in address.items():
        _text(item, f"{where}.{key}", required=False)
    name = value.get("name")
    return address, (name if isinstance(name, str) and name.strip() else None)


def map_order(order: Any, notes: list[str], *, where: str = "order") -> dict[str, Any]:
    """The support state for one book order (see the module's table)."""
    if not isinstance(order, dict):
        raise FieldProblem(where, f"expected an order object, got {type(order).__name__}")
    status_raw = _text(order.get("status"), f"{where}.status")
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
    order_id = _text(order_id, f"{where}.order_id").strip().lstrip("#")
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
            out[key] = _text(order[key], f"{where}.{key}")
    paid = round(sum(i["price"] * i["quantity"] for i in items), 2)
    if (
        order.get("total") is not None
        and abs(_num(order["total"], f"{where}.total") - paid) > 0.005
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
        mapped = role_of(role, f"{at}.role")
        out.append(
            Turn(
                role=mapped,
                content=content,
                tool_call_id=turn.get("tool_call_id") if mapped == "tool" else None,
            )
        )  # type: ignore[arg-type]
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


# -- calls --------------------------------------------------------------------------------------
def refund_reason(text: str) -> str | None:
    low = text.lower()
    return next((reason for word, reason in DAMAGE_REASONS if word in low), None)


def _items_for_amount(
    order: dict[str, Any], amount: float, text: str
) -> tuple[list[str], float | None]:
    items = order["items"]
    totals = {i["item_id"]: round(i["price"] * i["quantity"], 2) for i in items}
    exact = [i for i, t in totals.items() if abs(t - amount) <= 0.005]
    if len(exact) == 1:
        return exact, None
    if abs(sum(totals.values()) - amount) <= 0.005:
        return list(totals), None
    low = text.lower()
    named = [
        i["item_id"]
        for i in items
        if any(w in low for w in re.findall(r"[a-z]{3,}", i["name"].lower()))
    ]
    pool = named if len(named) == 1 else ([items[0]["item_id"]] if len(items) == 1 else [])
    if pool and amount < totals[pool[0]] + 0.005:
        return pool, amount
    raise FieldProblem(
        "params.amount", f"cannot tell which line items a refund of {amount:.2f} pays for"
    )


def support_call(
    name: str, params: Any, state: dict[str, Any], text: str, notes: list[str], where: str
) -> list[ExpectedCall]:
    """The support call(s) for one book call; `params` None when the source names the tool only."""
    tool = TOOL_MAP[name]
    order = the_order(state)
    if params is not None and not isinstance(params, dict):
        raise FieldProblem(
            f"{where}.params", f"expected an object of arguments, got {type(params).__name__}"
        )
    params = dict(params or {})
    order_id = params.get("order_id", order["id"])
    if str(order_id).strip().lstrip("#").upper() != order["id"].upper():
        raise FieldProblem(
            f"{where}.params.order_id",
            f"order {order_id!r} is not the case's order {order['id']!r}",
            "missing-id",
        )
    if tool == "refund_items":
        return [_refund(name, params, order, text, notes, where)]
    if tool == "cancel_order":
        return [cancel_call(order["id"])]
    if tool == "change_shipping_address":
        return [_address(params, text, notes, where, order["id"])]
    if tool == "exchange_item":
        return [
            exchange_call(
                order["id"],
                _text(params.get("item_id"), f"{where}.params.item_id"),
                _text(params.get("new_variant_id"), f"{where}.params.new_variant_id"),
            )
        ]
    if tool == "escalate_to_human":
        reason = params.get("reason", "customer_request")
        if reason not in ESCALATION_REASONS:
            notes.append(
                f"escalation reason {reason!r} is not a support reason; customer_request used"
            )
            reason = "customer_request"
        return [escalate_call(reason, order["id"] if "order_id" in params else None)]
    spec_params = TOOLS_BY_NAME[tool]["function"]["parameters"]["properties"]
    kept = {k: v for k, v in params.items() if k in spec_params}
    if tool == "get_order":
        kept["order_id"] = order["id"]
    return [ExpectedCall(tool=tool, params=kept)]


def _refund(
    name: str,
    params: dict[str, Any],
    order: dict[str, Any],
    text: str,
    notes: list[str],
    where: str,
) -> ExpectedCall:
    reason = params.get("reason") or refund_reason(text)
    if reason is None:
        reason = "damaged"
        notes.append("refund reason not stated; 'damaged' assumed")
    if params.get("item_ids"):
        amount = params.get("amount")
        return refund_call(
            order["id"],
            list(params["item_ids"]),
            reason,
            None if amount is None else _num(amount, f"{where}.params.amount"),
        )
    if params.get("amount") is None:
        damaged = [
            i["item_id"]
            for i in order["items"]
            if refund_reason(text)
            and any(w in text.lower() for w in re.findall(r"[a-z]{3,}", i["name"].lower()))
        ]
        item_ids = damaged or [i["item_id"] for i in order["items"]]
        notes.append(f"{name} names no amount: refund of {', '.join(item_ids)} in full inferred")
        return refund_call(order["id"], item_ids, reason)
    amount = _num(params["amount"], f"{where}.params.amount")
    try:
        item_ids, partial = _items_for_amount(order, amount, text)
    except FieldProblem as exc:
        raise FieldProblem(f"{where}.params.amount", exc.message) from None
    notes.append(
        f"{name} of {amount:.2f} mapped to refund_items of {', '.join(item_ids)}"
        + (" (partial)" if partial else "")
    )
    return refund_call(order["id"], item_ids, reason, partial)


def _address(
    params: dict[str, Any], text: str, notes: list[str], where: str, order_id: str
) -> ExpectedCall:
    raw = params.get("shipping_address", params.get("address"))
    if raw is None:
        found = ADDRESS_RE.search(text)
        if not found:
            raise FieldProblem(
                f"{where}.params.shipping_address",
                "no new address given, and none could be read from the conversation",
            )
        raw = {k: v for k, v in found.groupdict().items() if v}
        notes.append(f"new address read from the conversation: {', '.join(raw.values())}")
    address, _ = map_address(raw, f"{where}.params.shipping_address")
    return address_call(order_id, address)


def export_call(call: ExpectedCall, state: dict[str, Any]) -> dict[str, Any]:
    """`{tool, params}` in the book's vocabulary for one support expected call."""
    tool = TOOL_OUT.get(call.tool, call.tool)
    params = dict(call.params)
    if call.tool == "refund_items":
        order = (state.get("orders") or {}).get(str(params.get("order_id", "")).lstrip("#"))
        amount = params.get("amount")
        if amount is None and order is not None:
            wanted = set(params.get("item_ids") or [])
            amount = round(
                sum(
                    i["price"] * i.get("quantity", 1)
                    for i in order["items"]
                    if i["item_id"] in wanted
                ),
                2,
            )
        params = {"order_id": params.get("order_id"), "amount": amount}
    elif call.tool == "change_shipping_address":
        order = (state.get("orders") or {}).get(str(params.get("order_id", "")).lstrip("#"), {})
        customer = (state.get("customers") or {}).get(order.get("customer_id"), {})
        name = customer.get("name")
        head = {"name": name} if name and name != DEFAULT_CUSTOMER_NAME else {}
        params = {
            "order_id": params.get("order_id"),
            "shipping_address": {**head, **params.get("address", {})},
        }
    elif call.tool == "escalate_to_human":
        params = {k: v for k, v in params.items() if k != "summary" or v}
    return {"tool": tool, "params": params}


# -- labels -------------------------------------------------------------------------------------
def infer_outcome(calls: list[ExpectedCall], wording: str, notes: list[str]) -> str:
    writes = [c for c in calls if c.tool not in READ_TOOLS]
    if any(c.tool == "escalate_to_human" for c in writes):
        outcome, why = "escalate", "an escalate_to_human call is expected"
    elif writes:
        outcome, why = "resolve", "write calls are expected"
    elif re.search(
        r"\b(cannot|can't|can not|unable|not able|not eligible|policy)\b", wording.lower()
    ):
        outcome, why = "refuse", "no write call, and the expected wording refuses"
    else:
        outcome, why = "clarify", "no write call, and the expected wording does not refuse"
    notes.append(f"outcome '{outcome}' inferred: {why}")
    return outcome


def optimal_steps(calls: list[ExpectedCall], customer_text: str) -> int:
    """Reads a good agent needs + writes + 1 for the final reply."""
    writes = [c for c in calls if c.tool not in READ_TOOLS]
    reads = [c for c in calls if c.tool in READ_TOOLS]
    needed = len(reads)
    if writes and not any(c.tool == "get_order" for c in reads):
        needed += 1 if ORDER_ID_RE.search(customer_text) else 2
    return needed + len(writes) + 1


def intents(calls: list[ExpectedCall]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(INTENT_OF[c.tool] for c in calls if c.tool in INTENT_OF)) or (
        "status",
    )


def intents_of_dumped(calls: list[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(INTENT_OF[c["tool"]] for c in calls if c["tool"] in INTENT_OF)) or (
        "status",
    )


def no_write_rule(outcome: str) -> list[dict[str, Any]]:
    """Cases whose right move is to ask or to refuse forbid every write."""
    if outcome not in ("clarify", "refuse"):
        return []
    return [{"any_write": True, "reason": f"the right outcome is '{outcome}': no write call"}]
