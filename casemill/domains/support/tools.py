"""Tool specifications of the support domain, as OpenAI function definitions (JSON Schema
parameters): exactly what a tool-calling model receives."""

from __future__ import annotations

from typing import Any

_ADDRESS = {
    "type": "object",
    "properties": {
        "street1": {"type": "string", "minLength": 1},
        "street2": {"type": "string"},
        "city": {"type": "string", "minLength": 1},
        "state": {"type": "string"},
        "zip": {"type": "string", "minLength": 1},
        "country": {"type": "string"},
    },
    "required": ["street1", "city", "zip"],
    "additionalProperties": False,
}

REFUND_REASONS = ("damaged", "defective", "wrong_item", "missing")
ESCALATION_REASONS = (
    "customer_request",
    "policy_exception",
    "tool_failure",
    "safety",
    "out_of_scope",
)


def _fn(name: str, description: str, properties: dict, required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


_ORDER_ID = {"type": "string", "minLength": 1, "description": "order id, e.g. W1001"}

TOOL_SPECS: tuple[dict[str, Any], ...] = (
    _fn(
        "get_order",
        "Look up one order: status, line items with prices, address, refunds, notes.",
        {"order_id": _ORDER_ID},
        ["order_id"],
    ),
    _fn(
        "list_customer_orders",
        "List the ids and statuses of a customer's orders, by customer id or email.",
        {"customer_id": {"type": "string"}, "email": {"type": "string"}},
        [],
    ),
    _fn(
        "get_customer",
        "Look up a customer profile by customer id.",
        {"customer_id": {"type": "string", "minLength": 1}},
        ["customer_id"],
    ),
    _fn(
        "refund_items",
        "Refund line items of a delivered order. Only damaged, defective, wrong or missing "
        "items qualify. Without 'amount' each item is refunded in full; with it, a partial "
        "refund of that amount in total.",
        {
            "order_id": _ORDER_ID,
            "item_ids": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "reason": {"type": "string", "enum": list(REFUND_REASONS)},
            "amount": {"type": "number", "exclusiveMinimum": 0},
        },
        ["order_id", "item_ids", "reason"],
    ),
    _fn(
        "cancel_order",
        "Cancel an order that has not shipped yet (pending or processing).",
        {"order_id": _ORDER_ID, "reason": {"type": "string"}},
        ["order_id"],
    ),
    _fn(
        "change_shipping_address",
        "Change the shipping address of an order that has not shipped yet.",
        {"order_id": _ORDER_ID, "address": _ADDRESS},
        ["order_id", "address"],
    ),
    _fn(
        "exchange_item",
        "Exchange a delivered item for another available variant of the same product at the "
        "same price.",
        {
            "order_id": _ORDER_ID,
            "item_id": {"type": "string", "minLength": 1},
            "new_variant_id": {"type": "string", "minLength": 1},
        },
        ["order_id", "item_id", "new_variant_id"],
    ),
    _fn(
        "escalate_to_human",
        "Hand the conversation to a human agent with a short summary.",
        {
            "reason": {"type": "string", "enum": list(ESCALATION_REASONS)},
            "summary": {"type": "string"},
            "order_id": {"type": "string"},
        },
        ["reason", "summary"],
    ),
)

TOOLS_BY_NAME: dict[str, dict[str, Any]] = {t["function"]["name"]: t for t in TOOL_SPECS}
READ_TOOLS: frozenset[str] = frozenset({"get_order", "list_customer_orders", "get_customer"})
WRITE_TOOLS: frozenset[str] = frozenset(TOOLS_BY_NAME) - READ_TOOLS
