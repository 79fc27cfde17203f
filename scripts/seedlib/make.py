"""The case builder behind every seed.

`seed(...)` assembles a `Case` from a signed-in customer, an environment, the customer's words
(one message or a scripted history) and the expected calls. What the conventions fix is derived,
not typed by hand: the system turn, the required reply phrases (a refund's amount is the real
line-item total read from the environment), and `optimal_steps` (reads + writes + 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from casemill.case.matching import call_matches
from casemill.case.model import (
    Case,
    Environment,
    Expected,
    ExpectedCall,
    ForbiddenCall,
    ParamRule,
    Provenance,
    Review,
    Tags,
    ToolCall,
    Turn,
)
from casemill.domains.support.policy import Intent, decide
from casemill.domains.support.state import SupportState
from casemill.domains.support.tools import WRITE_TOOLS
from seedlib.world import customer, system_turn

REVIEWER = "casemill-seeds"


def money(value: float) -> str:
    return f"{value:.2f}"


def refund_amount(env: Environment, call: ExpectedCall) -> float:
    """What a refund call pays back: its `amount`, else the sum of the line-item totals."""
    if call.params.get("amount") is not None:
        return round(float(call.params["amount"]), 2)
    order = SupportState.parse(env.state).orders[call.params["order_id"]]
    return round(sum(order.item(i).total for i in call.params["item_ids"]), 2)


def derived_phrases(env: Environment, calls: Sequence[ExpectedCall], outcome: str) -> list[str]:
    """The reply vocabulary of the conventions for these calls and this outcome."""
    out: list[str] = []
    for call in calls:
        if call.tool == "refund_items":
            out += [money(refund_amount(env, call)), "refund"]
        elif call.tool == "cancel_order":
            out.append("cancelled")
        elif call.tool == "change_shipping_address":
            out.append(call.params["address"]["city"])
        elif call.tool == "exchange_item":
            out.append("exchange")
        elif call.tool == "escalate_to_human":
            out.append("human")
    if outcome == "refuse":
        out.append("cannot")
    return out


def get_order(order_id: str) -> ExpectedCall:
    """An expected read (status questions are resolved by a lookup alone)."""
    return ExpectedCall(
        tool="get_order", params={"order_id": order_id}, match={"order_id": ParamRule(kind="id")}
    )


def list_orders(customer_id: str) -> ExpectedCall:
    return ExpectedCall(
        tool="list_customer_orders",
        params={"customer_id": customer_id},
        match={"customer_id": ParamRule(kind="id")},
    )


def no_writes(reason: str) -> ForbiddenCall:
    return ForbiddenCall(any_write=True, reason=reason)


def never(tool: str, reason: str, **params: Any) -> ForbiddenCall:
    return ForbiddenCall(tool=tool, params=params, reason=reason)


def policy_disagreement(
    env: Environment, intent: Intent, outcome: str, writes: Sequence[ExpectedCall]
) -> str | None:
    """Why `decide` (the executable policy) disagrees with a seed's outcome and write calls."""
    decision = decide(SupportState.parse(env.state), intent)
    if decision.outcome != outcome:
        return f"policy decides {decision.outcome!r} ({decision.why}), the seed says {outcome!r}"
    if len(decision.calls) != len(writes):
        return f"policy expects {len(decision.calls)} write calls, the seed {len(writes)}"
    for want in writes:
        if not any(
            call_matches(want, ToolCall(tool=d.tool, params=d.params)) for d in decision.calls
        ):
            return f"policy does not make the call {want.tool}({want.params})"
    return None


def _dedupe(items: Sequence[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return tuple(seen)


def seed(
    who: str,
    env: Environment,
    say: str | Sequence[Turn] | None,
    *,
    title: str,
    intents: Sequence[str],
    outcome: str = "resolve",
    calls: Sequence[ExpectedCall] = (),
    forbid: Sequence[ForbiddenCall] = (),
    reads: int = 1,
    replies: int = 1,
    phrases: Sequence[str] = (),
    excludes: Sequence[str] = (),
    category: str = "capability",
    difficulty: str = "easy",
    labels: Sequence[str] = (),
    scenario: str | None = None,
    reference: str | None = None,
    policy: Intent | None = None,
) -> Case:
    """One seed case. `say` is the customer's message, or the scripted turns after the system
    turn, or None for a `scenario` (a goal for a simulated customer). `reads` counts the lookups
    a good agent needs after the last customer turn, `replies` its messages to the customer
    (more than one when a simulated customer must be asked something first); `phrases` add to
    the derived ones. With `policy`, the customer's intent, the seed must agree with what
    `decide` makes of it (else ValueError)."""
    turns: list[Turn] = [system_turn(who)]
    if isinstance(say, str):
        turns.append(customer(say))
    elif say is not None:
        turns.extend(say)
    writes = [c for c in calls if c.tool in WRITE_TOOLS]
    if policy is not None:
        why = policy_disagreement(env, policy, outcome, writes)
        if why:
            raise ValueError(f"seed {title!r}: {why}")
    label_set = list(labels)
    if any(t.role == "assistant" for t in turns):
        label_set.append("multi_turn")
    if scenario:
        label_set.append("user_scenario")
    return Case(
        domain="support",
        environment=env,
        conversation=tuple(turns),
        user_scenario=scenario,
        expected=Expected(
            tool_calls=tuple(calls),
            forbidden_calls=tuple(forbid),
            outcome=outcome,
            reply_contains=_dedupe([*derived_phrases(env, calls, outcome), *phrases]),
            reply_excludes=tuple(excludes),
            reference_reply=reference,
            optimal_steps=reads + len(writes) + replies,
        ),
        tags=Tags(
            category=category,
            intents=tuple(intents),
            difficulty=difficulty,
            labels=_dedupe(label_set),
        ),
        provenance=Provenance(origin="seed", notes=title),
        review=Review(status="approved", reviewer=REVIEWER, notes="hand-written seed"),
    )
