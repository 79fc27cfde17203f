from __future__ import annotations

import json
from pathlib import Path

from casemill.domains.support import SupportState
from casemill.formats import export_chapter, import_chapter
from casemill.replay import replay
from casemill.validation.semantic import semantic_findings


def _records(path: Path) -> list[dict]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def test_book_cases_map_to_the_support_domain(fixtures: Path) -> None:
    result = import_chapter(fixtures / "chapter_cases.jsonl")
    assert result.read == 7 and len(result.cases) == 7 and not result.quarantined
    assert result.domains == {"support": 7}
    by_order = {next(iter(c.environment.state["orders"])): c for c in result.cases}

    mug = by_order["A89268"]
    state = SupportState.parse(mug.environment.state)
    order = state.orders["A89268"]
    assert order.status == "delivered"
    assert [(i.item_id, i.name, i.price, i.product_id) for i in order.items] == [
        ("I1", "Ceramic Coffee Mug", 19.99, "MUG-001"),
        ("I2", "T-Shirt-Small", 20.0, "TSHIRT-S"),
    ]
    assert mug.conversation[0].role == "system"
    assert mug.conversation[0].content == (
        "Authenticated customer: C1001 (Imported Customer, imported.customer@example.com)"
    )
    # the cracked mug in a two-item order: a refund of 19.99 is the mug only
    (call,) = mug.expected.tool_calls
    assert call.tool == "refund_items"
    assert call.params == {"order_id": "A89268", "item_ids": ["I1"], "reason": "damaged"}
    assert mug.expected.outcome == "resolve"
    assert mug.expected.reply_contains == ("19.99", "refund")
    assert mug.expected.optimal_steps == 4  # list orders, get order, refund, reply
    assert mug.provenance.origin == "imported"
    assert mug.provenance.source.line == 2 and mug.provenance.source.format == "chapter"
    assert "issue_refund of 19.99 mapped to refund_items of I1" in mug.provenance.notes
    assert "customer C1001" in mug.provenance.notes
    assert replay(mug).ok


def test_outcomes_are_inferred_from_calls_and_wording(fixtures: Path) -> None:
    result = import_chapter(fixtures / "chapter_cases.jsonl")
    outcomes = {next(iter(c.environment.state["orders"])): c.expected.outcome for c in result.cases}
    assert outcomes == {
        "A12345": "clarify",  # no call, asks for a photo
        "A89268": "resolve",
        "B98765": "resolve",
        "C55667": "resolve",
        "D20417": "refuse",  # no call, "cannot"
        "E33190": "resolve",
        "F55002": "escalate",
    }
    clarify = next(c for c in result.cases if c.expected.outcome == "clarify")
    assert "clarify" in clarify.tags.labels
    assert clarify.expected.forbidden_calls[0].any_write
    assert "outcome 'clarify' inferred" in clarify.provenance.notes


def test_user_role_address_change_and_quantities(fixtures: Path) -> None:
    cases = {
        next(iter(c.environment.state["orders"])): c
        for c in import_chapter(fixtures / "chapter_cases.jsonl").cases
    }
    address = cases["C55667"]
    assert "role:user" in address.tags.labels
    assert [t.role for t in address.conversation] == ["system", "customer", "assistant", "customer"]
    (call,) = address.expected.tool_calls
    assert call.tool == "change_shipping_address"
    assert call.params["address"]["city"] == "Boston" and call.params["address"]["zip"] == "02210"
    assert address.environment.state["customers"]["C1001"]["name"] == "Jordan Lee"
    glasses = cases["E33190"]
    assert glasses.expected.tool_calls[0].params["item_ids"] == ["I1"]
    assert glasses.environment.state["orders"]["E33190"]["items"][0]["quantity"] == 2


def test_round_trip_gives_the_same_ids_and_the_same_records(fixtures: Path, tmp_path: Path) -> None:
    source = fixtures / "chapter_cases.jsonl"
    first = import_chapter(source)
    out = tmp_path / "out.jsonl"
    exported = export_chapter(first.cases, out)
    assert exported.written == 7 and not exported.skipped
    assert _records(out) == _records(source)
    again = import_chapter(out)
    assert [c.id for c in again.cases] == [c.id for c in first.cases]


def test_names_only_tool_calls_are_completed_from_the_order(tmp_path: Path) -> None:
    record = {
        "order": {
            "order_id": "B98765",
            "status": "Processing",
            "total": 54.5,
            "currency": "USD",
            "items": [
                {"sku": "BLENDER-01", "name": "Personal Blender", "qty": 1, "unit_price": 49.99},
                {"sku": "SHIP-STD", "name": "Standard Shipping", "qty": 1, "unit_price": 4.51},
            ],
        },
        "conversation": [
            {
                "role": "customer",
                "content": "Please cancel order #B98765. I found a cheaper option elsewhere.",
            }
        ],
        "expected": {
            "final_state": {
                "tool_calls": ["cancel_order", "issue_refund"],
                "customer_msg_contains": ["cancelled", "full refund", "3-5 business days"],
            }
        },
    }
    path = tmp_path / "book.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (case,) = import_chapter(path).cases
    assert [(c.tool, c.params) for c in case.expected.tool_calls] == [
        ("cancel_order", {"order_id": "B98765"})
    ]
    assert "issue_refund folded into cancel_order" in case.provenance.notes
    assert case.provenance.label_confidence == "low"


def test_unknown_tools_land_in_a_generic_domain_and_the_summary_says_so(fixtures: Path) -> None:
    result = import_chapter(fixtures / "chapter_mixed_bad.jsonl")
    generic = [c for c in result.cases if c.domain == "generic:chapter"]
    assert len(generic) == 1
    assert generic[0].expected.tool_calls[0].tool == "apply_coupon"
    assert generic[0].expected.tool_calls[0].params == {"order_id": "B98765", "code": "SAVE10"}
    assert any("generic:chapter" in n for n in result.notes)
    assert [s["function"]["name"] for s in result.inferred_tools["generic:chapter"]] == [
        "apply_coupon"
    ]
    assert semantic_findings(generic[0]) == []


def test_bad_records_are_quarantined_with_file_line_and_field(fixtures: Path) -> None:
    path = fixtures / "chapter_mixed_bad.jsonl"
    result = import_chapter(path)
    assert result.read == 19  # the blank line is not a record
    assert [c.provenance.source.line for c in result.cases] == [1, 7, 14, 19]
    located = {(f.line, f.field, f.rule) for f in result.findings}
    assert located == {
        (2, None, "parse"),
        (3, "expected", "format"),
        (4, "conversation[0].role", "unknown-role"),
        (5, "expected.final_state.tool_calls[0].params", "format"),
        (6, "order.status", "format"),
        (8, "conversation[0].content", "format"),
        (9, "order.currency", "format"),
        (10, "expected.final_state.tool_calls[0].params.order_id", "missing-id"),
        (11, None, "parse"),
        (12, "priority", "unknown-field"),
        (13, "order.items[0].qty", "format"),
        (16, "expected.final_state.customer_msg_contains", "format"),
        (17, "conversation", "format"),
        (18, None, "parse"),
        (20, "expected.final_state.tool_calls[0].params.order_id", "missing-id"),
    }
    assert all(f.file == str(path) for f in result.findings)
    messages = {f.line: f.message for f in result.findings}
    assert "truncated" in messages[2]
    assert messages[4].startswith("unknown role 'robot'")
    assert messages[18].startswith("invalid UTF-8")
    assert "A12345" in messages[10] and "A89268" in messages[10]
    quarantined = {q.line: q for q in result.quarantined}
    assert quarantined[12].record["priority"] == "high"


def test_json_array_input(tmp_path: Path, fixtures: Path) -> None:
    records = _records(fixtures / "chapter_cases.jsonl")[:3]
    path = tmp_path / "cases.json"
    text = json.dumps(records, indent=2)
    path.write_text(text, encoding="utf-8")
    starts = [n for n, line in enumerate(text.splitlines(), start=1) if line == "  {"]
    result = import_chapter(path)
    assert len(result.cases) == 3
    assert [c.provenance.source.line for c in result.cases] == starts
    assert [c.id for c in result.cases] == [
        c.id for c in import_chapter(fixtures / "chapter_cases.jsonl").cases[:3]
    ]


def test_export_skips_cases_the_format_cannot_hold(root: Path, tmp_path: Path) -> None:
    from casemill.formats.cases_io import load_cases

    cases, bad = load_cases(root / "seeds")
    assert cases and not bad
    result = export_chapter(cases, tmp_path / "seeds.jsonl")
    multi = {c.id for c in cases if len(c.environment.state.get("orders") or {}) > 1}
    scenarios = {c.id for c in cases if c.user_scenario}
    exchanges = {c.id for c in cases if "exchange" in c.tags.intents} - multi - scenarios
    refunded = (
        {
            c.id
            for c in cases
            if any(o.get("refunds") for o in c.environment.state["orders"].values())
        }
        - multi
        - scenarios
    )
    assert scenarios and multi - scenarios and exchanges and refunded
    skipped = multi | scenarios | exchanges | refunded
    assert result.written == len(cases) - len(skipped)
    assert {f.case_id for f in result.skipped} == skipped
    reasons = {f.case_id: (f.rule, f.field) for f in result.skipped}
    assert all(reasons[i] == ("user scenario", "user_scenario") for i in scenarios)
    orders = ("more than one order", "environment.state.orders")
    assert all(reasons[i] == orders for i in multi - scenarios)
    catalogue = ("product catalogue", "environment.state.products")
    assert all(reasons[i] == catalogue for i in exchanges)
    assert all(reasons[i][0] == "order history" for i in refunded)
    exported = _records(tmp_path / "seeds.jsonl")
    assert all(r["conversation"][0]["role"] != "system" for r in exported)


def test_a_repeated_record_is_kept_once_and_the_repeat_quarantined(
    fixtures: Path, tmp_path: Path
) -> None:
    lines = (fixtures / "chapter_cases.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "dup.jsonl"
    path.write_text("\n".join([lines[0], lines[1], lines[0]]) + "\n", encoding="utf-8")
    result = import_chapter(path)
    assert len(result.cases) == 2
    (finding,) = result.findings
    assert (finding.line, finding.rule) == (3, "duplicate-id")
    assert finding.message.startswith("same content as line 1")


def test_oversized_text_and_odd_turn_fields_are_findings_not_tracebacks(
    fixtures: Path, tmp_path: Path
) -> None:
    good = _records(fixtures / "chapter_cases.jsonl")[2]
    huge = json.loads(json.dumps(good))
    huge["conversation"][0]["content"] = "x" * 10_000_000
    odd = json.loads(json.dumps(good))
    odd["conversation"].append({"role": "tool", "content": "{}", "tool_call_id": 5})
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (huge, odd, good)) + "\n", encoding="utf-8")
    result = import_chapter(path)
    assert [c.provenance.source.line for c in result.cases] == [3]
    by_line = {f.line: f for f in result.findings}
    assert by_line[1].field == "conversation[0].content"
    assert "over the 100,000-character limit" in by_line[1].message
    assert by_line[2].field == "conversation[1].tool_call_id"
    assert by_line[2].message == "expected a string, got 5"


def test_a_user_scenario_is_never_exported_as_scripted_turns_nor_dropped(
    root: Path, tmp_path: Path
) -> None:
    """A scenario is instructions for a simulated customer ("if asked which order, say W1077"):
    as the customer's first message it would hand the agent what the customer keeps back, and
    dropped (the case also has a scripted turn) it would change the test. Either way: skipped,
    with the reason."""
    from casemill.case.model import Case
    from casemill.formats.cases_io import load_cases
    from casemill.formats.companion import export_companion

    cases, _ = load_cases(root / "seeds")
    seed = next(c for c in cases if c.user_scenario and len(c.environment.state["orders"]) == 1)
    data = seed.model_dump(mode="json")
    data.pop("id")  # recomputed for the new content
    turn = {"role": "customer", "content": "Hi, my order has a problem."}
    both = Case.model_validate({**data, "conversation": [*data["conversation"], turn]})
    for export in (export_chapter, export_companion):
        result = export([seed, both], tmp_path / "out.jsonl")
        assert result.written == 0
        assert [(f.case_id, f.rule, f.field) for f in result.skipped] == [
            (seed.id, "user scenario", "user_scenario"),
            (both.id, "user scenario", "user_scenario"),
        ]
        assert "instructions for a simulated customer" in result.skipped[0].message


def test_a_refund_amount_of_two_of_three_lines_refunds_those_lines(tmp_path: Path) -> None:
    # 14.50 + 42.00: the mug and the plates, the tea towels survived (what casemill's own chapter
    # export writes for a two-item refund, which the import could not read back)
    items = [
        ("P100", "Ceramic mug 12oz (white)", 14.5),
        ("P116", "Stoneware dinner plate set (white)", 42.0),
        ("P101", "Linen tea towel set (sage)", 18.0),
    ]
    record = {
        "order": {
            "order_id": "W1014",
            "status": "Delivered",
            "total": 74.5,
            "currency": "USD",
            "items": [{"sku": s, "name": n, "qty": 1, "unit_price": p} for s, n, p in items],
        },
        "conversation": [
            {
                "role": "customer",
                "content": "Order W1014 was dropped: the mug and the plates are both broken. "
                "The tea towels survived.",
            }
        ],
        "expected": {
            "final_state": {
                "tool_calls": [
                    {"tool": "issue_refund", "params": {"order_id": "W1014", "amount": 56.5}}
                ],
                "customer_msg_contains": ["56.50", "refund"],
            }
        },
    }
    path = tmp_path / "book.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = import_chapter(path)
    assert not result.quarantined
    (case,) = result.cases
    (call,) = case.expected.tool_calls
    assert call.params == {"order_id": "W1014", "item_ids": ["I1", "I2"], "reason": "damaged"}
    assert replay(case).ok
