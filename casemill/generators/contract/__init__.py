"""Operators written against the domain contract (`casemill.domains.contract`): they apply to a
case of any pack that has one (support, airline, a team's own), and to nothing else.

What they share lives here: finding the case's contract, the customer's words (the last customer
turn, else the scenario a simulated customer plays), replaying expected calls on the pack's
sandbox, and asking the pack's rules about each write on the state the calls before it leave.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from casemill.case.model import (
    Case,
    Expected,
    ExpectedCall,
    ForbiddenCall,
    Tags,
)
from casemill.domains import get_domain
from casemill.domains.base import Domain, replayed
from casemill.domains.contract import Contract, contract_for, entity_of, rule_for
from casemill.generators.framework import NotApplicable

# appended to a simulated customer's scenario when an edit refuses what it asks for: a
# customer who then asks for something else would make the policy's label a guess
ACCEPT_REFUSAL = (
    "If the agent says it cannot do what you asked, accept that and do not ask for anything else."
)


@dataclass(frozen=True)
class Pack:
    """A case's domain pack and its contract."""

    domain: Domain
    contract: Contract

    @property
    def writes(self) -> frozenset[str]:
        return self.domain.write_tools


def pack_of(case: Case) -> Pack:
    """The case's pack, if it has a contract and a simulator; else `NotApplicable`."""
    contract = contract_for(case.domain)
    if contract is None:
        raise NotApplicable(f"domain {case.domain!r} has no contract (docs/domains.md)")
    return Pack(get_domain(case.domain), contract)


def writes(pack: Pack, case: Case) -> list[ExpectedCall]:
    return [c for c in case.expected.tool_calls if c.tool in pack.writes]


def state_after(pack: Pack, state: dict[str, Any], calls: list[ExpectedCall]) -> dict[str, Any]:
    """The state `calls` leave when replayed on `state` (a failing call changes nothing)."""
    return replayed(pack.domain, state, [(c.tool, c.params) for c in calls]).final_state()


def refusals(pack: Pack, state: dict[str, Any], calls: list[ExpectedCall]) -> list[str] | None:
    """For each call, the reason the pack's rules refuse it on the state it meets ("" when
    allowed); None when a call the rules allow fails on replay. A refused call may fail (a
    sandbox that enforces the policy refuses it and changes nothing) without breaking the rest."""
    sandbox = replayed(pack.domain, state, ())
    out = []
    for call in calls:
        rule = rule_for(pack.contract, call.tool)
        why = (rule.check(sandbox.peek_state(), dict(call.params)) or "") if rule else ""
        if not sandbox.call(call.tool, dict(call.params)).ok and not why:
            return None
        out.append(why)
    return out


def allowed(pack: Pack, state: dict[str, Any], calls: list[ExpectedCall]) -> bool:
    """Every call replays and every write is allowed on the state it meets."""
    reasons = refusals(pack, state, calls)
    return reasons is not None and not any(reasons)


def no_tool_history(case: Case) -> None:
    """Operators that change what a read returns cannot run on a history of tool results: the
    edited state would contradict them."""
    if any(t.role == "tool" for t in case.conversation):
        raise NotApplicable("the history holds tool results the edit would contradict")


def say_also(case: Case, text: str) -> dict[str, Any]:
    """Updates that add `text` to the customer's last turn, else to the scenario."""
    turns = list(case.conversation)
    for index in range(len(turns) - 1, -1, -1):
        if turns[index].role == "customer":
            old = turns[index].content.rstrip()
            turns[index] = turns[index].model_copy(update={"content": f"{old} {text}"})
            return {"conversation": tuple(turns)}
    if case.user_scenario:
        return {"user_scenario": f"{case.user_scenario.rstrip()} {text}"}
    raise NotApplicable("no customer turn and no scenario")


def forbid(pack: Pack, call: ExpectedCall, reason: str) -> ForbiddenCall:
    """The rule that forbids `call` on the entity it names (any parameters else)."""
    found = entity_of(pack.contract, dict(call.params))
    params = {found[0].param: found[1]} if found else dict(call.params)
    return ForbiddenCall(tool=call.tool, params=params, reason=reason)


def relabel(
    case: Case,
    *,
    calls: list[ExpectedCall],
    outcome: str,
    contains: tuple[str, ...],
    forbidden: tuple[ForbiddenCall, ...] = (),
    extra_steps: int = 0,
    excludes: tuple[str, ...] = (),
) -> Expected:
    """The case's expected state with these calls: steps move with the number of calls."""
    e = case.expected
    steps = max(1, e.optimal_steps + len(calls) - len(e.tool_calls) + extra_steps)
    return Expected(
        tool_calls=tuple(calls),
        forbidden_calls=uniq((*e.forbidden_calls, *forbidden)),
        outcome=outcome,
        reply_contains=uniq(contains),
        reply_excludes=uniq((*e.reply_excludes, *excludes)),
        optimal_steps=steps,
    )


def tagged(case: Case, *, category: str | None = None, labels: tuple[str, ...] = ()) -> Tags:
    t = case.tags
    return t.model_copy(
        update={
            "category": category or t.category,
            "labels": uniq((*t.labels, *labels)),
        }
    )


def uniq(values: Any) -> tuple:
    out: list = []
    for v in values:
        if v not in out:
            out.append(v)
    return tuple(out)
