"""Faults on the contract: any tool of the pack, read or write, misbehaves on the entity the
case's write names (`ToolFault` in `environment.faults`, applied by the sandbox).

The label rules:
- transient (times 1: timeout, server error, or a corrupted result for a read): a good agent
  retries; expected calls, outcome and phrases stay, one more step;
- persistent (every time) on the expected write: it can never succeed, so it leaves the expected
  calls; the pack's escalation takes its place (outcome escalate, its phrases), and every other
  write on that entity is forbidden (no substitute for the right one);
- persistent on a read of that entity: the agent cannot verify it, so it writes nothing on it
  (the planned writes forbidden) and escalates.
Faults go only on cases whose writes all name one entity, so nothing else depends on the call.
"""

from __future__ import annotations

import random

from casemill.case.model import Case, ExpectedCall, ForbiddenCall, ToolFault, derive
from casemill.domains.base import specs_by_name
from casemill.domains.contract import EntityKind, entity_of
from casemill.generators.contract import Pack, forbid, pack_of, relabel, tagged, writes
from casemill.generators.framework import NotApplicable, operator

FAULT_RULE = (
    "transient: expected kept, +1 step for the retry; persistent on the write or on a read of "
    "its entity: the writes on that entity forbidden, the pack's escalation expected instead"
)
PERSISTENT = 10


def _target(pack: Pack, case: Case) -> tuple[EntityKind, str, list[ExpectedCall]]:
    if case.environment.faults:
        raise NotApplicable("already has faults")
    planned = writes(pack, case)
    entities = {entity_of(pack.contract, dict(c.params)) for c in planned}
    if len(entities) != 1 or None in entities:
        raise NotApplicable("needs expected writes that all name one entity")
    kind, entity = entities.pop()
    return kind, entity, planned


def _taking(pack: Pack, param: str, tools: frozenset[str]) -> list[str]:
    """The tools of `tools` that take `param`."""
    specs = specs_by_name(pack.domain.tool_specs)
    return sorted(
        name
        for name, spec in specs.items()
        if name in tools and param in spec["function"].get("parameters", {}).get("properties", {})
    )


def _faulted(case: Case, fault: ToolFault, expected: object) -> Case:
    tags = tagged(case, category="robustness", labels=(f"fault:{fault.kind}",))
    env = case.environment.model_copy(update={"faults": (fault,)})
    return derive(case, environment=env, expected=expected, tags=tags)


@operator(kind="fault", name="fault_transient", version="1", label_rule=FAULT_RULE)
def fault_transient(case: Case, rng: random.Random) -> list[Case]:
    """A read of the entity, or the write itself, fails once; the retry succeeds."""
    pack = pack_of(case)
    kind, entity, planned = _target(pack, case)
    tools = [*_taking(pack, kind.param, pack.domain.read_tools), *sorted({c.tool for c in planned})]
    tool = rng.choice(tools)
    kinds = ["timeout", "server_error"] + (["corrupted"] if tool in pack.domain.read_tools else [])
    fault = ToolFault(tool=tool, kind=rng.choice(kinds), params={kind.param: entity}, times=1)
    e = case.expected
    expected = relabel(
        case, calls=list(e.tool_calls), outcome=e.outcome, contains=e.reply_contains, extra_steps=1
    )
    return [_faulted(case, fault, expected)]


@operator(kind="fault", name="fault_persistent", version="1", label_rule=FAULT_RULE)
def fault_persistent(case: Case, rng: random.Random) -> list[Case]:
    """A read of the entity, or the write, fails every time: escalate, write nothing on it."""
    pack = pack_of(case)
    kind, entity, planned = _target(pack, case)
    if case.expected.outcome != "resolve":
        raise NotApplicable("needs a case that resolves with its writes")
    escalation = pack.contract.escalation("tool_failure", entity)
    if escalation is None or any(c.tool == escalation.tool for c in planned):
        raise NotApplicable("the pack has no escalation distinct from the planned writes")
    tools = [*_taking(pack, kind.param, pack.domain.read_tools), *sorted({c.tool for c in planned})]
    tool = rng.choice(tools)
    kinds = ["timeout", "server_error"]  # a record "not found" would say the id is wrong
    fault = ToolFault(
        tool=tool, kind=rng.choice(kinds), params={kind.param: entity}, times=PERSISTENT
    )
    if tool in pack.domain.read_tools:
        reason = f"{kind.name} {entity} could not be verified"
        forbidden = tuple(forbid(pack, c, reason) for c in planned)
    else:
        others = _taking(pack, kind.param, pack.writes - {tool, escalation.tool})
        forbidden = tuple(
            ForbiddenCall(
                tool=t, params={kind.param: entity}, reason="no substitute when the write fails"
            )
            for t in others
        )
    calls = [c for c in case.expected.tool_calls if c not in planned] + [escalation]
    expected = relabel(
        case,
        calls=calls,
        outcome="escalate",
        contains=pack.contract.refusal_phrases("escalate"),
        forbidden=forbidden,
        extra_steps=1,
    )
    return [_faulted(case, fault, expected)]
