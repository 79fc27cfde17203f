from __future__ import annotations

import json
from pathlib import Path

from casemill.domains import get_domain
from casemill.formats import export_companion, import_companion
from casemill.replay import replay
from casemill.validation.semantic import semantic_findings


def _records(path: Path) -> list[dict]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def test_samples_land_in_support_or_a_generic_domain_per_speaker(fixtures: Path) -> None:
    result = import_companion(fixtures / "companion_mixed.jsonl")
    assert result.read == 12 and len(result.cases) == 12 and not result.quarantined
    assert result.domains == {
        "generic:analyst": 1,
        "generic:attorney": 2,
        "generic:parent": 1,
        "generic:patient": 2,
        "generic:warehouse_manager": 2,
        "support": 4,
    }
    assert all(semantic_findings(c) == [] for c in result.cases)
    for domain in ("generic:attorney", "generic:warehouse_manager"):
        assert not get_domain(domain).tool_specs
        assert any(
            note.startswith(
                f"2 case(s) imported into {domain}: that domain has no tool specifications"
            )
            for note in result.notes
        )
    attorney = {s["function"]["name"]: s for s in result.inferred_tools["generic:attorney"]}
    assert sorted(attorney) == ["review_contract", "track_deadlines"]
    params = attorney["review_contract"]["function"]["parameters"]
    assert params["properties"]["clauses"] == {"type": "array", "items": {"type": "string"}}
    assert params["required"] == ["clauses", "document_id", "risk_focus"]


def test_sample_id_roles_and_routing_are_kept(fixtures: Path) -> None:
    cases = {
        c.provenance.source.conversation_id: c
        for c in import_companion(fixtures / "companion_mixed.jsonl").cases
    }
    stock = cases["stock_0"]
    assert stock.domain == "generic:warehouse_manager"
    assert stock.tags.labels == ("role:warehouse_manager", "routing:inventory")
    assert [t.role for t in stock.conversation] == ["customer"]
    assert stock.expected.tool_calls[0].tool == "create_purchase_order"
    assert stock.expected.tool_calls[0].params == {
        "sku": "PAL-220",
        "quantity": 200,
        "warehouse": "Reno",
    }
    assert cases["cancel_1_cancel"].tags.labels == ("role:user",)
    assert cases["intake_0"].provenance.source.format == "companion"
    assert cases["intake_0"].provenance.source.line == 5


def test_ecommerce_samples_use_the_support_tools(fixtures: Path) -> None:
    cases = {
        c.provenance.source.conversation_id: c
        for c in import_companion(fixtures / "companion_mixed.jsonl").cases
    }
    refund = cases["refund_0"]
    assert refund.domain == "support"
    assert refund.expected.tool_calls[0].params == {
        "order_id": "A89268",
        "item_ids": ["I1"],
        "reason": "damaged",
    }
    assert replay(refund).ok
    address = cases["modify_2"]
    assert address.expected.tool_calls[0].tool == "change_shipping_address"
    assert address.expected.tool_calls[0].params["address"]["street1"] == "175 Elm St"
    # no order given: synthesised from the call, said so, low confidence
    bottle = cases["refund_3"]
    order = bottle.environment.state["orders"]["A79246"]
    assert order["status"] == "delivered"
    assert order["items"] == [
        {"item_id": "I1", "name": "Water bottle", "price": 24.3, "quantity": 1}
    ]
    assert "no order given" in bottle.provenance.notes
    assert "refund reason not stated; 'damaged' assumed" in bottle.provenance.notes
    assert bottle.provenance.label_confidence == "low"
    assert replay(bottle).ok


def test_round_trip_reproduces_every_record_and_id(fixtures: Path, tmp_path: Path) -> None:
    source = fixtures / "companion_mixed.jsonl"
    first = import_companion(source)
    out = tmp_path / "out.jsonl"
    exported = export_companion(first.cases, out)
    assert exported.written == 12 and not exported.skipped
    assert _records(out) == _records(source)
    again = import_companion(out)
    assert [c.id for c in again.cases] == [c.id for c in first.cases]


def test_non_string_routing_survives_the_round_trip(tmp_path: Path) -> None:
    record = {
        "sample_id": "route_0",
        "input": [{"role": "analyst", "content": "Route this alert."}],
        "expected_function_call": {
            "name": "triage_incident",
            "arguments": {"incident_id": "INC-7"},
        },
        "expected_routing": ["tier2", "network"],
    }
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (case,) = import_companion(source).cases
    assert case.tags.labels == ("role:analyst", 'routing-json:["tier2","network"]')
    export_companion([case], tmp_path / "out.jsonl")
    assert _records(tmp_path / "out.jsonl") == [record]


def test_label_option_puts_every_generic_sample_in_one_domain(fixtures: Path) -> None:
    result = import_companion(fixtures / "companion_mixed.jsonl", label="mixed")
    assert result.domains == {"generic:mixed": 8, "support": 4}


def test_bad_records_are_quarantined_with_file_line_and_field(fixtures: Path) -> None:
    path = fixtures / "companion_mixed_bad.jsonl"
    result = import_companion(path)
    assert [c.provenance.source.conversation_id for c in result.cases] == [
        "intake_0",
        "cancel_4_cancel",
    ]
    assert {(f.line, f.field, f.rule) for f in result.findings} == {
        (2, "input[0].role", "unknown-role"),
        (3, "input[0].role", "unknown-role"),
        (4, "expected_function_call.arguments", "format"),
        (5, "expected_function_call", "format"),
        (6, None, "parse"),
        (7, "expected_function_call.name", "format"),
        (9, "input", "format"),
        (10, "sample_id", "format"),
    }
    assert all(f.file == str(path) for f in result.findings)
    messages = {f.line: f.message for f in result.findings}
    assert messages[4] == "arguments must be an object, got str"
    assert messages[2].startswith("unknown role 'attorney'")


def test_export_needs_exactly_one_call(fixtures: Path, tmp_path: Path) -> None:
    from casemill.case.model import derive

    (case, *_) = import_companion(fixtures / "companion_mixed.jsonl").cases
    expected = case.expected.model_dump(mode="json")
    expected["tool_calls"] = expected["tool_calls"] * 2
    result = export_companion([derive(case, expected=expected)], tmp_path / "out.jsonl")
    assert result.written == 0
    assert result.skipped[0].field == "expected.tool_calls"
    assert "exactly one expected call; this case has 2" in result.skipped[0].message


def test_an_order_with_a_function_the_support_domain_lacks_goes_generic(tmp_path: Path) -> None:
    record = {
        "sample_id": "coupon_0",
        "input": [{"role": "customer", "content": "Can you apply SAVE10 to order B98765?"}],
        "expected_function_call": {
            "name": "apply_coupon",
            "arguments": {"order_id": "B98765", "code": "SAVE10"},
        },
        "order": {
            "order_id": "B98765",
            "status": "Processing",
            "total": 49.99,
            "currency": "USD",
            "items": [
                {"sku": "BLENDER-01", "name": "Personal Blender", "qty": 1, "unit_price": 49.99}
            ],
        },
    }
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = import_companion(source)
    (case,) = result.cases
    assert case.domain == "generic:coupon"
    assert case.environment.state["orders"]["B98765"]["status"] == "processing"
    assert "apply_coupon is not a support tool" in case.provenance.notes
    export_companion([case], tmp_path / "out.jsonl")
    assert _records(tmp_path / "out.jsonl") == [record]


def test_a_lookup_only_sample_resolves_as_a_status_question(tmp_path: Path) -> None:
    record = {
        "sample_id": "status_0",
        "input": [{"role": "customer", "content": "Where is my order #B12345?"}],
        "expected_function_call": {"name": "get_order_status", "arguments": {"order_id": "B12345"}},
        "order": {
            "order_id": "B12345",
            "status": "Shipped",
            "total": 20.0,
            "currency": "USD",
            "items": [{"sku": "SCARF-1", "name": "Wool Scarf", "qty": 1, "unit_price": 20.0}],
        },
    }
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (case,) = import_companion(source).cases
    assert case.domain == "support"
    assert [(c.tool, c.params) for c in case.expected.tool_calls] == [
        ("get_order", {"order_id": "B12345"})
    ]
    assert case.expected.outcome == "resolve" and case.tags.intents == ("status",)
    assert case.expected.optimal_steps == 2
    assert "only lookups are expected" in case.provenance.notes


def test_a_generic_case_made_in_casemill_keeps_its_domain_through_a_round_trip(
    tmp_path: Path,
) -> None:
    # its sample id was the bare case id, whose prefix 'c' came back as the domain generic:c
    from casemill.case.model import Case

    case = Case(
        domain="generic:banking",
        environment={"state": {}},
        conversation=[{"role": "customer", "content": "Please freeze my card ending 4242"}],
        expected={
            "tool_calls": [{"tool": "freeze_card", "params": {"last4": "4242"}}],
            "outcome": "resolve",
            "optimal_steps": 2,
        },
    )
    out = tmp_path / "banking.jsonl"
    export_companion([case], out)
    (back,) = import_companion(out).cases
    assert (back.domain, back.id) == ("generic:banking", case.id)
