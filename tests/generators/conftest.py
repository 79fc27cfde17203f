"""Small support cases built from parameters, with expected states from the policy, and
hypothesis strategies over them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from casemill.case.model import Case, ForbiddenCall, Tags
from casemill.domains.support.policy import Intent, decide
from casemill.domains.support.state import SupportState
from casemill.generators import apply_operator, get_operator
from casemill.generators.framework import NotApplicable
from casemill.packs.support.facts import WRITE_FOR_INTENT, make_expected, phrases, refund_amount
from casemill.validation.lints import lint_findings
from casemill.validation.semantic import semantic_findings

ITEMS = [
    ("Ceramic mug 12oz", "mug"),
    ("Wool scarf", "scarf"),
    ("Desk lamp", "lamp"),
    ("Leather wallet", "wallet"),
    ("Yoga mat", "mat"),
    ("Glass vase", "vase"),
]
ADDRESS = {"street1": "12 Oak St", "city": "Springfield", "zip": "62701"}
INTENTS = ("refund", "cancel", "change_address", "exchange", "status", "escalate")


def _texts(intent: str, oid: str, word: str, damage: str) -> str:
    return {
        "refund": f"Hi, the {word} from order {oid} arrived {damage}. Could you refund it please?",
        "cancel": f"Hello, please cancel order #{oid}, I ordered it by mistake. Thank you.",
        "change_address": (
            f"Could you ship order {oid} to {ADDRESS['street1']}, "
            f"{ADDRESS['city']} {ADDRESS['zip']} instead? Thanks."
        ),
        "exchange": f"Hi, can I exchange the {word} in {oid.lower()} for the green one please?",
        "status": f"Hi there, where is my order {oid}? I would like to know when it arrives.",
        "escalate": f"I want to talk to a human about order {oid}, please.",
    }[intent]


def support_case(
    intent: str = "refund",
    status: str = "delivered",
    *,
    price: float = 14.5,
    quantity: int = 1,
    item: int = 0,
    second_item: bool = False,
    order_id: str = "W1001",
    damage: str = "cracked",
    customer: tuple[str, str, str] = ("C1001", "Ana Diaz", "ana.diaz@example.com"),
) -> Case:
    """A one-order support case whose expected state is `decide`d by the policy."""
    cid, name, email = customer
    item_name, word = ITEMS[item]
    items: list[dict[str, Any]] = [
        {
            "item_id": "I1",
            "name": f"{item_name} (blue)",
            "price": price,
            "quantity": quantity,
            "product_id": "P100",
            "variant_id": "P100-blue",
        }
    ]
    if second_item:
        other, _ = ITEMS[(item + 1) % len(ITEMS)]
        items.append({"item_id": "I2", "name": other, "price": 9.99})
    state = {
        "customers": {cid: {"id": cid, "name": name, "email": email}},
        "orders": {
            order_id: {
                "id": order_id,
                "customer_id": cid,
                "status": status,
                "items": items,
                "address": {"street1": "1 Main St", "city": "Dayton", "zip": "45402"},
            }
        },
        "products": {
            "P100": {
                "id": "P100",
                "name": item_name,
                "variants": [
                    {"id": "P100-blue", "options": {"color": "blue"}, "price": price},
                    {"id": "P100-green", "options": {"color": "green"}, "price": price},
                ],
            }
        },
    }
    parsed = SupportState.parse(state)
    slots: dict[str, Any] = {
        "refund": {"item_ids": ("I1",), "reason": "damaged"},
        "change_address": {"address": ADDRESS},
        "exchange": {"item_ids": ("I1",), "new_variant_id": "P100-green"},
    }
    decision = decide(parsed, Intent(intent, order_id, **slots.get(intent, {})))
    calls = list(decision.calls)
    if intent == "status":
        from casemill.case.model import ExpectedCall

        calls = [ExpectedCall(tool="get_order", params={"order_id": order_id})]
    forbidden: tuple[ForbiddenCall, ...] = ()
    if decision.outcome == "refuse":
        forbidden = (
            ForbiddenCall(
                tool=WRITE_FOR_INTENT[intent], params={"order_id": order_id}, reason=decision.why
            ),
        )
    if decision.outcome == "clarify" or intent == "status":
        forbidden = (ForbiddenCall(any_write=True, reason="no write"),)
    amount = (
        refund_amount(parsed, calls[0])
        if decision.outcome == "resolve" and intent == "refund"
        else None
    )
    expected = make_expected(
        calls=calls,
        outcome=decision.outcome,
        reads_needed=0 if intent == "escalate" else 1,
        contains=phrases(
            intent, decision.outcome, amount=amount, city=ADDRESS["city"], status=status
        ),
        forbidden=forbidden,
    )
    conversation = [
        {"role": "system", "content": f"Authenticated customer: {cid} ({name}, {email})"},
        {"role": "customer", "content": _texts(intent, order_id, word, damage)},
    ]
    return Case(
        domain="support",
        environment={"state": state},
        conversation=conversation,
        expected=expected,
        tags=Tags(intents=(intent,)),
    )


def problems(case: Case) -> list[str]:
    """Every validator's complaints (semantic errors incl. replay, and lint warnings)."""
    return [str(f) for f in (*semantic_findings(case), *lint_findings(case))]


@st.composite
def cases(draw: Any, intents: tuple[str, ...] = INTENTS) -> Case:
    intent = draw(st.sampled_from(intents))
    status = draw(st.sampled_from(["pending", "processing", "shipped", "delivered"]))
    cents = draw(st.integers(min_value=150, max_value=40000))
    return support_case(
        intent,
        status,
        price=cents / 100,
        quantity=draw(st.integers(1, 3)),
        item=draw(st.integers(0, len(ITEMS) - 1)),
        second_item=draw(st.booleans()),
        order_id=f"W{draw(st.integers(1000, 1999))}",
        damage=draw(st.sampled_from(["cracked", "broken", "damaged", "defective"])),
    )


@pytest.fixture
def refund_case() -> Case:
    return support_case("refund", "delivered", second_item=True)


@pytest.fixture
def small_seeds() -> list[Case]:
    return [
        support_case("refund", "delivered", second_item=True),
        support_case("refund", "delivered", price=40.0, quantity=2, item=2, order_id="W1002"),
        support_case("cancel", "processing", item=1, order_id="W1003"),
        support_case("cancel", "shipped", item=3, order_id="W1004"),
        support_case("change_address", "pending", item=4, order_id="W1005"),
        support_case("exchange", "delivered", item=5, order_id="W1006"),
        support_case("status", "shipped", item=1, order_id="W1007"),
        support_case("escalate", "delivered", item=2, order_id="W1008"),
    ]


PROPERTY_SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def run_op(name: str, case: Case, seed: int) -> list[Case]:
    """The operator's outputs on `case`, or none when it does not apply."""
    try:
        return apply_operator(get_operator(name), case, seed=seed, index=0)
    except NotApplicable:
        return []


def checked_outputs(name: str, case: Case, seed: int) -> list[Case]:
    """`run_op`'s outputs, checked: the same seed gives the same outputs, and each is valid."""
    out = run_op(name, case, seed)
    assert out == run_op(name, case, seed)
    for new in out:
        assert problems(new) == []
    return out
