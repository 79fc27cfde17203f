"""Tool specifications of the tau2-bench retail domain, inferred from the tasks' expected actions.

tau2's retail tools are not Casemill's support tools: their names, parameters and state differ.
Rather than guess at signatures, `infer_tool_specs` reads the actions the benchmark's tasks expect
(`evaluation_criteria.actions`) and writes one OpenAI function definition per tool name: every
parameter seen, with the JSON types seen for it, required when every call passes it, nothing else
allowed. The result for the published 114 tasks is committed as `tools.json` beside this module
(a test regenerates it from ../shared/data and fails on drift), so the domain needs no data file.

Read or write follows the benchmark's naming: `get_`, `find_`, `list_`, `search_`, `calculate`
and `think` only read; every other tool changes the database.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from casemill.domains.recorded import READ_PREFIXES as READ_PREFIXES  # re-exported
from casemill.domains.recorded import is_read_tool as is_read_tool  # re-exported

TOOLS_FILE = Path(__file__).with_name("tools.json")
# What each tool does, in the words of the retail policy (the signature itself is inferred).
PURPOSE: dict[str, str] = {
    "calculate": "Evaluate an arithmetic expression (numbers, + - * / and parentheses).",
    "cancel_pending_order": "Cancel a pending order; reason 'no longer needed' or 'ordered by "
    "mistake'. The payments are refunded.",
    "exchange_delivered_order_items": "Exchange items of a delivered order for other available "
    "variants of the same products; the price difference is paid or refunded with the payment "
    "method given.",
    "find_user_id_by_email": "Find a user id by e-mail address.",
    "find_user_id_by_name_zip": "Find a user id by first name, last name and zip code.",
    "get_item_details": "Look up one item (a product variant) by item id.",
    "get_order_details": "Look up an order: status, items, address, fulfilments, payments.",
    "get_product_details": "Look up a product and its variants by product id.",
    "get_user_details": "Look up a user profile: name, address, e-mail, payment methods, orders.",
    "modify_pending_order_address": "Change the shipping address of a pending order.",
    "modify_pending_order_items": "Change items of a pending order to other available variants "
    "of the same products (once per order); the difference is paid or refunded.",
    "modify_pending_order_payment": "Change the payment method of a pending order.",
    "modify_user_address": "Change a user's default address.",
    "return_delivered_order_items": "Return items of a delivered order; the refund goes to the "
    "original payment method or an existing gift card.",
    "transfer_to_human_agents": "Transfer the user to a human agent, with a summary.",
}


def json_type(value: Any) -> str:
    """The JSON Schema type name of a JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _param_schema(values: list[Any]) -> dict[str, Any]:
    types = sorted({json_type(v) for v in values})
    schema: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
    if types == ["array"]:
        item_types = sorted({json_type(i) for v in values for i in v})
        if len(item_types) == 1:
            schema["items"] = {"type": item_types[0]}
        elif item_types:
            schema["items"] = {"type": item_types}
    return schema


def infer_tool_specs(actions: Iterable[Mapping[str, Any]]) -> tuple[dict[str, Any], ...]:
    """One function definition per tool name seen in `actions` (`{name, arguments}` dicts),
    sorted by name."""
    calls: dict[str, list[Mapping[str, Any]]] = {}
    for action in actions:
        calls.setdefault(str(action["name"]), []).append(action.get("arguments") or {})
    specs = []
    for name in sorted(calls):
        seen = calls[name]
        params = sorted({p for args in seen for p in args})
        properties = {p: _param_schema([a[p] for a in seen if p in a]) for p in params}
        required = [p for p in params if all(p in a for a in seen)]
        kind = "Reads" if is_read_tool(name) else "Changes the database"
        specs.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": (
                        f"{PURPOSE.get(name, 'tau2-bench retail tool.')} {kind} (signature "
                        f"inferred from {len(seen)} expected calls)."
                    ),
                    "parameters": {
                        "type": "object",
                        "properties": properties,
                        "required": required,
                        "additionalProperties": False,
                    },
                },
            }
        )
    return tuple(specs)


def task_actions(tasks: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Every expected action of every task (tau2 `tasks.json` shape)."""
    out: list[Mapping[str, Any]] = []
    for task in tasks:
        criteria = task.get("evaluation_criteria") or {}
        out.extend(criteria.get("actions") or [])
    return out


def load_tool_specs(path: Path = TOOLS_FILE) -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(path.read_text(encoding="utf-8")))


def dump_tool_specs(specs: Iterable[dict[str, Any]]) -> str:
    return json.dumps(list(specs), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
