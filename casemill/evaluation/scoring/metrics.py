"""Casemill's per-trial metrics (mode "casemill").

What tool recall and precision count on: the *tools* the case expects against the tools the
agent called and the environment executed (`ok` calls). A read tool (get_order,
list_customer_orders, ...) counts among the called tools only when the case expects it: looking
an order up before acting is never a wrong call, while an unexpected write is. A call the
environment refused or failed (a policy refusal, an injected timeout) changed nothing and is not
counted; a retry after a timeout is therefore not a repeat. Set-based metrics count each tool
once; the multiset variants count repeats (a refund issued twice halves multiset precision).

Parameter accuracy looks at every call the agent sent, executed or not, and matches expected
calls to calls one-to-one (a call satisfies one expected call), in order, under the case's
matching rules. Forbidden calls count every attempt, also one the tools refused: trying to
cancel a delivered order is the violation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from casemill.case.matching import forbidden_hit, params_match
from casemill.domains.recorded import OFF_SCRIPT
from casemill.evaluation.scoring.context import CaseContext, is_read_tool
from casemill.evaluation.trajectory import RecordedCall, Trajectory


def write_set(ctx: CaseContext, calls: Sequence[RecordedCall]) -> frozenset[str]:
    """The write tools: the domain's, else those the case declares (recorded tools) and, for
    the tools it does not, the naming rule (`is_read_tool`)."""
    if ctx.write_tools is not None:
        return ctx.write_tools
    kinds = ctx.declared_kinds or {}
    writes = {n for n, kind in kinds.items() if kind == "write"}
    return frozenset(
        writes | {c.tool for c in calls if c.tool not in kinds and not is_read_tool(c.tool)}
    )


def tool_metrics(ctx: CaseContext, calls: Sequence[RecordedCall], writes: frozenset[str]) -> dict:
    expected = ctx.expected_tools
    counted = [c.tool for c in calls if c.ok and (c.tool in expected or c.tool in writes)]
    called = set(counted)
    hit = len(expected & called)
    out: dict[str, float | None] = {
        "tool_recall": hit / len(expected) if expected else None,
        "tool_precision": hit / len(called) if called else None,
    }
    want = ctx.expected_counts
    n_expected = len(ctx.expected_calls)
    if counted:
        if len(counted) == len(called):  # no repeats: each expected tool matched at most once
            overlap = hit
        else:
            got = Counter(counted)
            overlap = sum(min(n, got.get(t, 0)) for t, n in want.items())
        out["tool_precision_multiset"] = overlap / len(counted)
    else:
        overlap = 0
        out["tool_precision_multiset"] = None
    out["tool_recall_multiset"] = overlap / n_expected if n_expected else None
    return out


def param_accuracy(ctx: CaseContext, calls: Sequence[RecordedCall]) -> float | None:
    expected = ctx.expected_calls
    if not expected:
        return None
    used = [False] * len(calls)
    matched = 0
    for want in expected:
        for index, call in enumerate(calls):
            if not used[index] and call.tool == want.tool and params_match(want, call.params):
                used[index] = True
                matched += 1
                break
    return matched / len(expected)


def forbidden_violations(
    ctx: CaseContext, calls: Sequence[RecordedCall], writes: frozenset[str]
) -> list[str]:
    out = []
    for call in calls:
        for rule in ctx.forbidden:
            if forbidden_hit(rule, call, writes):  # type: ignore[arg-type]  # duck-typed call
                why = f" ({rule.reason})" if rule.reason else ""
                out.append(f"forbidden call {call.tool}{_short(call.params)}{why}")
                break
    return out


def _short(params: dict) -> str:
    inner = ", ".join(f"{k}={v!r}" for k, v in params.items() if k not in ("summary",))
    return f"({inner[:160]})"


def phrase_hits(ctx: CaseContext, reply_lower: str) -> list[bool]:
    return [p in reply_lower for p in ctx.phrases_lower]


def excluded_found(ctx: CaseContext, reply_lower: str) -> list[str]:
    return [
        p for p, low in zip(ctx.excludes, ctx.excludes_lower, strict=True) if low in reply_lower
    ]


def efficiency(ctx: CaseContext, trajectory: Trajectory) -> float | None:
    if trajectory.steps <= 0:
        return None
    return min(1.0, ctx.optimal_steps / trajectory.steps)


def state_success(ctx: CaseContext, trajectory: Trajectory) -> float | None:
    if ctx.state_check == "calls":
        return 1.0 if writes_match(ctx, trajectory.calls) else 0.0
    if ctx.expected_state is None:
        return None
    final = trajectory.final(ctx.initial_state)
    if final is None:
        return 0.0
    return 1.0 if final == ctx.expected_state else 0.0


def writes_made(ctx: CaseContext, calls: Sequence[RecordedCall]) -> list[RecordedCall]:
    """The write calls that count as made on recorded tools: executed ones, and those nothing
    was recorded for (`off_script`: the agent tried it, and nobody knows it would have failed).
    A write answered with its recorded failure, a fault or bad parameters changed nothing."""
    writes = write_set(ctx, calls)
    return [c for c in calls if c.tool in writes and (c.ok or c.error == OFF_SCRIPT)]


def writes_match(ctx: CaseContext, calls: Sequence[RecordedCall]) -> bool:
    """The writes made and the expected calls, one to one (a multiset), under the matching
    rules: each expected call matched by its own write and no write left over."""
    made = writes_made(ctx, calls)
    if len(made) != len(ctx.expected_calls):
        return False
    fits = [
        [i for i, call in enumerate(made) if call.tool == w.tool and params_match(w, call.params)]
        for w in ctx.expected_calls
    ]
    return _perfect_matching(fits, len(made))


def _perfect_matching(fits: list[list[int]], n: int) -> bool:
    """Whether every expected call gets a write of its own among those that fit it (Kuhn's
    augmenting paths: one rule matching any value must not take the write another needs)."""
    owner: list[int | None] = [None] * n

    def place(want: int, seen: set[int]) -> bool:
        for index in fits[want]:
            if index in seen:
                continue
            seen.add(index)
            if owner[index] is None or place(owner[index], seen):  # type: ignore[arg-type]
                owner[index] = want
                return True
        return False

    return all(place(want, set()) for want in range(len(fits)))


def off_script_calls(calls: Sequence[RecordedCall]) -> int:
    """Calls nothing was recorded for (recorded tools only)."""
    return sum(1 for c in calls if c.error == OFF_SCRIPT)
