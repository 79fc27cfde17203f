"""Small support cases and hand-written trajectories for the scoring, report, gate, judge and
CLI tests (values in the tests are computed by hand from these)."""

from __future__ import annotations

from typing import Any

from casemill.case.model import (
    Case,
    Expected,
    ExpectedCall,
    ForbiddenCall,
    OperatorStep,
    Provenance,
    Tags,
    Turn,
)
from casemill.domains import get_domain
from casemill.domains.support.policy import cancel_call, refund_call
from casemill.evaluation.trajectory import RecordedCall, Trajectory

SYSTEM = "Authenticated customer: C1001 (Ana Diaz, ana.diaz@example.com)"


def state() -> dict[str, Any]:
    address = {"street1": "1 Main St", "city": "Austin", "state": "TX", "zip": "73301"}
    return {
        "customers": {
            "C1001": {
                "id": "C1001",
                "name": "Ana Diaz",
                "email": "ana.diaz@example.com",
                "address": address,
            },
        },
        "orders": {
            "W1001": {
                "id": "W1001",
                "customer_id": "C1001",
                "status": "delivered",
                "items": [
                    {"item_id": "I1", "name": "Ceramic mug 12oz", "price": 14.5},
                    {"item_id": "I2", "name": "Cotton t-shirt", "price": 22.0},
                ],
                "address": address,
            },
            "W1002": {
                "id": "W1002",
                "customer_id": "C1001",
                "status": "pending",
                "items": [{"item_id": "I1", "name": "Desk lamp", "price": 30.0}],
                "address": address,
            },
        },
    }


def refund_case(**tags: Any) -> Case:
    """Refund the cracked mug of W1001: one write, two phrases, two forbidden calls."""
    return Case(
        domain="support",
        environment={"state": state()},
        conversation=(
            Turn(role="system", content=SYSTEM),
            Turn(
                role="customer", content="The mug in order W1001 arrived cracked. Refund it please."
            ),
        ),
        expected=Expected(
            tool_calls=(refund_call("W1001", ["I1"], "damaged"),),
            forbidden_calls=(
                ForbiddenCall(tool="cancel_order", reason="order delivered"),
                ForbiddenCall(
                    tool="refund_items", params={"item_ids": ["I2"]}, reason="shirt is fine"
                ),
            ),
            outcome="resolve",
            reply_contains=("14.50", "refund"),
            reply_excludes=("<script>",),
            optimal_steps=3,
        ),
        tags=Tags(**({"category": "capability", "intents": ("refund",)} | tags)),
    )


def cancel_case(**tags: Any) -> Case:
    return Case(
        domain="support",
        environment={"state": state()},
        conversation=(
            Turn(role="system", content=SYSTEM),
            Turn(role="customer", content="Please cancel order W1002, I changed my mind."),
        ),
        expected=Expected(
            tool_calls=(cancel_call("W1002"),),
            outcome="resolve",
            reply_contains=("cancelled",),
            optimal_steps=3,
        ),
        tags=Tags(**({"category": "capability", "intents": ("cancel",)} | tags)),
    )


def clarify_case(**tags: Any) -> Case:
    return Case(
        domain="support",
        environment={"state": state()},
        conversation=(
            Turn(role="system", content=SYSTEM),
            Turn(
                role="customer",
                content="Something in my order is broken. <script>alert('x')</script>",
            ),
        ),
        expected=Expected(
            forbidden_calls=(ForbiddenCall(any_write=True, reason="ask first"),),
            outcome="clarify",
            reply_contains=("which order",),
            optimal_steps=1,
        ),
        tags=Tags(
            **({"category": "adversarial", "intents": ("refund",), "labels": ("clarify",)} | tags)
        ),
    )


def variant_of(parent: Case, customer_text: str, operator: str = "typos") -> Case:
    """A label-preserving variant (same expected) of `parent`."""
    turns = (parent.conversation[0], Turn(role="customer", content=customer_text))
    return Case(
        domain=parent.domain,
        environment=parent.environment,
        conversation=turns,
        expected=parent.expected,
        tags=parent.tags,
        provenance=Provenance(
            origin="generated",
            parents=(parent.id,),
            operators=(OperatorStep(kind="invariant", name=operator, version="1"),),
        ),
    )


def run_calls(
    case: Case, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[RecordedCall], dict]:
    sandbox = get_domain(case.domain).sandbox(case.environment, faults=False)
    out = []
    for index, (tool, params) in enumerate(calls):
        result = sandbox.call(tool, params)
        out.append(
            RecordedCall(
                tool=tool,
                params=params,
                ok=result.ok,
                result=result.content,
                error=result.error,
                call_id=f"c{index}",
            )
        )
    return out, sandbox.comparable_state()


def trajectory(
    case: Case,
    calls: list[tuple[str, dict[str, Any]]],
    reply: str | None,
    *,
    trial: int = 0,
    agent: str = "test-agent",
    latency_s: float = 1.0,
    tokens: tuple[int, int] = (100, 20),
    error: str | None = None,
    steps: int | None = None,
) -> Trajectory:
    recorded, final = run_calls(case, calls)
    return Trajectory(
        case_id=case.id,
        trial=trial,
        agent=agent,
        agent_fingerprint="fp",
        calls=tuple(recorded),
        final_reply=reply,
        steps=steps if steps is not None else len(calls) + (1 if reply else 0),
        latency_s=latency_s,
        prompt_tokens=tokens[0],
        completion_tokens=tokens[1],
        final_state=final,
        error=error,
        error_kind="exception" if error else None,
    )


GOOD_REFUND = [
    ("get_order", {"order_id": "W1001"}),
    ("refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}),
]
GOOD_REFUND_REPLY = "I have issued a refund of $14.50 for the cracked mug."


def expected_call(tool: str, **params: Any) -> ExpectedCall:
    return ExpectedCall(tool=tool, params=params)
