"""Valid support cases for the review tests: a seed (parent) and generated children."""

from __future__ import annotations

from casemill.case.model import Case, Expected, OperatorStep, Provenance, Tags, Turn
from casemill.domains.support.policy import cancel_call, refund_call

SYSTEM = "Authenticated customer: C1001 (Ana Diaz, ana.diaz@example.com)"


def state(status: str = "delivered", price: float = 14.5) -> dict:
    return {
        "customers": {
            "C1001": {"id": "C1001", "name": "Ana Diaz", "email": "ana.diaz@example.com"}
        },
        "orders": {
            "W1001": {
                "id": "W1001",
                "customer_id": "C1001",
                "status": status,
                "items": [
                    {"item_id": "I1", "name": "Ceramic mug 12oz", "price": price},
                    {"item_id": "I2", "name": "Linen napkins", "price": 9.0},
                ],
            }
        },
    }


def seed_case(text: str = "My mug from order W1001 arrived cracked, please refund it.") -> Case:
    return Case(
        domain="support",
        environment={"state": state()},
        conversation=(Turn(role="system", content=SYSTEM), Turn(role="customer", content=text)),
        expected=Expected(
            tool_calls=(refund_call("W1001", ["I1"], "damaged"),),
            outcome="resolve",
            reply_contains=("14.50", "refund"),
            optimal_steps=3,
        ),
        tags=Tags(category="capability", intents=("refund",), difficulty="easy"),
        provenance=Provenance(origin="seed"),
    )


def child_case(
    parent: Case, n: int, operator: str = "typos", intent: str = "refund", text: str | None = None
) -> Case:
    """A generated child of `parent` whose customer text differs by `n` (unique ids)."""
    words = text or f"My mugg from order W1001 arived crackd ({n}), refund it pls."
    intents = (intent,)
    expected = parent.expected
    env = parent.environment
    if intent == "cancel":
        env = {"state": state(status="pending")}
        expected = Expected(
            tool_calls=(cancel_call("W1001"),),
            outcome="resolve",
            reply_contains=("cancelled",),
            optimal_steps=3,
        )
    return Case(
        domain="support",
        environment=env,
        conversation=(parent.conversation[0], Turn(role="customer", content=words)),
        expected=expected,
        tags=Tags(category="robustness", intents=intents, difficulty="medium"),
        provenance=Provenance(
            origin="generated",
            parents=(parent.id,),
            operators=(OperatorStep(kind="noise", name=operator, version="1", args={"rate": 0.1}),),
            seed=n,
        ),
    )


def invalid_case(parent: Case, n: int) -> Case:
    """A child whose expected refund names an item the order does not have."""
    return Case(
        domain="support",
        environment=parent.environment,
        conversation=(
            parent.conversation[0],
            Turn(role="customer", content=f"Refund the vase ({n}) from W1001"),
        ),
        expected=Expected(
            tool_calls=(refund_call("W1001", ["I9"], "damaged"),),
            outcome="resolve",
            optimal_steps=3,
        ),
        tags=Tags(category="robustness", intents=("refund",)),
        provenance=Provenance(
            origin="generated",
            parents=(parent.id,),
            operators=(OperatorStep(kind="swap", name="entity_swap", version="1"),),
        ),
    )


GUESS_NOTE = "expected calls are what the agent did: observed, may be wrong; unresolved"


def guessed_case(n: int) -> Case:
    """A mined case whose label is a low-confidence guess (`needs_label`), as the miner writes
    one for a conversation it could not resolve."""
    seed = seed_case(f"My mug from order W1001 arrived cracked ({n}), please refund it.")
    return Case.model_validate(
        {
            **seed.model_dump(mode="json"),
            "id": "",
            "tags": {
                "category": "capability",
                "intents": ["refund"],
                "labels": ["mined", "conversation", "needs_label"],
            },
            "provenance": {
                "origin": "mined",
                "operators": [{"kind": "mine", "name": "conversation", "version": "1"}],
                "label_confidence": "low",
                "notes": GUESS_NOTE,
            },
        }
    )
