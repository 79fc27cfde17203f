"""Property: any well-formed, policy-consistent chapter record survives import -> export exactly,
and re-importing the export gives the same case id."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casemill.formats import export_chapter, import_chapter

NAMES = ["Ceramic Coffee Mug", "Wool Scarf", "Desk Lamp", "Yoga Mat", "Steel Bottle", "Phone Case"]
PEOPLE = ["Jordan Lee", "Ana Diaz", "Sam Okafor"]
STREETS = ["Elm", "Oak", "Summer"]
PHRASES = ["refund", "cancelled", "which item", "human", "cannot", "Boston"]

price = st.integers(min_value=1, max_value=50_000).map(lambda cents: round(cents / 100, 2))


@st.composite
def address(draw: st.DrawFn, name: str) -> dict:
    return {
        "name": name,
        "street1": f"{draw(st.integers(1, 999))} {draw(st.sampled_from(STREETS))} St",
        "street2": draw(st.sampled_from(["", "Apt 2"])),
        "city": draw(st.sampled_from(["Boston", "Metropolis", "Denver"])),
        "state": draw(st.sampled_from(["MA", "CA", "CO"])),
        "zip": f"{draw(st.integers(10000, 99999))}",
        "country": "US",
    }


@st.composite
def chapter_record(draw: st.DrawFn) -> dict:
    kind = draw(st.sampled_from(["none", "cancel", "refund", "address"]))
    status = {
        "cancel": draw(st.sampled_from(["Processing", "Pending Shipment"])),
        "address": draw(st.sampled_from(["Processing", "Pending Shipment"])),
        "refund": "Delivered",
        "none": draw(st.sampled_from(["Delivered", "Shipped", "Processing"])),
    }[kind]
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
    items = [
        {"sku": f"SKU-{n}", "name": name, "qty": draw(st.integers(1, 3)), "unit_price": draw(price)}
        for n, name in enumerate(names)
    ]
    totals = [round(i["qty"] * i["unit_price"], 2) for i in items]
    order_id = f"{draw(st.sampled_from('ABCW'))}{draw(st.integers(10000, 99999))}"
    order = {
        "order_id": order_id,
        "status": status,
        "total": round(sum(totals), 2),
        "currency": "USD",
        "items": items,
    }
    person = draw(st.sampled_from(PEOPLE))
    if kind == "address" or draw(st.booleans()):
        order["shipping_address"] = draw(address(person))
    if status == "Delivered":
        order["delivered_at"] = "2025-05-15"
    calls: list[dict] = []
    if kind == "cancel":
        calls = [{"tool": "cancel_order", "params": {"order_id": order_id}}]
    elif kind == "refund":
        pick = draw(st.integers(0, len(items) - 1))
        if totals.count(totals[pick]) == 1 and (
            len(items) == 1 or totals[pick] != round(sum(totals), 2)
        ):
            calls = [
                {"tool": "issue_refund", "params": {"order_id": order_id, "amount": totals[pick]}}
            ]
    elif kind == "address":
        calls = [
            {
                "tool": "modify_order",
                "params": {"order_id": order_id, "shipping_address": draw(address(person))},
            }
        ]
    role = draw(st.sampled_from(["customer", "user"]))
    text = draw(
        st.text(
            alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
            min_size=1,
            max_size=60,
        )
    )
    conversation = [
        {
            "role": role,
            "content": f"About order {order_id}: {text} the {names[0].split()[-1].lower()}",
        }
    ]
    if draw(st.booleans()):
        conversation += [
            {"role": "assistant", "content": "Could you confirm?"},
            {"role": role, "content": "Yes."},
        ]
    phrases = draw(st.lists(st.sampled_from(PHRASES), max_size=2, unique=True))
    return {
        "order": order,
        "conversation": conversation,
        "expected": {"final_state": {"tool_calls": calls, "customer_msg_contains": phrases}},
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chapter_record())
def test_import_export_import_is_exact(record: dict) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "in.jsonl"
        source.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
        first = import_chapter(source)
        assert not first.quarantined, [str(f) for f in first.findings]
        out = Path(tmp) / "out.jsonl"
        export_chapter(first.cases, out)
        assert json.loads(out.read_text(encoding="utf-8")) == record
        again = import_chapter(out)
        assert [c.id for c in again.cases] == [c.id for c in first.cases]
