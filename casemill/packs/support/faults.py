"""Environment faults: a lookup times out, a write answers a server error, a record comes back
corrupted or missing (`ToolFault` in `environment.faults`, applied by the sandbox).

The label rules, precisely:
- transient (times 1) fault on the order lookup (`get_order`: timeout, server_error or
  corrupted): a good agent retries; expected calls, outcome and phrases stay, one more step;
- persistent fault on the order lookup (times 10: timeout, server_error, corrupted or missing):
  the agent cannot verify the order, so it writes nothing it was going to write (each such write
  forbidden on that order), tells the customer and escalates: expected = the reads +
  `escalate_to_human(reason=tool_failure, order_id)`, outcome `escalate`, reply contains `human`;
- transient server_error on the expected write: retrying is safe (the failed call changed
  nothing); expected stays, one more step;
- persistent server_error on the expected write: the attempt fails every time, so the final state
  must not contain it: expected = the reads + the escalation (tool_failure), outcome `escalate`;
  the failing write itself is not forbidden (attempting it is right), every other write tool on
  that order is (no wrong substitute such as a cancellation instead of a refund).
"""

from __future__ import annotations

import random

from casemill.case.matching import forbidden_hit
from casemill.case.model import Case, ExpectedCall, ForbiddenCall, ToolCall, ToolFault
from casemill.domains.support.policy import escalate_call
from casemill.domains.support.tools import WRITE_TOOLS
from casemill.generators.framework import NotApplicable, operator
from casemill.packs.support.facts import (
    forbid_write,
    make_expected,
    phrases,
    primary_order,
    read_steps,
    reads,
    rebuild,
    signed_in,
    state_view,
    support_only,
    with_tags,
    writes,
)

FAULT_RULE = (
    "no wrong write: a transient fault keeps expected (+1 step for the retry); a "
    "persistent lookup fault forbids the planned writes and expects escalate_to_human "
    "(tool_failure), not the lookup that cannot succeed; a persistent write fault expects the escalation instead of the "
    "write and forbids other writes on the order"
)
PERSISTENT = 10


def _faulted(case: Case, fault: ToolFault, expected: object) -> Case:
    tags = with_tags(case, category="robustness", add_labels=(f"fault:{fault.kind}",))
    if expected.outcome != case.expected.outcome:
        tags = with_tags(
            case,
            category="robustness",
            add_labels=(f"fault:{fault.kind}",),
            drop_labels=("clarify",),
        )
    return rebuild(case, faults=(*case.environment.faults, fault), expected=expected, tags=tags)


def _needs_lookup(case: Case) -> str:
    support_only(case)
    if case.environment.faults:
        raise NotApplicable("already has faults")
    oid = primary_order(case)
    if read_steps(case) < 1:
        raise NotApplicable("a good agent needs no lookup here")
    who = signed_in(case)
    if who is None or state_view(case).orders[oid].customer_id != who[0]:
        raise NotApplicable("the order is not the signed-in customer's: no lookup is certain")
    return oid


def _retry(case: Case, extra_steps: int) -> object:
    return case.expected.model_copy(
        update={"optimal_steps": case.expected.optimal_steps + extra_steps}
    )


def _escalation(
    case: Case,
    oid: str,
    forbidden: list[ForbiddenCall],
    reads_needed: int,
    *,
    failing_read: str | None = None,
) -> object:
    """Expected: the case's reads (less the one that keeps failing: it can never succeed, so no
    agent can be asked for it), then the escalation."""
    kept = [
        c
        for c in reads(case)
        if not (c.tool == failing_read and str(c.params.get("order_id")) == oid)
    ]
    calls: list[ExpectedCall] = [*kept, escalate_call("tool_failure", oid)]
    for rule in case.expected.forbidden_calls:
        if not any(
            forbidden_hit(rule, ToolCall(tool=c.tool, params=c.params), WRITE_TOOLS) for c in calls
        ):
            forbidden.append(rule)
    return make_expected(
        calls=calls,
        outcome="escalate",
        reads_needed=reads_needed,
        contains=phrases("escalate", "escalate"),
        excludes=case.expected.reply_excludes,
        forbidden=tuple(forbidden),
    )


@operator(kind="fault", name="fault_lookup_transient", version="1", label_rule=FAULT_RULE)
def fault_lookup_transient(case: Case, rng: random.Random) -> list[Case]:
    """The order lookup fails once (timeout, server error or a corrupted record)."""
    oid = _needs_lookup(case)
    kind = rng.choice(["timeout", "server_error", "corrupted"])
    fault = ToolFault(tool="get_order", kind=kind, params={"order_id": oid}, times=1)
    return [_faulted(case, fault, _retry(case, 1))]


@operator(kind="fault", name="fault_lookup_persistent", version="2", label_rule=FAULT_RULE)
def fault_lookup_persistent(case: Case, rng: random.Random) -> list[Case]:
    """The order lookup keeps failing: the agent escalates and writes nothing else."""
    oid = _needs_lookup(case)
    if case.expected.outcome in ("escalate", "clarify"):
        raise NotApplicable("an escalation or a clarifying question needs no verified order")
    kind = rng.choice(["timeout", "server_error", "corrupted", "missing"])
    fault = ToolFault(tool="get_order", kind=kind, params={"order_id": oid}, times=PERSISTENT)
    forbidden = [forbid_write(c, "the order could not be verified") for c in writes(case)]
    expected = _escalation(case, oid, forbidden, read_steps(case), failing_read="get_order")
    return [_faulted(case, fault, expected)]


def _single_write(case: Case) -> ExpectedCall:
    support_only(case)
    if case.environment.faults:
        raise NotApplicable("already has faults")
    ws = writes(case)
    if case.expected.outcome != "resolve" or len(ws) != 1 or ws[0].tool == "escalate_to_human":
        raise NotApplicable("needs exactly one expected write")
    if not ws[0].params.get("order_id"):
        raise NotApplicable("the write names no order")
    return ws[0]


@operator(kind="fault", name="fault_write_transient", version="1", label_rule=FAULT_RULE)
def fault_write_transient(case: Case, rng: random.Random) -> list[Case]:
    """The expected write answers a server error once; the retry succeeds."""
    call = _single_write(case)
    fault = ToolFault(
        tool=call.tool, kind="server_error", params={"order_id": call.params["order_id"]}, times=1
    )
    return [_faulted(case, fault, _retry(case, 1))]


@operator(kind="fault", name="fault_write_persistent", version="1", label_rule=FAULT_RULE)
def fault_write_persistent(case: Case, rng: random.Random) -> list[Case]:
    """The expected write answers a server error every time: escalate instead."""
    call = _single_write(case)
    oid = str(call.params["order_id"])
    fault = ToolFault(
        tool=call.tool, kind="server_error", params={"order_id": oid}, times=PERSISTENT
    )
    others = sorted(WRITE_TOOLS - {call.tool, "escalate_to_human"})
    forbidden = [
        ForbiddenCall(
            tool=t, params={"order_id": oid}, reason="no substitute write when the right one fails"
        )
        for t in others
    ]
    return [_faulted(case, fault, _escalation(case, oid, forbidden, read_steps(case) + 1))]
