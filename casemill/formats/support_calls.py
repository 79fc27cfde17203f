"""Book tool calls <-> support-domain expected calls, and the labels inferred from them.

`TOOL_MAP` maps the book's (and the companion repository's) tool names to support tools;
`issue_refund {order_id, amount}` becomes `refund_items` with the line items the amount pays for
(one item whose total equals the amount, else every item when it equals the order's total, else
a partial refund of the one item the customer names); `modify_order {order_id, shipping_address}`
becomes `change_shipping_address`; a call named without parameters is completed from the order
and the conversation. `export_call` maps back. Every inference is appended to `notes`.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from casemill.case.model import ExpectedCall
from casemill.domains.support.policy import (
    address_call,
    cancel_call,
    escalate_call,
    exchange_call,
    refund_call,
)
from casemill.domains.support.tools import ESCALATION_REASONS, READ_TOOLS, TOOLS_BY_NAME
from casemill.formats.result import FieldProblem
from casemill.formats.support_map import (
    DEFAULT_CUSTOMER_NAME,
    as_amount,
    as_text,
    map_address,
    the_order,
)

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


def refund_reason(text: str) -> str | None:
    low = text.lower()
    return next((reason for word, reason in DAMAGE_REASONS if word in low), None)


def _lines_summing_to(totals: dict[str, float], amount: float) -> list[str] | None:
    """The one set of whole line items whose totals add up to `amount` (the mug and the plates of
    three lines), or None when no set or more than one does."""
    if len(totals) > 12:
        return None
    ids = list(totals)
    found = [
        list(subset)
        for size in range(2, len(ids))
        for subset in itertools.combinations(ids, size)
        if abs(sum(totals[i] for i in subset) - amount) <= 0.005
    ]
    return found[0] if len(found) == 1 else None


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
    summing = _lines_summing_to(totals, amount)
    if summing is not None:
        return summing, None
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
                as_text(params.get("item_id"), f"{where}.params.item_id"),
                as_text(params.get("new_variant_id"), f"{where}.params.new_variant_id"),
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
            None if amount is None else as_amount(amount, f"{where}.params.amount"),
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
    amount = as_amount(params["amount"], f"{where}.params.amount")
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


def infer_outcome(calls: list[ExpectedCall], wording: str, notes: list[str]) -> str:
    writes = [c for c in calls if c.tool not in READ_TOOLS]
    if any(c.tool == "escalate_to_human" for c in writes):
        outcome, why = "escalate", "an escalate_to_human call is expected"
    elif writes:
        outcome, why = "resolve", "write calls are expected"
    elif calls:
        outcome, why = "resolve", "only lookups are expected (a status question)"
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
