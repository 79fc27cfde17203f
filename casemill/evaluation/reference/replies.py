"""What the reference agent says: short, concrete replies in the vocabulary the seeds check
(amounts as `14.50`, `cancelled`, the new city, `exchange`, `human`, `which order` /
`which item`, `cannot` with the policy's reason). A refusal never echoes the words of the action
it refuses in the past tense ("cancelled", "refunded"), and never repeats another customer's
order details or an amount the customer asked for beyond what the policy allows."""

from __future__ import annotations

from collections.abc import Callable

from casemill.domains.support.state import Order

Money = Callable[[float], str]


def money(amount: float) -> str:
    return f"{amount:.2f}"


def item_names(order: Order, item_ids: list[str] | tuple[str, ...]) -> str:
    names = [order.item(i).name for i in item_ids if order.item(i) is not None]
    if len(names) <= 1:
        return "".join(names) or "item"
    return ", ".join(names[:-1]) + " and " + names[-1]


def refunded(order: Order, item_ids: list[str], amount: float, fmt: Money = money) -> str:
    return (
        f"I've refunded {fmt(amount)} for the {item_names(order, item_ids)} on order {order.id}; "
        "the refund goes back to your original payment method."
    )


def cancelled(order: Order, refund: float | None, fmt: Money = money) -> str:
    back = (
        f" The {fmt(refund)} you paid goes back to your original payment method." if refund else ""
    )
    return f"Order {order.id} is now cancelled.{back}"


def address_changed(order: Order, address: dict) -> str:
    where = ", ".join(
        p for p in (address.get("street1"), address.get("street2"), address.get("city")) if p
    )
    tail = " ".join(p for p in (address.get("state"), address.get("zip")) if p)
    return f"Done: order {order.id} will now ship to {where}{', ' + tail if tail else ''}."


def exchanged(order: Order, item_id: str, new_variant_id: str) -> str:
    return (
        f"I've set up an exchange on order {order.id}: your {item_names(order, [item_id])} "
        f"will be replaced with variant {new_variant_id}."
    )


def escalated(reason: str) -> str:
    if reason == "tool_failure":
        return (
            "I'm sorry, our order system is not answering right now, so I cannot finish this "
            "myself. "
            "I've passed your request to a human agent who will follow up with you."
        )
    return "I've passed your request to a human agent, who will get back to you shortly."


def status(order: Order) -> str:
    items = item_names(order, [i.item_id for i in order.items])
    when = (
        f" on {order.delivered_at[:10]}"
        if order.status == "delivered" and order.delivered_at
        else ""
    )
    return f"Order {order.id} ({items}) is {order.status}{when}."


def listed_status(listed: dict) -> str:
    items = ", ".join(listed.get("items") or [])
    return f"Your order {listed['order_id']} ({items}) is {listed.get('status')}."


def which_order(candidates: list[dict]) -> str:
    listed = "; ".join(f"{o['order_id']} ({', '.join(o.get('items') or [])})" for o in candidates)
    if not candidates:
        return "Which order is this about? Please send me the order id (it looks like W1001)."
    return f"Which order do you mean? I see these on your account: {listed}."


def order_not_found(order_id: str) -> str:
    return (
        f"I could not find an order {order_id} on file. Which order do you mean? "
        "Please check the order id (it looks like W1001)."
    )


def which_item(order: Order, item_ids: list[str] | None = None) -> str:
    ids = item_ids or [i.item_id for i in order.items]
    names = item_names(order, ids).replace(" and ", " or the ")
    return f"Which item of order {order.id} do you mean: the {names}?"


def which_variant(order: Order, item_id: str) -> str:
    return (
        f"Which size or colour would you like the {item_names(order, [item_id])} from order "
        f"{order.id} in? Please tell me the variant you want for the exchange."
    )


def ask_address(order: Order) -> str:
    return (
        f"What is the new shipping address for order {order.id}? Please include the street, "
        "city, state and ZIP code."
    )


CHANGE_WORDS = {
    "refund": "refund an item",
    "exchange": "exchange an item",
    "change_address": "change its shipping address",
}


def which_change(order_id: str | None, others: tuple[str, ...]) -> str:
    """Cancel and another change of the same order: ask which one."""
    other = " or ".join(CHANGE_WORDS[k] for k in others) or "change it"
    return (
        f"Do you want me to cancel order {order_id}, or to {other}? I cannot do both on the same "
        "order, so which one would you like?"
    )


def not_your_order(order_id: str) -> str:
    return (
        f"I'm sorry, I cannot share or change order {order_id}: it is not an order on your "
        "account. "
        "Which order of yours can I help with?"
    )


def refuse(
    kind: str, order: Order, why: str, item_ids: tuple[str, ...] = (), fmt: Money = money
) -> str:
    """A refusal with the policy's reason, in the customer's terms."""
    shipped = "been delivered" if order.status == "delivered" else order.status
    if kind == "cancel":
        if order.status == "cancelled":
            return f"Order {order.id} is already cancelled, so there is nothing more to do."
        return (
            f"I cannot cancel order {order.id} because it has already {shipped}; only orders "
            "that have not shipped yet can be stopped."
        )
    if kind == "change_address":
        return (
            f"I cannot change the shipping address of order {order.id} because it has already "
            f"{shipped}."
        )
    if kind == "exchange":
        return f"I cannot make that exchange on order {order.id}: {why}."
    names = item_names(order, list(item_ids))
    if "only delivered" in why:
        return (
            f"I cannot refund items from order {order.id} while it is {order.status}; refunds "
            "are for delivered orders."
        )
    if "does not qualify" in why:
        return (
            f"I cannot refund the {names}: refunds are only for items that arrived damaged, "
            "defective, wrong or missing."
        )
    if "already refunded" in why:
        return f"I cannot refund the {names} again: it was already refunded in full."
    if "above what is left" in why and len(item_ids) == 1:
        item = order.item(item_ids[0])
        left = item.total - order.refunded_for(item.item_id) if item else 0.0
        return f"I cannot refund more than the {fmt(left)} that is left to refund for the {names}."
    return f"I cannot refund that: {why}."


def nothing_to_refund_yet(order: Order) -> str:
    return (
        f"Order {order.id} is {order.status} and has not shipped yet, so there is nothing to "
        "refund. "
        "Would you like me to cancel it instead?"
    )


FALLBACK = (
    "I'm sorry, I could not tell what you need. Which order is this about, and what would you like "
    "me to do (refund a damaged item, cancel, change the address, exchange, or check the status)?"
)
