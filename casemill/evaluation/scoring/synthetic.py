"""Recorded trajectories built from a case, for tests and benchmarks of scoring.

`synthetic_trajectory(case, behaviour)` runs real tool calls on the case's sandbox (the domain's
simulated tools) and records them the way the runner does: a read of each order the expected
calls touch, then the writes a behaviour implies, then a reply. It is not an agent: it reads
the answer off the case, then departs from it in one chosen way, so scoring can be checked
against known mistakes.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from casemill.case.model import Case
from casemill.domains import get_domain
from casemill.evaluation.trajectory import RecordedCall, Trajectory

Behaviour = Literal[
    "correct",
    "skip_write",
    "wrong_params",
    "extra_write",
    "no_phrases",
    "repeat_write",
    "error",
]
BEHAVIOURS: tuple[str, ...] = (
    "correct",
    "skip_write",
    "wrong_params",
    "extra_write",
    "no_phrases",
    "repeat_write",
    "error",
)


def _perturb(params: dict[str, Any]) -> dict[str, Any]:
    out = dict(params)
    if "amount" in out:
        out["amount"] = round(float(out["amount"]) + 5.0, 2)
    elif "item_ids" in out:
        out["item_ids"] = [*out["item_ids"], "I9"]
    elif "order_id" in out:
        out["order_id"] = "W9999"
    return out


def _planned_calls(case: Case, behaviour: str) -> list[tuple[str, dict[str, Any]]]:
    expected = [(c.tool, dict(c.params)) for c in case.expected.tool_calls]
    orders = sorted({str(p["order_id"]) for _, p in expected if p.get("order_id")})
    reads = [("get_order", {"order_id": o}) for o in orders]
    if behaviour == "skip_write":
        return reads
    if behaviour == "wrong_params" and expected:
        tool, params = expected[0]
        expected[0] = (tool, _perturb(params))
    if behaviour == "extra_write":
        expected.append(("escalate_to_human", {"reason": "customer_request", "summary": "extra"}))
    if behaviour == "repeat_write" and expected:
        expected.append(expected[-1])
    return reads + expected


def _reply(case: Case, behaviour: str) -> str:
    if behaviour == "no_phrases" or not case.expected.reply_contains:
        return "Thanks for reaching out; I have looked into your request."
    return "Done: " + "; ".join(case.expected.reply_contains) + ". Anything else?"


def _execute(sandbox: Any, planned: list[tuple[str, dict[str, Any]]]) -> tuple[list, list]:
    """Run the planned calls on the sandbox (if any); the recorded calls and their messages."""
    calls: list[RecordedCall] = []
    messages: list[dict[str, Any]] = []
    for index, (tool, params) in enumerate(planned):
        call_id = f"call_{index}"
        if sandbox is not None:
            r = sandbox.call(tool, params, call_id=call_id)
            call = RecordedCall(tool=tool, params=params, ok=r.ok, result=r.content, error=r.error)
        else:
            call = RecordedCall(tool=tool, params=params)
        calls.append(call.model_copy(update={"call_id": call_id}))
        function = {"name": tool, "arguments": params}
        tool_call = {"id": call_id, "type": "function", "function": function}
        messages.append({"role": "assistant", "content": None, "tool_calls": [tool_call]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": str(call.result)})
    return calls, messages


def synthetic_trajectory(
    case: Case,
    behaviour: str = "correct",
    *,
    agent: str = "synthetic",
    trial: int = 0,
    rng: random.Random | None = None,
) -> Trajectory:
    """A trajectory of `case` that departs from the expected behaviour as `behaviour` says."""
    rng = rng or random.Random(0)
    domain = get_domain(case.domain)
    sandbox = domain.sandbox(case.environment, faults=False) if domain.has_simulator else None
    calls, messages = _execute(sandbox, _planned_calls(case, behaviour))
    messages.insert(0, {"role": "user", "content": case.customer_text})
    failed = behaviour == "error"
    reply = None if failed else _reply(case, behaviour)
    if reply:
        messages.append({"role": "assistant", "content": reply})
    return Trajectory(
        case_id=case.id,
        trial=trial,
        agent=agent,
        agent_fingerprint=f"{agent}-fp",
        messages=tuple(messages),
        calls=tuple(calls),
        final_reply=reply,
        steps=len(calls) + (0 if failed else 1),
        latency_s=round(rng.uniform(0.05, 2.0), 3),
        prompt_tokens=rng.randint(200, 2000),
        completion_tokens=rng.randint(20, 300),
        final_state=sandbox.comparable_state() if sandbox is not None else None,
        error="RuntimeError: agent crashed" if failed else None,
        error_kind="exception" if failed else None,
    )
