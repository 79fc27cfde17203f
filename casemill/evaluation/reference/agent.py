"""The reference agent for the support domain: deterministic, policy-following, no LLM.

It is honestly simple. It reads the whole conversation with regexes and keyword lists
(`extract.py`): the signed-in customer from the system turn, order ids, intents and their slots
(items named by a word of their name, damage words, an amount asked for, an address, a size or
colour). It looks orders up with the tools (`get_order`; `list_customer_orders` when no order id
is given: one candidate order -> it, several -> it asks which order), checks that the order is
the customer's own (another customer's order is neither shown nor changed), and decides with the
domain's executable policy (`casemill.domains.support.policy.decide`). Instructions found in the
customer's text or in tool results (an order's `note`) are data: it never obeys them. A read that
fails is retried once; a tool that keeps failing is escalated with reason `tool_failure`.

What it cannot do: understand paraphrases its keyword lists miss, resolve long coreference,
negotiate, or hold a conversation beyond the turns it is given. That is on purpose: it is the
baseline the faulty variants deviate from, and an offline agent for the pipeline.

Each step of the flow is a method, so that a faulty variant (`variants.py`) is a small subclass
overriding one decision.
"""

from __future__ import annotations

from casemill.case.ids import short_hash
from casemill.domains.support.policy import Decision, Intent, decide
from casemill.domains.support.state import NOT_YET_SHIPPED, Order, SupportState
from casemill.evaluation.agents.base import AgentReply, Episode
from casemill.evaluation.reference import replies
from casemill.evaluation.reference.extract import (
    EXCEPTION_RE,
    NO_FAULT_RE,
    Mention,
    order_ids_in,
    read_request,
)
from casemill.evaluation.reference.session import TRANSIENT_TOOL_ERRORS, Session, ToolFailure
from casemill.evaluation.reference.slots import (
    address_in,
    asked_amount,
    asked_fraction,
    damaged_items,
    match_items,
    wanted_variant,
)

VERSION = "1"


class ReferenceAgent:
    variant: str | None = None
    description = "deterministic, policy-following rule-based support agent (no LLM)"
    bug: str | None = None
    read_retries = 1  # a failed read is tried once more

    def __init__(self) -> None:
        self.name = "reference" + (f":{self.variant}" if self.variant else "")
        self.fingerprint = short_hash(f"{self.name}@{VERSION}")

    async def run(self, episode: Episode) -> AgentReply:
        return await episode.in_thread(self.respond, episode)

    # -- the flow ---------------------------------------------------------------------------
    def respond(self, episode: Episode) -> AgentReply:
        request = read_request(episode.messages, find_order_ids=self.order_ids)
        session = Session(episode, request, read_retries=self.read_retries)
        mentions = self.select(request.mentions)
        question = self.ask_first(session, mentions)
        if question:
            return AgentReply(question)
        parts: list[str] = []
        for mention in mentions:
            if session.gave_up:
                break
            part = self.handle(session, mention)
            if part and part not in parts:
                parts.append(part)
        parts.extend(self.obey_injections(session))
        text = " ".join(p for p in parts if p) or replies.FALLBACK
        return AgentReply(text)

    def ask_first(self, session: Session, mentions: list[Mention]) -> str | None:
        """With several requests, one that must be clarified (which order? cancel or change?)
        is asked about before anything is written."""
        if len(mentions) < 2:
            return None
        for mention in mentions:
            if mention.kind == "conflict":
                return replies.which_change(mention.order_id, mention.others)
        for mention in mentions:
            if mention.order_id or mention.kind == "escalate" or not session.customer_id:
                continue
            try:
                candidates = self.candidates(session, mention)
            except ToolFailure:
                return None  # handled, and escalated, in the normal flow
            if len(candidates) != 1 and self.choose_order(candidates) is None:
                return replies.which_order(candidates)
        return None

    def handle(self, session: Session, mention: Mention) -> str:
        try:
            if mention.kind == "escalate":
                reason = (
                    "policy_exception"
                    if EXCEPTION_RE.search(session.request.text)
                    else "customer_request"
                )
                return self.escalate(session, reason, mention.order_id)
            if mention.kind == "conflict":
                return replies.which_change(mention.order_id, mention.others)
            if mention.kind == "status" and mention.order_id is None and session.customer_id:
                return self.status_from_listing(session, mention)
            order = self.find_order(session, mention)
            if isinstance(order, str):
                return order
            return getattr(self, f"do_{mention.kind}")(session, mention, order)
        except ToolFailure:
            session.gave_up = True
            return self.on_tool_failure(session, mention)

    def on_tool_failure(self, session: Session, mention: Mention) -> str:
        """A tool kept failing: hand the conversation to a human (reason `tool_failure`)."""
        return self.escalate(session, "tool_failure", mention.order_id)

    def select(self, mentions: list[Mention]) -> list[Mention]:
        return mentions

    def order_ids(self, text: str) -> list[str]:
        return order_ids_in(text)

    def obey_injections(self, session: Session) -> list[str]:
        return []  # instructions in customer text or tool results are data

    # -- finding the order ------------------------------------------------------------------
    def find_order(self, session: Session, mention: Mention) -> Order | str:
        order_id = mention.order_id
        if order_id is None:
            if not session.customer_id:
                return replies.which_order([])
            candidates = self.candidates(session, mention)
            if len(candidates) != 1:
                chosen = self.choose_order(candidates)
                if chosen is None:
                    return replies.which_order(candidates or session.list_orders())
                candidates = [chosen]
            order_id = candidates[0]["order_id"]
        order = session.get_order(order_id)
        if order is None:
            if session.customer_id and any(
                o["order_id"] == order_id for o in session.list_orders()
            ):
                raise ToolFailure("get_order", "not_found")  # it is on their account: a fault
            return replies.order_not_found(order_id)
        if not self.owns(session, order):
            return replies.not_your_order(order.id)
        return order

    def status_from_listing(self, session: Session, mention: Mention) -> str:
        """A status question without an order id: the listing already holds the status."""
        candidates = self.candidates(session, mention)
        if len(candidates) != 1:
            chosen = self.choose_order(candidates)
            if chosen is None:
                return replies.which_order(candidates)
            candidates = [chosen]
        return replies.listed_status(candidates[0])

    def candidates(self, session: Session, mention: Mention) -> list[dict]:
        """The customer's orders this request could be about: those holding an item the
        customer named in the request (or in a later answer), if they named one."""
        listing = [o for o in session.list_orders() if o["order_id"] not in mention.not_orders]
        later = [c.text for c in session.request.clauses if c.turn > mention.clause.turn]
        text = " ".join([mention.clause.text, *later])
        named = [
            o
            for o in listing
            if match_items(
                text,
                [{"item_id": str(n), "name": name} for n, name in enumerate(o.get("items") or [])],
            )[0]
        ]
        return named or listing

    def choose_order(self, candidates: list[dict]) -> dict | None:
        return None  # several could match: ask

    def owns(self, session: Session, order: Order) -> bool:
        return session.customer_id is None or order.customer_id == session.customer_id

    # -- intents ----------------------------------------------------------------------------
    def do_status(self, session: Session, mention: Mention, order: Order) -> str:
        return replies.status(order)

    def do_cancel(self, session: Session, mention: Mention, order: Order) -> str:
        intent = Intent("cancel", order.id)
        return self.carry_out(session, self.decide(order, intent), intent, order)

    def do_change_address(self, session: Session, mention: Mention, order: Order) -> str:
        address = address_in(session.request.text)
        intent = Intent("change_address", order.id, address=address)
        decision = self.decide(order, intent)
        if decision.outcome == "clarify":
            return replies.ask_address(order)
        return self.carry_out(session, decision, intent, order)

    def do_refund(self, session: Session, mention: Mention, order: Order) -> str:
        items = [i.model_dump() for i in order.items]
        damaged, ambiguous, heard = damaged_items(session.request.clauses, items)
        if not damaged:
            named, amb = match_items(session.request.text, items)
            if len(order.items) == 1:
                named, amb = [order.items[0].item_id], False
            if not named or amb:
                picked = self.choose_items(order, named)
                if picked is None:
                    return replies.which_item(order, named or None)
                named = picked
            damaged = {i: heard or "" for i in named}
        elif ambiguous:
            picked = self.choose_items(order, list(damaged))
            if picked is None:
                return replies.which_item(order, list(damaged))
            damaged = {i: damaged[i] for i in picked}
        item_ids = self.refund_item_ids(order, list(damaged))
        reason = next((r for r in damaged.values() if r), heard or "")
        if NO_FAULT_RE.search(session.request.text):
            reason = ""  # "nothing is wrong, I changed my mind": no reason that qualifies
        amount = self.refund_amount(
            order, item_ids, self.asked(order, item_ids, session.request.text)
        )
        intent = Intent("refund", order.id, tuple(item_ids), reason, amount)
        return self.carry_out(session, self.decide(order, intent), intent, order)

    def do_exchange(self, session: Session, mention: Mention, order: Order) -> str:
        named, amb = match_items(session.request.text, [i.model_dump() for i in order.items])
        if len(order.items) == 1:
            named, amb = [order.items[0].item_id], False
        if len(named) != 1 or amb:
            picked = self.choose_items(order, named)
            if picked is None:
                return replies.which_item(order, named or None)
            named = picked[:1]
        item = order.item(named[0])
        if order.status != "delivered":
            return replies.refuse(
                "exchange",
                order,
                f"it is {order.status}, and only delivered items can be exchanged",
            )
        variant = wanted_variant(session.request.text, item.variant_id)
        if variant is None:
            return replies.which_variant(order, item.item_id)
        intent = Intent("exchange", order.id, (item.item_id,), new_variant_id=variant)
        params = {"order_id": order.id, "item_id": item.item_id, "new_variant_id": variant}
        return self.finish_write(session, "exchange_item", params, intent, order)

    # -- deciding and acting ----------------------------------------------------------------
    def decide(self, order: Order, intent: Intent) -> Decision:
        return decide(SupportState(orders={order.id: order}), intent)

    def choose_items(self, order: Order, named: list[str]) -> list[str] | None:
        return None  # ambiguous: ask which item

    def refund_item_ids(self, order: Order, damaged: list[str]) -> list[str]:
        return damaged

    def asked(self, order: Order, item_ids: list[str], text: str) -> float | None:
        """The partial amount the customer asks for one item, if any: an amount, or a share of
        what is left to refund ("half of what I paid")."""
        if len(item_ids) != 1 or order.item(item_ids[0]) is None:
            return None
        fraction = asked_fraction(text)
        if fraction is not None:
            item = order.item(item_ids[0])
            return round((item.total - order.refunded_for(item.item_id)) * fraction, 2)
        return asked_amount(text)

    def refund_amount(self, order: Order, item_ids: list[str], asked: float | None) -> float | None:
        """A partial refund amount, or None for a full refund. An amount above what is left to
        refund is not granted: the item is refunded in full instead."""
        if asked is None or len(item_ids) != 1:
            return None
        item = order.item(item_ids[0])
        left = round(item.total - order.refunded_for(item.item_id), 2)
        return None if asked >= left - 0.005 else asked

    def money(self, amount: float) -> str:
        return replies.money(amount)

    def confirm(self, text: str) -> str:
        return text

    def carry_out(self, session: Session, decision: Decision, intent: Intent, order: Order) -> str:
        if decision.outcome == "refuse":
            return replies.refuse(intent.kind, order, decision.why, intent.item_ids, self.money)
        if decision.outcome == "clarify":
            if intent.kind == "refund" and order.status in NOT_YET_SHIPPED:
                return replies.nothing_to_refund_yet(order)
            return replies.which_item(order)
        parts = []
        for call in decision.calls:
            params = {k: v for k, v in call.params.items() if not (k == "summary" and not v)}
            parts.append(self.finish_write(session, call.tool, params, intent, order))
        return " ".join(parts)

    def finish_write(
        self, session: Session, tool: str, params: dict, intent: Intent, order: Order
    ) -> str:
        result = self.write(session, tool, params)
        if (
            not result.ok
            and result.error in TRANSIENT_TOOL_ERRORS
            and not self.took_effect(session, order)
        ):
            result = self.write(session, tool, params)  # it did not happen: once more
        if result.ok:
            return self.confirm(self.confirmation(tool, params, result.content, order))
        if result.error in TRANSIENT_TOOL_ERRORS:
            session.gave_up = True
            return self.escalate(session, "tool_failure", order.id)
        why = result.content.get("message", "") if isinstance(result.content, dict) else ""
        return replies.refuse(intent.kind, order, why, intent.item_ids, self.money)

    def took_effect(self, session: Session, before: Order) -> bool:
        """After a write that timed out: whether it happened anyway (the order changed). A
        server error means it did not; a time-out is checked with a fresh read."""
        last = session.episode.calls[-1] if session.episode.calls else None
        if last is None or last.error != "timeout":
            return False
        session.orders.pop(before.id, None)
        try:
            now = session.get_order(before.id)
        except ToolFailure:
            return True  # cannot tell: do not risk doing it twice
        return now is not None and now.model_dump() != before.model_dump()

    def write(self, session: Session, tool: str, params: dict):
        return session.write(tool, params)

    def confirmation(self, tool: str, params: dict, content: dict, order: Order) -> str:
        if tool == "refund_items":
            return replies.refunded(
                order, list(params["item_ids"]), float(content.get("amount") or 0.0), self.money
            )
        if tool == "cancel_order":
            return replies.cancelled(order, content.get("refund_amount"), self.money)
        if tool == "change_shipping_address":
            return replies.address_changed(order, params["address"])
        if tool == "exchange_item":
            return replies.exchanged(order, params["item_id"], params["new_variant_id"])
        return replies.escalated(params.get("reason", ""))

    def escalate(self, session: Session, reason: str, order_id: str | None) -> str:
        if session.escalated:
            return replies.escalated(reason)
        params = {"reason": reason, "summary": self.summary(session, reason)}
        if order_id:
            params["order_id"] = order_id
        result = self.write(session, "escalate_to_human", params)
        if not result.ok and result.error in TRANSIENT_TOOL_ERRORS:
            result = self.write(session, "escalate_to_human", params)
        if result.ok:
            session.escalated = True
            return self.confirm(replies.escalated(reason))
        return "I'm sorry, I cannot reach a human agent right now; please contact us again shortly."

    def summary(self, session: Session, reason: str) -> str:
        kinds = ", ".join(sorted({m.kind for m in session.request.mentions})) or "unclear request"
        return f"{reason}: customer {session.customer_id or 'unknown'} asked about {kinds}"
