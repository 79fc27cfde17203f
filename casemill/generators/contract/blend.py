"""Intent interpolation on the contract: the customer also asks for another write
(`Contract.requests`), and the pack's conflict rule and policy decide the label.

The label rules:
- `blend_request`: a request on an entity no expected write names, which the case does not
  already forbid (a case resolved by reads alone forbids any write only because none was asked:
  that rule goes). The policy is asked on the
  state the expected calls leave: allowed, the write joins the expected calls; refused, it is
  forbidden on its entity and the reply must hold the pack's refusal phrases. The rest stays.
- `blend_conflict`: a request that conflicts (`Contract.conflicts`) with an expected write: the
  customer wants two things that cannot both happen, so the agent asks which. Both writes on
  that entity are forbidden and the outcome is clarify; expected writes on other entities stay
  (only the conflicting request is unclear).
"""

from __future__ import annotations

import random

from casemill.case.matching import forbidden_hit
from casemill.case.model import Case, ExpectedCall, ForbiddenCall, ToolCall, derive
from casemill.domains.contract import entity_of, rule_for
from casemill.generators.contract import (
    Pack,
    forbid,
    pack_of,
    refusals,
    relabel,
    say_also,
    state_after,
    tagged,
    writes,
)
from casemill.generators.framework import NotApplicable, operator

BLEND_RULE = (
    "another request added: no conflict, the policy labels it (allowed: expected; refused: "
    "forbidden); a conflict with an expected write: clarify, both writes on that entity forbidden"
)


@operator(kind="interpolation", name="blend_request", version="1", label_rule=BLEND_RULE)
def blend_request(case: Case, rng: random.Random) -> list[Case]:
    """The customer also asks for a write on another of their entities."""
    pack = pack_of(case)
    if case.expected.outcome == "escalate":
        raise NotApplicable("a case handed to a human: the agent does nothing after the handoff")
    planned = writes(pack, case)
    named = {entity_of(pack.contract, dict(c.params)) for c in planned}
    rules = _standing(case, planned)
    options = [
        r
        for r in pack.contract.requests(case)
        if entity_of(pack.contract, dict(r.call.params)) not in named
        and not any(pack.contract.conflicts(r.call, c) for c in planned)
        and not _forbidden(pack, rules, r.call)
    ]
    if not options:
        raise NotApplicable("no other request this customer could make")
    request = rng.choice(options)
    calls = list(case.expected.tool_calls)
    reasons = refusals(pack, case.environment.state, [*calls, request.call])
    if reasons is None or any(reasons[:-1]):
        raise NotApplicable("the request does not replay after the expected calls")
    rule = rule_for(pack.contract, request.call.tool)
    after = state_after(pack, case.environment.state, calls)
    if reasons[-1] and rule and rule.outcome(after, dict(request.call.params)) != "refuse":
        raise NotApplicable("the request would be escalated or clarified, not refused")
    e = case.expected
    if reasons[-1]:
        expected = relabel(
            case,
            calls=calls,
            outcome=e.outcome if planned else "refuse",
            contains=(*e.reply_contains, *pack.contract.refusal_phrases("refuse")),
            forbidden=(forbid(pack, request.call, f"also asked: {reasons[-1]}"),),
        )
    else:
        expected = relabel(
            case, calls=[*calls, request.call], outcome="resolve", contains=e.reply_contains
        )
    kept = tuple(f for f in expected.forbidden_calls if f in rules or f not in e.forbidden_calls)
    expected = expected.model_copy(update={"forbidden_calls": kept})
    tags = tagged(case, labels=(f"blend:{request.call.tool}",))
    tags = tags.model_copy(update={"intents": (*tags.intents, request.call.tool)})
    return [derive(case, expected=expected, tags=tags, **say_also(case, request.text))]


def _standing(case: Case, planned: list[ExpectedCall]) -> tuple[ForbiddenCall, ...]:
    """The case's forbidden calls that still hold once the customer asks for one more write: a
    case resolved by reads alone forbids any write because none was asked (a status question),
    and the request asks one; every other rule stands (an unclear request still forbids all)."""
    e = case.expected
    if e.outcome == "resolve" and not planned:
        return tuple(f for f in e.forbidden_calls if not f.any_write)
    return e.forbidden_calls


def _forbidden(pack: Pack, rules: tuple[ForbiddenCall, ...], call: ExpectedCall) -> bool:
    """Whether a rule that stands forbids `call`: adding it would contradict the case."""
    made = ToolCall(tool=call.tool, params=call.params)
    return any(forbidden_hit(rule, made, pack.writes) for rule in rules)


@operator(kind="interpolation", name="blend_conflict", version="1", label_rule=BLEND_RULE)
def blend_conflict(case: Case, rng: random.Random) -> list[Case]:
    """The customer also asks for a write that cannot happen beside an expected one."""
    pack = pack_of(case)
    planned = writes(pack, case)
    pairs = [
        (r, c)
        for r in pack.contract.requests(case)
        for c in planned
        if pack.contract.conflicts(r.call, c) and r.call.tool != c.tool
    ]
    if not pairs:
        raise NotApplicable("no request conflicts with an expected write")
    request, call = rng.choice(pairs)
    entity = entity_of(pack.contract, dict(call.params))
    kept = [
        c
        for c in case.expected.tool_calls
        if c.tool not in pack.writes or entity_of(pack.contract, dict(c.params)) != entity
    ]
    if refusals(pack, case.environment.state, kept) is None:
        raise NotApplicable("the other calls depend on the conflicting write")
    why = "conflicting requests: ask which one the customer wants"
    expected = relabel(
        case,
        calls=kept,
        outcome=case.expected.outcome if any(c.tool in pack.writes for c in kept) else "clarify",
        contains=(),
        forbidden=(forbid(pack, call, why), forbid(pack, request.call, why)),
    )
    tags = tagged(case, labels=("clarify", f"blend:{request.call.tool}"))
    tags = tags.model_copy(update={"intents": (*tags.intents, request.call.tool)})
    return [derive(case, expected=expected, tags=tags, **say_also(case, request.text))]
