"""Outcome flips: the facts change and the expected state is recomputed by the domain policy
(`casemill.domains.support.policy.decide`), never kept or guessed.

Each flip starts from a case with exactly one expected write that stands for a customer intent
(or, for `flip_not_shipped`, a refused cancellation), edits the environment or the customer's
words, decides the intent again on the new state, and rebuilds `expected`: reads kept, the
policy's calls, its outcome, the support reply vocabulary, the refused write forbidden (any write
when the outcome is `clarify`), `optimal_steps` = reads + writes + 1.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from casemill.case.matching import forbidden_hit
from casemill.case.model import Case, ExpectedCall, ForbiddenCall, ToolCall, Turn
from casemill.domains.support.policy import Intent, decide, intent_of
from casemill.domains.support.state import Refund, SupportState
from casemill.domains.support.tools import WRITE_TOOLS
from casemill.generators.contract import no_tool_history
from casemill.generators.framework import NotApplicable, operator
from casemill.generators.slots import NEGATIONS
from casemill.packs.support.facts import (
    make_expected,
    phrases,
    read_steps,
    reads,
    rebuild,
    refund_amount,
    state_of,
    state_view,
    support_only,
    with_tags,
    writes,
)

FLIP_RULE = (
    "expected recomputed by the support policy on the changed facts: resolve keeps "
    "the policy's calls; refuse forbids the refused write; clarify forbids any write"
)
INTACT = ("fine", "intact", "in perfect condition", "in one piece")


def _single_intent(case: Case) -> tuple[Intent, ExpectedCall]:
    support_only(case)
    no_tool_history(case)
    calls = [c for c in writes(case) if c.tool != "escalate_to_human"]
    if len(writes(case)) != 1 or len(calls) != 1 or case.expected.outcome != "resolve":
        raise NotApplicable("needs exactly one expected write (not an escalation)")
    intent = intent_of(calls[0])
    if intent is None or intent.order_id not in state_view(case).orders:
        raise NotApplicable("the write names no order of the environment")
    return intent, calls[0]


def relabel(
    case: Case,
    state: SupportState,
    intent: Intent,
    refused: ExpectedCall | None,
    conversation: list[Turn] | None = None,
) -> Case:
    """`case` with `state` (and `conversation`) and the expected state the policy decides."""
    decision = decide(state, intent)
    calls = [*reads(case), *decision.calls]
    forbidden: list[ForbiddenCall] = []
    if decision.outcome == "clarify":
        forbidden.append(ForbiddenCall(any_write=True, reason=decision.why))
    elif decision.outcome == "refuse" and refused is not None:
        oid = refused.params.get("order_id")
        forbidden.append(
            ForbiddenCall(tool=refused.tool, params={"order_id": oid}, reason=decision.why)
        )
    for rule in case.expected.forbidden_calls:
        hits = any(
            forbidden_hit(rule, ToolCall(tool=c.tool, params=c.params), WRITE_TOOLS) for c in calls
        )
        if not hits:
            forbidden.append(rule)
    amount = None
    if decision.outcome == "resolve" and intent.kind == "refund":
        amount = refund_amount(state, decision.calls[0])
    city = (intent.address or {}).get("city")
    expected = make_expected(
        calls=calls,
        outcome=decision.outcome,
        reads_needed=read_steps(case),
        contains=phrases(intent.kind, decision.outcome, amount=amount, city=city),
        excludes=case.expected.reply_excludes,
        forbidden=tuple(forbidden),
    )
    clarify = ("clarify",) if decision.outcome == "clarify" else ()
    tags = with_tags(case, add_labels=clarify, drop_labels=() if clarify else ("clarify",))
    return rebuild(case, state=state, conversation=conversation, expected=expected, tags=tags)


def _flip(
    case: Case,
    kinds: tuple[str, ...],
    edit: Callable[[SupportState, Intent], None],
    *,
    forbid_refused: bool = True,
) -> list[Case]:
    intent, call = _single_intent(case)
    if intent.kind not in kinds:
        raise NotApplicable(f"needs a {' or '.join(kinds)} case")
    state = state_of(case)
    edit(state, intent)
    return [relabel(case, state, intent, call if forbid_refused else None)]


@operator(kind="outcome_flip", name="flip_not_delivered", version="2", label_rule=FLIP_RULE)
def flip_not_delivered(case: Case, rng: random.Random) -> list[Case]:
    """A refund request, but the order is still processing or in transit: processing gives
    clarify (nothing to refund yet, offer to cancel), shipped gives refuse.

    Only for an item the customer says is missing, and not when the customer (or the simulated
    user's scenario) says the order reached them ("came today", "I got it", "the mug you
    received"): a customer who holds a cracked mug, or says the order came, would deny the
    state the label rests on."""
    if customer_says_received(case):
        raise NotApplicable("the customer says the order arrived")
    status = rng.choice(["processing", "shipped"])

    def edit(state: SupportState, intent: Intent) -> None:
        if intent.reason != "missing":  # a damaged, defective or wrong item is in their hands
            raise NotApplicable(
                f"a refund for a {intent.reason or 'faulty'} item: the customer has it, so the "
                "order was delivered (only a missing item fits an order not yet delivered)"
            )
        order = state.orders[intent.order_id]
        order.status = status
        order.delivered_at = None

    return _flip(case, ("refund",), edit)


@operator(kind="outcome_flip", name="flip_already_refunded", version="1", label_rule=FLIP_RULE)
def flip_already_refunded(case: Case, rng: random.Random) -> list[Case]:
    """The customer already got this refund: the items carry a full past refund -> refuse."""

    def edit(state: SupportState, intent: Intent) -> None:
        order = state.orders[intent.order_id]
        for item_id in intent.item_ids:
            item = order.item(item_id)
            refund = Refund(
                id=f"R{len(order.refunds) + 1}",
                item_ids=[item_id],
                amount=item.total,
                reason=intent.reason or "damaged",
            )
            order.refunds = [*order.refunds, refund]

    return _flip(case, ("refund",), edit)


@operator(kind="outcome_flip", name="flip_shipped", version="1", label_rule=FLIP_RULE)
def flip_shipped(case: Case, rng: random.Random) -> list[Case]:
    """A cancellation or address change, but the order has already shipped or been delivered
    -> refuse, the write forbidden."""
    status = rng.choice(["shipped", "delivered"])

    def edit(state: SupportState, intent: Intent) -> None:
        state.orders[intent.order_id].status = status

    return _flip(case, ("cancel", "change_address"), edit)


@operator(
    kind="outcome_flip",
    name="flip_out_of_stock",
    version="2",
    label_rule=FLIP_RULE + "; out of stock: refuse, the exchange attempt not forbidden "
    "(no read tool shows stock, and the tool refuses the exchange)",
)
def flip_out_of_stock(case: Case, rng: random.Random) -> list[Case]:
    """An exchange, but the wanted variant is out of stock -> refuse. Trying the exchange is
    not forbidden: no read tool shows stock, the tool refuses the exchange and nothing changes."""

    def edit(state: SupportState, intent: Intent) -> None:
        for product in state.products.values():
            variant = product.variant(intent.new_variant_id or "")
            if variant is not None:
                variant.available = False

    return _flip(case, ("exchange",), edit, forbid_refused=False)


_MONEY = re.compile(
    r"\$\s?(\d+(?:\.\d{1,2})?)"  # $8, $ 8.5, $44.50
    r"|(?<![\w.])(\d+\.\d{2})(?![\d.]\d)"  # 20.00
    r"|(?<![\w.])(\d+(?:\.\d{1,2})?)\s?(?:dollars?|bucks|usd)\b",  # 8 dollars
    re.IGNORECASE,
)


def names_amount(text: str, amount: float) -> bool:
    """Whether `text` names `amount` as money: with cents (8.00), after a dollar sign ($8) or
    before 'dollars' or 'bucks'; a bare 8 could be a count or part of an id."""
    for match in _MONEY.finditer(text):
        value = next(g for g in match.groups() if g is not None)
        if round(float(value), 2) == round(amount, 2):
            return True
    return False


@operator(kind="outcome_flip", name="flip_price_paid", version="3", label_rule=FLIP_RULE)
def flip_price_paid(case: Case, rng: random.Random) -> list[Case]:
    """A partial refund of X, but the price paid was lower than X: the item is refunded in
    full, what was paid, and a refund of X is forbidden (more than was paid), as the seeds label
    a customer who asks for more than they paid (W1024) and the reference agent answers.

    Only when the customer names X itself: a relative request ("half of what I paid") still
    fits a lower price, so the flip would not change the right answer."""
    intent, call = _single_intent(case)
    if intent.kind != "refund" or intent.amount is None:
        raise NotApplicable("needs a partial refund with an amount")
    if not names_amount(case.customer_text, intent.amount):
        raise NotApplicable("the customer does not name the amount itself")
    state = state_of(case)
    item = state.orders[intent.order_id].item(intent.item_ids[0])
    item.price = round(intent.amount / item.quantity * rng.choice([0.4, 0.6, 0.8]), 2)
    if item.price <= 0:
        raise NotApplicable("amount too small")
    whole = Intent("refund", intent.order_id, intent.item_ids, intent.reason, None)
    out = relabel(case, state, whole, call)
    if out.expected.outcome != "resolve":  # the item cannot be refunded at all
        return [relabel(case, state, intent, call)]
    asked = ForbiddenCall(
        tool=call.tool,
        params={"order_id": intent.order_id, "amount": intent.amount},
        reason="more than was paid",
    )
    expected = out.expected.model_copy(
        update={"forbidden_calls": (*out.expected.forbidden_calls, asked)}
    )
    tags = with_tags(out, add_labels=("over_refund",))
    return [rebuild(out, expected=expected, tags=tags)]


_DAMAGE_WORD = re.compile(r"\b(cracked|broken|shattered|damaged|defective)\b", re.IGNORECASE)
# a damage word said of the item and ending its clause ("arrived cracked.", "both seem
# defective,"): only that can be turned into "arrived fine" and keep a sentence
_DAMAGE = re.compile(
    r"\b((?:arrived|came|is|was|are|were|seems?|looks?) (?:both )?)"
    r"(cracked|broken|shattered|damaged|defective)\b(?=\s*(?:[.,;:!?]|$))",
    re.IGNORECASE,
)
# the fault described in other words, which an intact item contradicts
_FAULT = re.compile(
    r"\b(won['\u2019]?t|wouldn['\u2019]?t|doesn['\u2019]?t|does not|will not|not working|"
    r"stopped|pair|turn on|peel\w*|holes?|tear|torn|ripped|scratch\w*|leak\w*|glass|"
    r"crushed|smashed|dropped|dent\w*|stain\w*|chipped|faulty|bent|snapped|burnt|"
    r"missing|wrong)\b",
    re.IGNORECASE,
)


@operator(kind="outcome_flip", name="flip_intact", version="3", label_rule=FLIP_RULE)
def flip_intact(case: Case, rng: random.Random) -> list[Case]:
    """The item arrived intact: damage words become 'arrived fine' and the customer just
    changed their mind -> refuse (only damaged, defective, wrong or missing items qualify)."""
    intent, call = _single_intent(case)
    if intent.kind != "refund":
        raise NotApplicable("needs a refund case")
    turns = list(case.conversation)
    changed = False
    for index, turn in enumerate(turns):
        if turn.role == "customer" and _DAMAGE_WORD.search(turn.content):
            if _FAULT.search(turn.content):
                raise NotApplicable("the text describes the fault in other words too")
            text = _DAMAGE.sub(lambda m: m.group(1) + rng.choice(INTACT), turn.content)
            if _DAMAGE_WORD.search(text):
                raise NotApplicable("a damage word that cannot be turned into 'intact'")
            # the request the damage implied, said outright: without it the customer asks for
            # nothing, and a reply refusing a refund answers no question
            text += " Nothing is actually wrong, I just changed my mind and would like a refund."
            turns[index] = turn.model_copy(update={"content": text})
            changed = True
    if not changed:
        raise NotApplicable("no damage word in the customer's text")
    flipped = Intent("refund", intent.order_id, intent.item_ids, "changed_mind", intent.amount)
    return [relabel(case, state_of(case), flipped, call, conversation=turns)]


# the customer says the order reached them: it cannot be "still processing" or "in transit"
# without the conversation contradicting the environment
_RECEIVED = re.compile(
    r"\b(came|arrived|delivered|received|showed up|got (it|them|the))\b", re.IGNORECASE
)
# ... unless negated: "it hasn't arrived", "never received it", "not been delivered"
_NEGATED = re.compile(
    r"(n['\u2019]t|\b(" + "|".join(NEGATIONS) + r"))\s+((yet|been|even)\s+)?$", re.IGNORECASE
)


def says_received(text: str) -> bool:
    """Whether the customer says the order reached them (a negated "arrived" does not count)."""
    return any(not _NEGATED.search(text, 0, m.start()) for m in _RECEIVED.finditer(text))


def customer_says_received(case: Case) -> bool:
    """Whether the customer's turns, or the simulated user's scenario, say the order reached
    them."""
    return says_received(case.customer_text) or says_received(case.user_scenario or "")


@operator(kind="outcome_flip", name="flip_not_shipped", version="3", label_rule=FLIP_RULE)
def flip_not_shipped(case: Case, rng: random.Random) -> list[Case]:
    """A refused cancellation (the order had shipped), but the order is still processing ->
    resolve with the cancellation. Not when the customer (or the simulated user's scenario)
    says the order reached them."""
    support_only(case)
    no_tool_history(case)
    if case.expected.outcome != "refuse" or "cancel" not in case.tags.intents or writes(case):
        raise NotApplicable("needs a refused cancellation")
    if customer_says_received(case):
        raise NotApplicable("the customer says the order arrived")
    targets = [
        f
        for f in case.expected.forbidden_calls
        if f.tool == "cancel_order" and f.params.get("order_id")
    ]
    state = state_of(case)
    if len(targets) != 1:
        raise NotApplicable("the refused cancellation names no single order")
    oid = str(targets[0].params["order_id"]).lstrip("#").upper()
    if oid not in state.orders:
        raise NotApplicable("unknown order")
    order = state.orders[oid]
    order.status = rng.choice(["pending", "processing"])
    order.delivered_at = None
    return [relabel(case, state, Intent("cancel", oid), None)]


@operator(kind="outcome_flip", name="flip_status", version="1", label_rule=FLIP_RULE)
def flip_status(case: Case, rng: random.Random) -> list[Case]:
    """A status question, but the order is at another stage: the status phrase the reply must
    contain follows the policy's answer for the new status."""
    support_only(case)
    no_tool_history(case)
    lookups = [c for c in reads(case) if c.tool == "get_order"]
    if (
        "status" not in case.tags.intents
        or case.expected.outcome != "resolve"
        or writes(case)
        or len(lookups) != 1
    ):
        raise NotApplicable("needs a status question answered by one lookup")
    state = state_of(case)
    oid = str(lookups[0].params.get("order_id", "")).lstrip("#").upper()
    order = state.orders.get(oid)
    if order is None or order.status not in case.expected.reply_contains:
        raise NotApplicable("the expected reply does not name the order's status")
    text = case.customer_text.lower()
    options = [
        s
        for s in ("pending", "processing", "shipped", "delivered")
        if s != order.status and s not in text
    ]
    if not options:
        raise NotApplicable("no other status")
    old = order.status
    order.status = rng.choice(options)
    order.delivered_at = order.delivered_at if order.status == "delivered" else None
    decision = decide(state, Intent("status", oid))
    contains = tuple(decision.phrases[0] if p == old else p for p in case.expected.reply_contains)
    expected = case.expected.model_copy(
        update={"reply_contains": contains, "reference_reply": None}
    )
    return [rebuild(case, state=state, expected=expected)]
