"""The support policy as executable rules.

Two uses, one source of truth:
- the `check_*` functions say whether a write is allowed on the current state; the simulated
  tools refuse a write they forbid with a domain error, so replaying a case's expected calls
  checks them against the policy;
- `decide` turns a customer intent and a state into the correct outcome and expected calls; the
  generators use it to recompute labels after an outcome flip, the reference agent to act.

The rules, in words:
1. Refund only items of a delivered order that arrived damaged, defective, wrong or missing, and
   never more than was paid for them, less what was already refunded. Partial refunds name one
   item.
2. Cancel only orders that have not shipped (pending or processing).
3. Change the shipping address only on orders that have not shipped.
4. Exchange a delivered item only for an available variant of the same product, same price.
5. When the order or the item cannot be told apart from another, ask (clarify) before writing.
6. Escalate to a human when the customer asks for one, when a tool keeps failing, or when a
   request needs an exception the policy does not allow the agent to make.
7. Two requests on one order that are each possible but exclude each other (cancel it or change
   it; refund an item or exchange it) are not both done: ask which one (`conflict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from casemill.case.model import ExpectedCall, ParamRule
from casemill.domains.support.state import NOT_YET_SHIPPED, Order, SupportState
from casemill.domains.support.tools import REFUND_REASONS

MONEY_TOLERANCE = 0.01

IntentKind = Literal["refund", "cancel", "change_address", "exchange", "escalate", "status"]
INTENT_KINDS: tuple[str, ...] = (
    "refund",
    "cancel",
    "change_address",
    "exchange",
    "escalate",
    "status",
)


def check_refund(
    order: Order, item_ids: list[str], reason: str, amount: float | None
) -> str | None:
    if order.status != "delivered":
        return f"order {order.id} is {order.status}; only delivered orders can be refunded"
    if reason not in REFUND_REASONS:
        return f"refund reason {reason!r} does not qualify; allowed: {', '.join(REFUND_REASONS)}"
    if len(set(item_ids)) != len(item_ids):
        return "the same item is named twice"
    for item_id in item_ids:
        if order.item(item_id) is None:
            return f"order {order.id} has no item {item_id}"
    if amount is not None and len(item_ids) != 1:
        return "a partial refund (with amount) names exactly one item"
    for item_id in item_ids:
        item = order.item(item_id)
        remaining = round(item.total - order.refunded_for(item_id), 2)
        want = amount if amount is not None else item.total
        if remaining <= 0:
            return f"item {item_id} was already refunded in full"
        if round(want, 2) > remaining:  # to the cent: never more than was paid
            return (
                f"refund of {want:.2f} for item {item_id} is above what is left to refund "
                f"({remaining:.2f} of {item.total:.2f} paid)"
            )
    return None


def check_cancel(order: Order) -> str | None:
    if order.status not in NOT_YET_SHIPPED:
        return f"order {order.id} is {order.status}; only pending or processing orders can be cancelled"
    return None


def check_address_change(order: Order) -> str | None:
    if order.status not in NOT_YET_SHIPPED:
        return f"order {order.id} is {order.status}; the address can only change before shipping"
    return None


def check_exchange(
    state: SupportState, order: Order, item_id: str, new_variant_id: str
) -> str | None:
    if order.status != "delivered":
        return f"order {order.id} is {order.status}; only delivered items can be exchanged"
    item = order.item(item_id)
    if item is None:
        return f"order {order.id} has no item {item_id}"
    product = state.products.get(item.product_id or "")
    if product is None:
        return f"item {item_id} has no product on file to exchange within"
    variant = product.variant(new_variant_id)
    if variant is None:
        return f"variant {new_variant_id} is not a variant of {product.name}"
    if new_variant_id == order.variant_of(item):  # (after an exchange: the variant it gave)
        return f"item {item_id} already is variant {new_variant_id}"
    if not variant.available:
        return f"variant {new_variant_id} is out of stock"
    if abs(variant.price - item.price) > MONEY_TOLERANCE:
        return "exchanges are only for a variant at the same price"
    return None


@dataclass(frozen=True)
class Intent:
    """What a customer asks for, with its slots."""

    kind: IntentKind
    order_id: str | None = None
    item_ids: tuple[str, ...] = ()
    reason: str | None = None
    amount: float | None = None
    address: dict | None = None
    new_variant_id: str | None = None


@dataclass(frozen=True)
class Decision:
    outcome: Literal["resolve", "clarify", "refuse", "escalate"]
    calls: tuple[ExpectedCall, ...] = ()
    why: str = ""
    phrases: tuple[str, ...] = field(default=())


ORDER_RULE = ParamRule(kind="id")
ITEMS_RULE = ParamRule(kind="set", ids=True)
MONEY_RULE = ParamRule(kind="number", tolerance=MONEY_TOLERANCE)
ANY_RULE = ParamRule(kind="any")


def refund_call(
    order_id: str, item_ids: list[str], reason: str, amount: float | None = None
) -> ExpectedCall:
    params: dict = {"order_id": order_id, "item_ids": list(item_ids), "reason": reason}
    match = {"order_id": ORDER_RULE, "item_ids": ITEMS_RULE, "reason": ANY_RULE}
    if amount is not None:
        params["amount"] = round(amount, 2)
        match["amount"] = MONEY_RULE
    return ExpectedCall(tool="refund_items", params=params, match=match)


def cancel_call(order_id: str) -> ExpectedCall:
    return ExpectedCall(
        tool="cancel_order", params={"order_id": order_id}, match={"order_id": ORDER_RULE}
    )


def address_call(order_id: str, address: dict) -> ExpectedCall:
    return ExpectedCall(
        tool="change_shipping_address",
        params={"order_id": order_id, "address": address},
        match={"order_id": ORDER_RULE},
    )


def exchange_call(order_id: str, item_id: str, new_variant_id: str) -> ExpectedCall:
    return ExpectedCall(
        tool="exchange_item",
        params={"order_id": order_id, "item_id": item_id, "new_variant_id": new_variant_id},
        match={
            "order_id": ORDER_RULE,
            "item_id": ParamRule(kind="id"),
            "new_variant_id": ParamRule(kind="id"),
        },
    )


def escalate_call(reason: str = "customer_request", order_id: str | None = None) -> ExpectedCall:
    params: dict = {"reason": reason, "summary": ""}
    match = {"reason": ANY_RULE, "summary": ANY_RULE}
    if order_id:
        params["order_id"] = order_id
        match["order_id"] = ORDER_RULE
    return ExpectedCall(tool="escalate_to_human", params=params, match=match)


def intent_of(call: ExpectedCall) -> Intent | None:
    """The customer intent an expected write call fulfils."""
    p = call.params
    oid = str(p.get("order_id", "")).lstrip("#").upper() or None
    if call.tool == "refund_items":
        items = tuple(p.get("item_ids") or ())
        return Intent("refund", oid, items, p.get("reason"), p.get("amount"))
    if call.tool == "cancel_order":
        return Intent("cancel", oid)
    if call.tool == "change_shipping_address":
        return Intent("change_address", oid, address=dict(p.get("address") or {}))
    if call.tool == "exchange_item":
        return Intent("exchange", oid, (p.get("item_id"),), new_variant_id=p.get("new_variant_id"))
    if call.tool == "escalate_to_human":
        return Intent("escalate", oid)
    return None


def blocked(state: SupportState, intent: Intent) -> str | None:
    """Why the policy refuses a write of `intent`'s kind on its order whatever else the
    customer says (the order's status), or None when such a write is possible."""
    order = state.orders.get(intent.order_id or "")
    if order is None:
        return f"there is no order {intent.order_id}"
    if intent.kind == "cancel":
        return check_cancel(order)
    if intent.kind == "change_address":
        return check_address_change(order)
    if intent.kind in ("refund", "exchange") and order.status != "delivered":
        return f"order {order.id} is {order.status}; only delivered orders take a {intent.kind}"
    return None


def conflict(state: SupportState, first: Intent, second: Intent) -> str | None:
    """Why `first` and `second` exclude each other, or None when they do not.

    Two writes on one order conflict when each is possible on its own but not both: a
    cancelled order takes no other change, and one item is refunded or exchanged, not both.
    A write the policy refuses on its own conflicts with nothing (it is simply refused)."""
    if blocked(state, first) or blocked(state, second):
        return None
    return exclusive(first, second)


def exclusive(first: Intent, second: Intent) -> str | None:
    """Why `first` and `second` cannot both be done, whatever the order's state: a cancelled
    order takes no other change, one item is refunded or exchanged, not both (None: they can)."""
    kinds = {first.kind, second.kind}
    if first.order_id != second.order_id or len(kinds) == 1 or kinds & {"escalate", "status"}:
        return None
    if "cancel" in kinds:
        return f"order {first.order_id} cannot be cancelled and changed too: ask which one"
    same_items = set(first.item_ids) & set(second.item_ids)
    if kinds == {"refund", "exchange"} and same_items:
        return "an item is refunded or exchanged, not both: ask which one"
    return None


def decide(state: SupportState, intent: Intent) -> Decision:
    """The correct outcome and expected write calls for one intent on `state`."""
    if intent.kind == "escalate":
        return Decision(
            "escalate",
            (escalate_call("customer_request", intent.order_id),),
            "customer asked for a human",
        )
    order = state.orders.get(intent.order_id or "")
    if order is None:
        return Decision("clarify", (), "the order cannot be identified; ask for the order id")
    if intent.kind == "status":
        return Decision(
            "resolve", (), "a status question needs a lookup, no write", (order.status,)
        )
    if intent.kind == "cancel":
        why = check_cancel(order)
        if why:
            return Decision("refuse", (), why)
        return Decision("resolve", (cancel_call(order.id),), "not shipped yet: cancel", ("cancel",))
    if intent.kind == "change_address":
        why = check_address_change(order)
        if why or intent.address is None:
            return Decision("refuse" if why else "clarify", (), why or "ask for the new address")
        return Decision(
            "resolve",
            (address_call(order.id, intent.address),),
            "not shipped yet: change address",
            ("address",),
        )
    if intent.kind == "exchange":
        if not intent.item_ids or intent.new_variant_id is None:
            return Decision("clarify", (), "ask which item and which variant")
        why = check_exchange(state, order, intent.item_ids[0], intent.new_variant_id)
        if why:
            return Decision("refuse", (), why)
        return Decision(
            "resolve",
            (exchange_call(order.id, intent.item_ids[0], intent.new_variant_id),),
            "exchange allowed",
            ("exchange",),
        )
    # refund
    if not intent.item_ids:
        return Decision("clarify", (), "ask which item is affected")
    if order.status in NOT_YET_SHIPPED:
        return Decision(
            "clarify",
            (),
            f"order is {order.status}: nothing to refund yet; offer to cancel instead",
        )
    why = check_refund(order, list(intent.item_ids), intent.reason or "", intent.amount)
    if why:
        return Decision("refuse", (), why)
    call = refund_call(order.id, list(intent.item_ids), intent.reason or "damaged", intent.amount)
    return Decision("resolve", (call,), "qualifying refund", ("refund",))
