"""Intent interpolation: two or three intents in one request, in one turn or spread over turns.

- `blend_new_order` (compatible): one or two further orders of the signed-in customer are added
  to the environment, each set up for one more intent (cancel, change_address, refund, exchange,
  status, or a request for a human), and asked for with connective phrasing. The expected calls
  are the union of the seed's and the policy's calls for each new intent; phrases the union;
  outcome `escalate` when a human is asked for, else `resolve`; one more read per new order.
- `blend_contradictory` (same order): the customer asks for two things the policy says exclude
  each other on one order (`policy.conflict`: cancel it or change its address): outcome
  `clarify`, any write forbidden, reply naming both options. A request the policy refuses on its
  own (cancel a delivered order) contradicts nothing, so it is not blended.
- `blend_ambiguous`: the customer also asks to cancel "my other order" while two other orders
  could match: the seed's own request keeps its label (its write stays expected); the reply
  must ask "which order", and cancelling either of the two is forbidden.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from casemill.case.model import Case, ExpectedCall, ForbiddenCall, Turn
from casemill.domains.support.policy import (
    ORDER_RULE,
    Intent,
    blocked,
    conflict,
    decide,
    escalate_call,
    intent_of,
)
from casemill.domains.support.state import Address, LineItem, Order, Product, SupportState, Variant
from casemill.generators.framework import NotApplicable, operator
from casemill.generators.lexicon import lexicon
from casemill.packs.support.facts import (
    compatible_forbidden,
    make_expected,
    order_ids_in_text,
    phrases,
    primary_order,
    read_steps,
    reads,
    rebuild,
    refund_amount,
    signed_in,
    state_of,
    state_view,
    support_only,
    with_tags,
    writes,
)
from casemill.packs.support.swaps import faker

BLEND_RULE = (
    "compatible intents: the union of expected calls and phrases; contradictory or "
    "ambiguous intents: clarify with any write forbidden"
)
BLEND_KINDS = ("cancel", "change_address", "refund", "exchange", "status", "escalate")


@dataclass
class Added:
    kind: str
    text: str
    calls: tuple[ExpectedCall, ...]
    contains: tuple[str, ...]
    reads: int


def _fresh(rng: random.Random, prefix: str, taken: str) -> str:
    while True:
        candidate = f"{prefix}{rng.randint(3000, 9999)}"
        if candidate not in taken:
            return candidate


def _request(rng: random.Random, kind: str, **slots: str) -> str:
    return rng.choice(lexicon("connectives")["requests"][kind]).format(**slots)


def add_intent(state: SupportState, cid: str, kind: str, rng: random.Random, taken: str) -> Added:
    """A new order of customer `cid` set up for `kind`, the request text, the policy's calls."""
    if kind == "escalate":
        return Added(kind, _request(rng, kind), (escalate_call("customer_request"),), ("human",), 0)
    oid = _fresh(rng, "W", taken)
    names = {i.name for o in state.orders.values() for i in o.items}
    product = rng.choice([p for p in lexicon("products") if p["name"] not in names])
    fake = faker(rng)
    status = {"cancel": "processing", "change_address": "pending", "status": "shipped"}.get(
        kind, "delivered"
    )
    item = LineItem(item_id="I1", name=product["name"], price=product["price"])
    slots = {"order": oid, "word": product["word"]}
    intent = Intent(kind, oid)
    if kind == "refund":
        intent = Intent("refund", oid, ("I1",), "damaged")
        slots["damage"] = rng.choice(["cracked", "broken", "damaged", "defective"])
    if kind == "exchange":
        pid = _fresh(rng, "P", taken)
        colors = rng.sample(["black", "blue", "green", "red", "grey", "white"], 2)
        variants = [
            Variant(id=f"{pid}-{c}", options={"color": c}, price=product["price"]) for c in colors
        ]
        state.products[pid] = Product(id=pid, name=product["name"], variants=variants)
        item = item.model_copy(update={"product_id": pid, "variant_id": variants[0].id})
        intent = Intent("exchange", oid, ("I1",), new_variant_id=variants[1].id)
        slots["option"] = colors[1]
    if kind == "change_address":
        address = {"street1": fake.street_address(), "city": fake.city(), "zip": fake.zipcode()}
        intent = Intent("change_address", oid, address=address)
        slots.update(address)
    state.orders[oid] = Order(
        id=oid,
        customer_id=cid,
        status=status,
        items=[item],
        address=Address(street1=fake.street_address(), city=fake.city(), zip=fake.zipcode()),
    )
    decision = decide(state, intent)
    if decision.outcome != "resolve":  # pragma: no cover - the order is built to resolve
        raise NotApplicable(f"could not set up a {kind} intent: {decision.why}")
    amount = refund_amount(state, decision.calls[0]) if kind == "refund" else None
    contains = phrases(kind, "resolve", amount=amount, city=slots.get("city"), status=status)
    calls = decision.calls
    if kind == "status":  # the answer is the lookup, listed as the status seeds list it
        calls = (
            ExpectedCall(
                tool="get_order", params={"order_id": oid}, match={"order_id": ORDER_RULE}
            ),
        )
    return Added(kind, _request(rng, kind, **slots), calls, contains, 1)


def _named_orders(case: Case) -> str:
    support_only(case)
    who = signed_in(case)
    if who is None:
        raise NotApplicable("no signed-in customer")
    named = set(order_ids_in_text(case))
    for call in writes(case):
        oid = call.params.get("order_id")
        if oid and str(oid).lstrip("#").upper() not in named:
            raise NotApplicable("the seed relies on the customer having one order")
    if not named:
        raise NotApplicable("the customer names no order")
    return who[0]


def _decap(text: str) -> str:
    if text[:2] in ("I ", "I'"):
        return text
    return text[:1].lower() + text[1:]


def _spread(case: Case, rng: random.Random, texts: list[str]) -> list[Turn]:
    conn = lexicon("connectives")
    turns = list(case.conversation)
    if rng.random() < 0.5:
        index = max(i for i, t in enumerate(turns) if t.role == "customer")
        extra = " ".join(f"{rng.choice(conn['same_turn'])} {_decap(t)}" for t in texts)
        turns[index] = turns[index].model_copy(
            update={"content": f"{turns[index].content.rstrip()} {extra}"}
        )
        return turns
    for text in texts:
        turns.append(Turn(role="assistant", content=rng.choice(conn["assistant_bridge"])))
        opener = rng.choice(conn["second_turn_openers"])
        turns.append(Turn(role="customer", content=f"{opener} {text[:1].upper()}{text[1:]}"))
    return turns


@operator(kind="interpolation", name="blend_new_order", version="1", label_rule=BLEND_RULE)
def blend_new_order(case: Case, rng: random.Random, max_extra: int = 2) -> list[Case]:
    """Adds one or two compatible intents on new orders of the same customer."""
    cid = _named_orders(case)
    if case.expected.outcome != "resolve":
        raise NotApplicable("needs a resolved seed")
    state = state_of(case)
    taken = case.model_dump_json()
    count = rng.randint(1, max_extra)
    kinds = rng.sample([k for k in BLEND_KINDS if k not in case.tags.intents], count)
    if "escalate" in kinds:  # the request for a human comes last
        kinds = [k for k in kinds if k != "escalate"] + ["escalate"]
    added: list[Added] = []
    for kind in kinds:
        added.append(add_intent(state, cid, kind, rng, taken + " ".join(state.orders)))
    calls = [*reads(case), *writes(case)]
    calls += [c for a in added for c in a.calls]
    outcome = "escalate" if "escalate" in kinds else "resolve"
    expected = make_expected(
        calls=calls,
        outcome=outcome,
        reads_needed=read_steps(case) + sum(a.reads for a in added),
        contains=(*case.expected.reply_contains, *(p for a in added for p in a.contains)),
        excludes=case.expected.reply_excludes,
        forbidden=compatible_forbidden(case.expected.forbidden_calls, calls),
    )
    intents = tuple(dict.fromkeys((*case.tags.intents, *kinds)))
    tags = with_tags(case, intents=intents, difficulty="hard", add_labels=("multi_intent",))
    turns = _spread(case, rng, [a.text for a in added])
    return [rebuild(case, state=state, conversation=turns, expected=expected, tags=tags)]


def _clarified(
    case: Case,
    turns: list[Turn],
    contains: tuple[str, ...],
    why: str,
    intents: tuple[str, ...],
    state: SupportState | None = None,
    extra_reads: int = 0,
) -> Case:
    expected = make_expected(
        calls=list(reads(case)),
        outcome="clarify",
        reads_needed=read_steps(case) + extra_reads,
        contains=contains,
        excludes=case.expected.reply_excludes,
        forbidden=(ForbiddenCall(any_write=True, reason=why),),
    )
    tags = with_tags(
        case, intents=intents, difficulty="hard", add_labels=("multi_intent", "clarify")
    )
    return rebuild(case, state=state, conversation=turns, expected=expected, tags=tags)


@operator(kind="interpolation", name="blend_contradictory", version="3", label_rule=BLEND_RULE)
def blend_contradictory(case: Case, rng: random.Random) -> list[Case]:
    """Adds a request that contradicts the seed's on the same order -> clarify, no write.

    Only a request the policy says contradicts the seed's (`policy.conflict`: each possible on
    its own, not both): a cancel of a delivered order contradicts nothing, it is refused, and
    the seed's refund stays right, so a refund seed gets no contradiction here."""
    support_only(case)
    ws = writes(case)
    if case.expected.outcome != "resolve" or len(ws) != 1:
        raise NotApplicable("needs one resolved write")
    intent = intent_of(ws[0])
    conn = lexicon("connectives")
    if intent is None or intent.kind not in conn["contradict"]:
        raise NotApplicable("no contradiction template for this intent")
    if intent.order_id not in order_ids_in_text(case):
        raise NotApplicable("the customer does not name the order")
    state = state_view(case)
    templates = []
    for template in conn["contradict"][intent.kind]:
        other = Intent(template["other"], intent.order_id)
        if conflict(state, intent, other):
            templates.append(template)
    if not templates:
        why = blocked(state, Intent(conn["contradict"][intent.kind][0]["other"], intent.order_id))
        raise NotApplicable(
            f"nothing contradicts the {intent.kind} under the policy: {why or 'no conflict'}"
        )
    template = rng.choice(templates)
    turns = _spread(case, rng, [template["text"].format(order=intent.order_id)])
    intents = tuple(dict.fromkeys((*case.tags.intents, template["other"])))
    return [
        _clarified(
            case,
            turns,
            tuple(conn["contradict_phrases"][intent.kind]),
            "contradictory requests on one order: ask which one",
            intents,
        )
    ]


AMBIGUOUS_RULE = (
    "the seed's expected kept (its calls, outcome, phrases and forbidden calls); the ambiguous "
    "request adds a clarifying question ('which order') and forbids cancelling either order "
    "it may mean"
)


@operator(kind="interpolation", name="blend_ambiguous", version="2", label_rule=AMBIGUOUS_RULE)
def blend_ambiguous(case: Case, rng: random.Random) -> list[Case]:
    """Adds 'cancel my other order' while two other unshipped orders match: the seed's own
    request is as clear as before and keeps its label (a write it expected stays expected);
    only the added request becomes a question, and neither matching order may be cancelled."""
    cid = _named_orders(case)
    if case.expected.outcome == "escalate":
        raise NotApplicable("an escalation must still happen; asking alone is not enough")
    state = state_of(case)
    oid = primary_order(case)
    if state.orders[oid].status in ("pending", "processing"):
        raise NotApplicable("the seed's own order is unshipped too")
    taken = case.model_dump_json()
    before = set(state.orders)
    for _ in range(2):
        add_intent(state, cid, "cancel", rng, taken + " ".join(state.orders))
    why = "two unshipped orders match 'my other order': ask which"
    guarded = tuple(
        ForbiddenCall(tool="cancel_order", params={"order_id": new}, reason=why)
        for new in sorted(set(state.orders) - before)
    )
    text = rng.choice(lexicon("connectives")["ambiguous"])
    turns = _spread(case, rng, [text])
    expected = make_expected(
        calls=list(case.expected.tool_calls),
        outcome=case.expected.outcome,
        reads_needed=read_steps(case) + 1,
        contains=(*case.expected.reply_contains, "which order"),
        excludes=case.expected.reply_excludes,
        forbidden=(*case.expected.forbidden_calls, *guarded),
    )
    clarify = () if writes(case) else ("clarify",)
    intents = tuple(dict.fromkeys((*case.tags.intents, "cancel")))
    tags = with_tags(
        case, intents=intents, difficulty="hard", add_labels=("multi_intent", *clarify)
    )
    return [rebuild(case, state=state, conversation=turns, expected=expected, tags=tags)]
