"""Counterfactual precondition flip: edit the environment so that one of the pack's rules refuses
a write the case expects, and let the policy label the result.

The label rule, precisely: one expected write, allowed on the state it meets, is chosen with
one of its rule's flips (`Rule.flips`); the flip edits the initial state. Every other expected
write must name another entity of the same kind (else it may depend on the refused one). The
candidate is kept only if, on the edited state, that write is now refused and every other expected call still
replays and is allowed. The refused write leaves the expected calls and is forbidden on its
entity (unless no read tool shows the edited fact, `Flip.visible`: then only trying the write
tells the agent); with no write left the outcome is the rule's refusal (escalate, with the
pack's escalation call, when the rule says only a human can help), with writes left it stays;
the reply must hold the pack's refusal phrases; phrases about the removed write are no longer
required. A simulated customer is told to accept the refusal. Not on a case whose history holds
tool results (the edited state would contradict them).
"""

from __future__ import annotations

import copy
import random

from casemill.case.model import Case, Environment, derive
from casemill.domains.contract import Flip, entity_of, rule_for
from casemill.generators.contract import (
    ACCEPT_REFUSAL,
    Pack,
    allowed,
    forbid,
    no_tool_history,
    pack_of,
    refusals,
    relabel,
    state_after,
    tagged,
)
from casemill.generators.framework import NotApplicable, operator

FLIP_RULE = (
    "an environment edit makes the pack's rule refuse one expected write (checked on the edited "
    "state, the other calls still allowed): that write forbidden on its entity, outcome the "
    "rule's refusal when no write is left, the pack's refusal phrases required"
)


@operator(kind="outcome_flip", name="flip_precondition", version="1", label_rule=FLIP_RULE)
def flip_precondition(case: Case, rng: random.Random) -> list[Case]:
    """Flip one precondition of one expected write so that the policy refuses it."""
    pack = pack_of(case)
    no_tool_history(case)
    calls = list(case.expected.tool_calls)
    state = case.environment.state
    before = refusals(pack, state, calls)
    if before is None or any(before):
        raise NotApplicable("the expected calls do not all replay as allowed")
    choices = [
        (index, flip)
        for index, call in enumerate(calls)
        if call.tool in pack.writes and (rule := rule_for(pack.contract, call.tool))
        for flip in rule.flips
    ]
    if not choices:
        raise NotApplicable("no expected write has a rule with a flip")
    rng.shuffle(choices)
    for index, flip in choices:
        made = _flipped(case, pack, index, flip)
        if made is not None:
            return [made]
    raise NotApplicable("no flip refuses an expected write while the others stay allowed")


def _flipped(case: Case, pack: Pack, index: int, flip: Flip) -> Case | None:
    call = case.expected.tool_calls[index]
    if not _independent(pack, case, index):
        return None
    state = copy.deepcopy(case.environment.state)
    change = flip.edit(state, dict(call.params))
    if change is None:
        return None
    calls = list(case.expected.tool_calls)
    reasons = refusals(pack, state, calls[: index + 1])
    if reasons is None or not reasons[index]:
        return None  # the edit did not flip the rule (or broke the calls before)
    kept = calls[:index] + calls[index + 1 :]
    rule = rule_for(pack.contract, call.tool)
    before = state_after(pack, state, calls[:index])
    refusal = rule.outcome(before, dict(call.params))
    found = entity_of(pack.contract, dict(call.params))
    entity = found[1] if found else None
    escalation = pack.contract.escalation(reasons[index], entity) if refusal == "escalate" else None
    if refusal == "escalate":
        if escalation is None:
            return None
        kept.append(escalation)
    if not allowed(pack, state, kept):
        return None
    left = [c for c in kept if c.tool in pack.writes and c is not escalation]
    outcome = case.expected.outcome if left else refusal
    refused = forbid(pack, call, f"counterfactual: {reasons[index]}")
    expected = relabel(
        case,
        calls=kept,
        outcome=outcome,
        contains=pack.contract.refusal_phrases(refusal),
        forbidden=(refused,) if flip.visible else (),
    )
    updates = {
        "environment": Environment(state=state, faults=case.environment.faults),
        "expected": expected,
        "tags": tagged(case, labels=(f"flip:{flip.name}",)),
    }
    if case.user_scenario and not case.conversation:
        updates["user_scenario"] = f"{case.user_scenario.rstrip()} {ACCEPT_REFUSAL}"
    return derive(case, **updates)


def _independent(pack: Pack, case: Case, index: int) -> bool:
    """Whether the other expected writes stand without this one: each names another entity of
    the same kind (a booking made to replace a cancelled trip, say, would not)."""
    call = case.expected.tool_calls[index]
    mine = entity_of(pack.contract, dict(call.params))
    for other, c in enumerate(case.expected.tool_calls):
        if other == index or c.tool not in pack.writes:
            continue
        theirs = entity_of(pack.contract, dict(c.params))
        if mine is None or theirs is None or theirs[0] != mine[0] or theirs[1] == mine[1]:
            return False
    return True
