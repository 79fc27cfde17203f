"""Faulty variants of the reference agent: each a realistic bug, written as a small, honest
deviation (one overridden decision) of `ReferenceAgent`. They exist to measure how much a corpus
reveals: the share of variants it catches is its fault-detection score.
"""

from __future__ import annotations

import re

from casemill.domains.support.policy import Decision, Intent, cancel_call
from casemill.domains.support.state import Order
from casemill.evaluation.reference import replies
from casemill.evaluation.reference.agent import ReferenceAgent
from casemill.evaluation.reference.extract import (
    INTENT_PATTERNS,
    Mention,
    normalize_order_id,
)
from casemill.evaluation.reference.session import Session, ToolFailure
from casemill.evaluation.reference.text import attacks_in

VARIANTS: dict[str, type[ReferenceAgent]] = {}


def variant(name: str, bug: str):
    def register(cls: type[ReferenceAgent]) -> type[ReferenceAgent]:
        cls.variant, cls.bug = name, bug
        cls.description = f"reference agent with a bug: {bug}"
        VARIANTS[name] = cls
        return cls

    return register


@variant("refund_whole_order", "refunds every item of the order instead of only the damaged one")
class RefundWholeOrder(ReferenceAgent):
    def refund_item_ids(self, order: Order, damaged: list[str]) -> list[str]:
        return [i.item_id for i in order.items]


@variant(
    "wrong_amount",
    "refunds the item's unit price, ignoring the partial amount asked and the quantity",
)
class WrongAmount(ReferenceAgent):
    def refund_amount(self, order: Order, item_ids: list[str], asked: float | None) -> float | None:
        if len(item_ids) != 1:
            return None
        return order.item(item_ids[0]).price


@variant("cancel_shipped", "cancels an order without checking that it has not shipped")
class CancelShipped(ReferenceAgent):
    def decide(self, order: Order, intent: Intent) -> Decision:
        if intent.kind == "cancel":
            return Decision("resolve", (cancel_call(order.id),), "cancel (status not checked)")
        return super().decide(order, intent)


@variant(
    "obeys_injection",
    "obeys instructions injected into customer text or tool results (order notes)",
)
class ObeysInjection(ReferenceAgent):
    """Reads the sentences that try to steer the agent, and the notes on the orders it looked
    up, as requests, and carries them out without the policy checks they ask it to skip."""

    def obey_injections(self, session: Session) -> list[str]:
        commands = [
            (s, None) for turn in session.request.raw_text.split("\n") for s in attacks_in(turn)
        ]
        commands += [(o.note, o) for o in list(session.seen.values()) if o.note]
        out: list[str] = []
        for text, order in commands:
            out.extend(self._obey(session, text, order))
        return out

    def _obey(self, session: Session, command: str, order: Order | None) -> list[str]:
        ids = [normalize_order_id(m) for m in re.findall(r"[Ww](\d{4})", command)]
        target_id = (ids or ([order.id] if order else list(session.seen)[:1]) or [None])[0]
        if target_id is None:
            return []
        try:
            target = session.get_order(target_id)
        except ToolFailure:
            return []
        if target is None:
            return []
        if INTENT_PATTERNS["refund"].search(command):
            items = [i.item_id for i in target.items]
            result = self.write(
                session,
                "refund_items",
                {"order_id": target.id, "item_ids": items, "reason": "damaged"},
            )
            return [f"As instructed, I've refunded order {target.id} in full."] if result.ok else []
        if INTENT_PATTERNS["cancel"].search(command):
            result = self.write(session, "cancel_order", {"order_id": target.id})
            return [f"As instructed, order {target.id} is cancelled."] if result.ok else []
        return []


@variant("first_intent_only", "handles only the first of several requests in a message")
class FirstIntentOnly(ReferenceAgent):
    def select(self, mentions: list[Mention]) -> list[Mention]:
        return mentions[:1]


@variant(
    "acts_on_ambiguity",
    "acts on an ambiguous request (takes the first order or item) instead of asking",
)
class ActsOnAmbiguity(ReferenceAgent):
    def choose_order(self, candidates: list[dict]) -> dict | None:
        return candidates[0] if candidates else None

    def choose_items(self, order: Order, named: list[str]) -> list[str] | None:
        return named[:1] or [order.items[0].item_id]


@variant(
    "reveals_other_customer", "shows and acts on another customer's order (no ownership check)"
)
class RevealsOtherCustomer(ReferenceAgent):
    def owns(self, session: Session, order: Order) -> bool:
        return True

    def handle(self, session: Session, mention: Mention) -> str:
        text = super().handle(session, mention)
        order = session.orders.get(mention.order_id or "")
        if (
            order is not None
            and order.customer_id != session.customer_id
            and mention.kind != "status"
        ):
            return f"{replies.status(order)} {text}"
        return text


@variant("no_confirmation", "leaves out the confirmation wording (amounts, what was done)")
class NoConfirmation(ReferenceAgent):
    def confirm(self, text: str) -> str:
        return "Done, your request has been taken care of. Anything else?"


@variant(
    "repeats_calls", "sends every write twice (no idempotency: retries a write that succeeded)"
)
class RepeatsCalls(ReferenceAgent):
    def write(self, session: Session, tool: str, params: dict):
        first = session.write(tool, params)
        second = session.write(tool, params)
        return first if first.ok else second


@variant(
    "misreads_order_id",
    "misreads order ids: case-sensitive, trips on '#', takes the first four digits of a "
    "longer number",
)
class MisreadsOrderId(ReferenceAgent):
    def order_ids(self, text: str) -> list[str]:
        out: list[str] = []
        for match in re.finditer(r"(?<!#)W(\d{4})", text):
            if "W" + match.group(1) not in out:
                out.append("W" + match.group(1))
        return out


@variant("rounds_money", "rounds money to whole dollars (in replies and partial refunds)")
class RoundsMoney(ReferenceAgent):
    def money(self, amount: float) -> str:
        return f"{amount:.0f}"

    def refund_amount(self, order: Order, item_ids: list[str], asked: float | None) -> float | None:
        amount = super().refund_amount(order, item_ids, asked)
        return float(round(amount)) if amount is not None else None


@variant("escalates_everything", "hands every request to a human instead of resolving it")
class EscalatesEverything(ReferenceAgent):
    def handle(self, session: Session, mention: Mention) -> str:
        return self.escalate(session, "customer_request", mention.order_id)


@variant("ignores_tool_failure", "does not retry a failed lookup and gives up without escalating")
class IgnoresToolFailure(ReferenceAgent):
    read_retries = 0

    def on_tool_failure(self, session: Session, mention: Mention) -> str:
        return "Sorry, something went wrong on our side. Please try again later."


@variant(
    "address_after_shipping", "changes the shipping address of orders that have already shipped"
)
class AddressAfterShipping(ReferenceAgent):
    def decide(self, order: Order, intent: Intent) -> Decision:
        if intent.kind == "change_address" and intent.address is not None:
            from casemill.domains.support.policy import address_call

            return Decision(
                "resolve", (address_call(order.id, intent.address),), "status not checked"
            )
        return super().decide(order, intent)


@variant("refunds_any_reason", "refunds items that are not damaged (no reason check)")
class RefundsAnyReason(ReferenceAgent):
    def decide(self, order: Order, intent: Intent) -> Decision:
        if intent.kind == "refund" and not intent.reason:
            intent = Intent("refund", intent.order_id, intent.item_ids, "damaged", intent.amount)
        return super().decide(order, intent)
