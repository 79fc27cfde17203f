"""What the operators need to know about a support case, and how they rebuild one.

Reading: the signed-in customer (from the system turn), the parsed state, the expected writes
and the `Intent`s they stand for, the reads a good agent needs. Writing: `rebuild` makes a new
case from edited parts through `derive` (never by mutation), and `expected_for` turns policy
decisions into an `Expected` that follows the support conventions (reply vocabulary,
`optimal_steps` = reads + writes + 1).
"""

from __future__ import annotations

import re
from typing import Any

from casemill.case.model import (
    Case,
    Environment,
    Expected,
    ExpectedCall,
    ForbiddenCall,
    Tags,
    ToolFault,
    Turn,
    derive,
)
from casemill.domains.support.session import order_ids_of
from casemill.domains.support.state import SupportState
from casemill.domains.support.tools import READ_TOOLS, WRITE_TOOLS
from casemill.generators.contract import uniq
from casemill.generators.framework import NotApplicable

AUTH_RE = re.compile(r"Authenticated customer: (C\d+) \((.+), ([^,()\s]+@[^,()\s]+)\)")
WRITE_FOR_INTENT = {
    "refund": "refund_items",
    "cancel": "cancel_order",
    "change_address": "change_shipping_address",
    "exchange": "exchange_item",
    "escalate": "escalate_to_human",
}


def support_only(case: Case) -> None:
    if case.domain != "support" or not case.conversation:
        raise NotApplicable("needs a support case with a conversation")


def conversation_only(case: Case) -> None:
    """Operators that only edit customer text (noise) apply to a case of any domain."""
    if not case.conversation:
        raise NotApplicable("needs a case with a conversation")


def state_of(case: Case) -> SupportState:
    """A fresh parsed copy of the case's state, safe to edit."""
    return SupportState.parse(case.environment.state)


_VIEWS: dict[str, SupportState] = {}


def state_view(case: Case) -> SupportState:
    """The parsed state of `case` for reading only (cached by content id; never edit it)."""
    view = _VIEWS.get(case.id)
    if view is None:
        if len(_VIEWS) > 512:
            _VIEWS.clear()
        view = _VIEWS[case.id] = SupportState.parse(case.environment.state)
    return view


def signed_in(case: Case) -> tuple[str, str, str] | None:
    """(customer id, name, email) from the system turn, or None."""
    for turn in case.conversation:
        if turn.role == "system":
            m = AUTH_RE.search(turn.content)
            if m:
                return m.group(1), m.group(2), m.group(3)
    return None


def writes(case: Case) -> list[ExpectedCall]:
    return [c for c in case.expected.tool_calls if c.tool in WRITE_TOOLS]


def reads(case: Case) -> list[ExpectedCall]:
    return [c for c in case.expected.tool_calls if c.tool in READ_TOOLS]


def read_steps(case: Case) -> int:
    """How many reads the seed's `optimal_steps` allows (steps - writes - final reply)."""
    return max(0, case.expected.optimal_steps - len(writes(case)) - 1)


def order_ids_in_text(case: Case) -> list[str]:
    """Order ids the customer names, normalised (`#w1001` -> `W1001`), in order of appearance."""
    return order_ids_of(" ".join(t.content for t in case.conversation if t.role == "customer"))


def primary_order(case: Case) -> str:
    """The order the case is about: the first expected write's, else the first the customer
    names that exists; raises NotApplicable when there is none."""
    st = state_view(case)
    for call in writes(case):
        oid = str(call.params.get("order_id", "")).lstrip("#").upper()
        if oid in st.orders:
            return oid
    for oid in order_ids_in_text(case):
        if oid in st.orders:
            return oid
    raise NotApplicable("no order the case is about")


def money(value: float) -> str:
    return f"{value:.2f}"


def phrases(
    kind: str,
    outcome: str,
    *,
    amount: float | None = None,
    city: str | None = None,
    status: str | None = None,
) -> tuple[str, ...]:
    """`reply_contains` in the support vocabulary for one resolved intent or an outcome."""
    if outcome == "refuse":
        return ("cannot",)
    if outcome == "escalate":
        return ("human",)
    if outcome == "clarify":
        return ()
    if kind == "refund":
        return (money(amount or 0.0), "refund")
    if kind == "cancel":
        return ("cancelled",)
    if kind == "change_address":
        return (city,) if city else ()
    if kind == "exchange":
        return ("exchange",)
    if kind == "status":
        return (status,) if status else ()
    if kind == "escalate":
        return ("human",)
    return ()


def refund_amount(state: SupportState, call: ExpectedCall) -> float:
    if call.params.get("amount") is not None:
        return float(call.params["amount"])
    order = state.orders[str(call.params["order_id"]).lstrip("#").upper()]
    return round(sum(order.item(i).total for i in call.params["item_ids"]), 2)


def make_expected(
    *,
    calls: list[ExpectedCall],
    outcome: str,
    reads_needed: int,
    contains: tuple[str, ...] = (),
    excludes: tuple[str, ...] = (),
    forbidden: tuple[ForbiddenCall, ...] = (),
) -> Expected:
    n_writes = sum(1 for c in calls if c.tool in WRITE_TOOLS)
    return Expected(
        tool_calls=tuple(calls),
        forbidden_calls=uniq(forbidden),
        outcome=outcome,
        reply_contains=uniq(p for p in contains if p),
        reply_excludes=uniq(excludes),
        optimal_steps=reads_needed + n_writes + 1,
    )


def compatible_forbidden(
    rules: tuple[ForbiddenCall, ...], calls: list[ExpectedCall]
) -> tuple[ForbiddenCall, ...]:
    """The rules of `rules` that none of `calls` would break."""
    from casemill.case.matching import forbidden_hit
    from casemill.case.model import ToolCall

    as_calls = [ToolCall(tool=c.tool, params=c.params) for c in calls]
    return tuple(r for r in rules if not any(forbidden_hit(r, c, WRITE_TOOLS) for c in as_calls))


def forbid_write(call: ExpectedCall, reason: str) -> ForbiddenCall:
    oid = call.params.get("order_id")
    params = {"order_id": oid} if oid else {}
    return ForbiddenCall(tool=call.tool, params=params, reason=reason)


def with_tags(
    case: Case,
    *,
    category: str | None = None,
    intents: tuple[str, ...] | None = None,
    difficulty: str | None = None,
    add_labels: tuple[str, ...] = (),
    drop_labels: tuple[str, ...] = (),
) -> Tags:
    t = case.tags
    labels = tuple(x for x in uniq((*t.labels, *add_labels)) if x not in drop_labels)
    return Tags(
        category=category or t.category,
        intents=intents if intents is not None else t.intents,
        difficulty=difficulty or t.difficulty,
        labels=labels,
    )


def rebuild(
    case: Case,
    *,
    state: SupportState | dict | None = None,
    conversation: list[Turn] | tuple[Turn, ...] | None = None,
    expected: Expected | None = None,
    tags: Tags | None = None,
    faults: tuple[ToolFault, ...] | None = None,
) -> Case:
    """A new case from `case` with the given parts replaced (validated, fresh id)."""
    updates: dict[str, Any] = {}
    if state is not None:
        st = state.dump() if isinstance(state, SupportState) else state
        updates["environment"] = Environment(
            state=st, faults=faults if faults is not None else case.environment.faults
        )
    elif faults is not None:  # the state stays the case's own (derive validates the faults)
        updates["environment"] = case.environment.model_copy(update={"faults": tuple(faults)})
    if conversation is not None:
        updates["conversation"] = tuple(conversation)
    if expected is not None:
        updates["expected"] = expected
    if tags is not None:
        updates["tags"] = tags
    return derive(case, **updates)


def last_customer_index(case: Case) -> int:
    for index in range(len(case.conversation) - 1, -1, -1):
        if case.conversation[index].role == "customer":
            return index
    raise NotApplicable("no customer turn")


def with_customer_text(case: Case, index: int, text: str) -> list[Turn]:
    turns = list(case.conversation)
    turns[index] = turns[index].model_copy(update={"content": text})
    return turns


def append_to_last_customer(case: Case, text: str, *, before: bool = False) -> list[Turn]:
    index = last_customer_index(case)
    old = case.conversation[index].content.rstrip()
    new = f"{text} {old}" if before else f"{old} {text}"
    return with_customer_text(case, index, new)
