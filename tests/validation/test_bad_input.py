"""Bad input of every kind: each gives a finding at the exact file, line and field, never a
traceback, and the good records around it are kept."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest
from fixtures.casebuild import (
    cancel_case,
    clarify_case,
    line,
    record,
    refund_case,
    scenario_case,
)

from casemill.validation import ValidationReport, validate_paths, write_quarantine

A, B = refund_case(), cancel_case()


def run(
    tmp_path: Path, middle: str | bytes, *, name: str = "cases.jsonl", **kw
) -> ValidationReport:
    """A file of good A, the bad line, good B; validated without the (slow) batch layer."""
    body = middle if isinstance(middle, bytes) else line(middle).encode("utf-8")
    path = tmp_path / name
    path.write_bytes(line(A).encode() + body + line(B).encode())
    return validate_paths([path], batch=False, **kw)


def assert_one_bad(
    report: ValidationReport, line_no: int, layer: str, rule: str, field: str | None
):
    assert [(b.line) for b in report.bad] == [line_no]
    findings = report.bad[0].findings
    assert (layer, rule, field) in [(f.layer, f.rule, f.field) for f in findings], findings
    assert all(f.file == report.bad[0].file and f.line == line_no for f in findings)
    assert not report.ok


def kept(report: ValidationReport) -> list[str]:
    return [item.case.id for item in report.valid]


def edited(case, path: list, value) -> dict:
    data = record(case)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def test_truncated_json(tmp_path):
    text = line(A)[:-40]
    report = run(tmp_path, text)
    assert_one_bad(report, 2, "json", "invalid-json", None)
    assert "truncated" in report.bad[0].findings[0].message
    assert kept(report) == [A.id, B.id]


@pytest.mark.parametrize("schema", [True, False])
def test_wrong_type(tmp_path, schema):
    data = edited(A, ["expected", "optimal_steps"], "three")
    report = run(tmp_path, data, schema=schema)
    assert_one_bad(
        report, 2, "schema" if schema else "model", "wrong-type", "expected.optimal_steps"
    )
    assert kept(report) == [A.id, B.id]


@pytest.mark.parametrize("schema", [True, False])
def test_unknown_nested_field(tmp_path, schema):
    data = record(A)
    data["conversation"][1]["mood"] = "angry"
    report = run(tmp_path, data, schema=schema)
    layer = "schema" if schema else "model"
    assert_one_bad(report, 2, layer, "unknown-field", "conversation[1].mood")
    assert kept(report) == [A.id, B.id]


def test_unknown_top_level_field(tmp_path):
    data = {**record(A), "priority": "high"}
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "schema", "unknown-field", "priority")


def test_missing_required_field(tmp_path):
    data = record(A)
    del data["expected"]
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "schema", "missing-field", "expected")


def test_outcome_not_allowed(tmp_path):
    report = run(tmp_path, edited(A, ["expected", "outcome"], "maybe"))
    assert_one_bad(report, 2, "schema", "not-allowed", "expected.outcome")


def test_empty_conversation_without_scenario(tmp_path):
    data = edited(A, ["conversation"], [])
    data["id"] = ""
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "model", "no-dialogue", "conversation")
    assert kept(report) == [A.id, B.id]


def test_scenario_without_conversation_is_valid(tmp_path):
    report = run(tmp_path, scenario_case())
    assert report.ok and kept(report) == [A.id, scenario_case().id, B.id]


def test_invalid_utf8_is_quarantined_as_base64(tmp_path):
    bad = line(A).encode().replace(b"cracked", b"cr\xff\xfecked")
    report = run(tmp_path, bad)
    assert_one_bad(report, 2, "json", "invalid-utf8", None)
    quarantine = tmp_path / "q.jsonl"
    assert write_quarantine(report, quarantine) == 1
    entry = json.loads(quarantine.read_text())
    assert base64.b64decode(entry["raw_base64"]) == bad.rstrip(b"\n")
    assert "raw" not in entry and entry["line"] == 2


def test_ten_megabyte_string(tmp_path):
    data = edited(A, ["conversation", 1, "content"], "x" * 10_000_000)
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "schema", "too-long", "conversation[1].content")
    message = report.bad[0].findings[0].message
    assert "10,000,000 characters" in message and len(message) < 300
    assert kept(report) == [A.id, B.id]


def test_ten_megabyte_string_model_layer(tmp_path):
    data = edited(A, ["conversation", 1, "content"], "x" * 10_000_000)
    report = run(tmp_path, data, schema=False)
    assert_one_bad(report, 2, "model", "too-long", "conversation[1].content")
    assert len(report.bad[0].findings[0].message) < 300


def test_unknown_tool(tmp_path):
    data = edited(A, ["expected", "tool_calls", 0, "tool"], "refund_everything")
    data["id"] = ""
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "semantic", "unknown-tool", "expected.tool_calls[0].tool")
    assert "refund_everything" in report.bad[0].findings[0].message


def test_parameters_of_the_wrong_type(tmp_path):
    data = edited(A, ["expected", "tool_calls", 0, "params", "item_ids"], "I1")
    data["id"] = ""
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "semantic", "param-schema", "expected.tool_calls[0].params")
    assert "item_ids" in report.bad[0].findings[0].message


def test_order_id_missing_from_environment(tmp_path):
    data = edited(A, ["expected", "tool_calls", 0, "params", "order_id"], "W9999")
    data["id"] = ""
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "semantic", "missing-id", "expected.tool_calls[0].params.order_id")
    assert "W9999" in report.bad[0].findings[0].message


def test_item_id_missing_from_order(tmp_path):
    data = edited(A, ["expected", "tool_calls", 0, "params", "item_ids"], ["I7"])
    data["id"] = ""
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "semantic", "missing-id", "expected.tool_calls[0].params.item_ids")


OTHER = {"id": "C2002", "name": "Bo Li", "email": "bo.li@example.com"}


def expecting(data: dict, tool: str, params: dict) -> dict:
    """`data` (a record) expecting one call of `tool` with `params`, its id to be computed."""
    data["expected"]["tool_calls"] = [{"tool": tool, "params": params, "match": {}}]
    data["id"] = ""
    return data


def test_an_expected_call_on_another_customers_order(tmp_path):
    """The agent serves the signed-in customer only: an expected refund of another customer's
    order (in the environment, so no id is missing) is a finding at its order_id."""
    data = record(A)
    theirs = {
        **data["environment"]["state"]["orders"]["W1001"],
        "id": "W2002",
        "customer_id": "C2002",
    }
    data["environment"]["state"]["customers"]["C2002"] = OTHER
    data["environment"]["state"]["orders"]["W2002"] = theirs
    data["expected"]["tool_calls"][0]["params"]["order_id"] = "W2002"
    data["id"] = ""
    report = run(tmp_path, data)
    assert_one_bad(
        report, 2, "semantic", "other-customer", "expected.tool_calls[0].params.order_id"
    )
    message = report.bad[0].findings[0].message
    assert message == "order W2002 belongs to customer C2002, not to the signed-in customer C1001"


def test_an_expected_lookup_of_another_customer_by_id_or_email(tmp_path):
    """Listing another customer's orders by that customer's id or email (as the simulator finds
    them, ignoring case) is a finding too; the signed-in customer's own email is not."""
    for params, field_, message in (
        ({"customer_id": "C2002"}, "customer_id", "customer C2002 is not the signed-in customer"),
        (
            {"email": " Bo.Li@example.com"},
            "email",
            "email ' Bo.Li@example.com' is customer C2002's",
        ),
    ):
        data = record(A)
        data["environment"]["state"]["customers"]["C2002"] = OTHER
        report = run(tmp_path, expecting(data, "list_customer_orders", params))
        assert_one_bad(
            report, 2, "semantic", "other-customer", f"expected.tool_calls[0].params.{field_}"
        )
        assert report.bad[0].findings[0].message.startswith(message)
    data = record(A)
    own = data["environment"]["state"]["customers"]["C1001"]["email"].upper()
    report = run(tmp_path, expecting(data, "list_customer_orders", {"email": own}))
    assert not any(f.rule == "other-customer" for bad in report.bad for f in bad.findings)


def test_the_signed_in_customer_is_read_without_a_full_stop_after_the_id(tmp_path):
    """'Authenticated customer: C1001.' signs in C1001: the customer's own calls pass, another
    customer's are named against C1001 (not 'C1001.')."""
    data = record(A)
    data["conversation"][0]["content"] = "Authenticated customer: C1001."
    data["id"] = ""
    assert run(tmp_path, data).bad == []
    data["environment"]["state"]["customers"]["C2002"] = OTHER
    report = run(tmp_path, expecting(data, "get_customer", {"customer_id": "C2002"}))
    assert_one_bad(
        report, 2, "semantic", "other-customer", "expected.tool_calls[0].params.customer_id"
    )
    message = report.bad[0].findings[0].message
    assert message == "customer C2002 is not the signed-in customer C1001"


def test_duplicate_ids_keep_the_first(tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text(line(A) + line(B) + line(A))
    report = validate_paths([path], batch=False)
    assert_one_bad(report, 3, "batch", "duplicate-id", "id")
    assert f"{path}:1" in report.bad[0].findings[0].message
    assert kept(report) == [A.id, B.id]


def test_duplicate_ids_across_files(tmp_path):
    (tmp_path / "a.jsonl").write_text(line(A))
    (tmp_path / "b.jsonl").write_text(line(B) + line(A))
    report = validate_paths([tmp_path], batch=False)
    assert [(Path(b.file).name, b.line) for b in report.bad] == [("b.jsonl", 2)]
    assert kept(report) == [A.id, B.id]


def test_bom_on_the_first_line(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + line(A).encode() + line(B).encode())
    report = validate_paths([path], batch=False)
    assert report.ok and kept(report) == [A.id, B.id]


def test_crlf_line_endings(tmp_path):
    path = tmp_path / "crlf.jsonl"
    body = line(A).rstrip("\n") + "\r\n" + "[1]\r\n" + line(B).rstrip("\n") + "\r\n"
    path.write_bytes(body.encode())
    report = validate_paths([path], batch=False)
    assert_one_bad(report, 2, "json", "not-object", None)
    assert kept(report) == [A.id, B.id]


def test_non_object_line(tmp_path):
    report = run(tmp_path, '"just a string"')
    assert_one_bad(report, 2, "json", "not-object", None)


def test_blank_lines_are_skipped_and_numbering_kept(tmp_path):
    path = tmp_path / "blank.jsonl"
    path.write_text(line(A) + "\n   \n" + "{oops\n" + line(B))
    report = validate_paths([path], batch=False)
    assert report.records == 3
    assert_one_bad(report, 4, "json", "invalid-json", None)
    assert kept(report) == [A.id, B.id]


def test_id_that_does_not_match_the_content(tmp_path):
    data = edited(A, ["conversation", 1, "content"], "My order W1001 came and the mug is broken.")
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "model", "id-mismatch", "id")
    assert "remove the id" in report.bad[0].findings[0].message


def test_schema_version_from_the_future(tmp_path):
    report = run(tmp_path, edited(A, ["schema_version"], 99))
    assert_one_bad(report, 2, "model", "schema-version", "schema_version")
    assert "upgrade casemill" in report.bad[0].findings[0].message


def test_forbidden_call_with_tool_and_any_write(tmp_path):
    data = record(clarify_case())
    data["expected"]["forbidden_calls"][0]["tool"] = "refund_items"
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "model", "invalid", "expected.forbidden_calls[0]")


def test_match_rule_for_a_missing_parameter(tmp_path):
    data = record(A)
    data["expected"]["tool_calls"][0]["match"]["amount"] = {"kind": "number"}
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "model", "invalid", "expected.tool_calls[0].match")


def test_tool_calls_on_a_customer_turn(tmp_path):
    data = record(A)
    data["conversation"][1]["tool_calls"] = [{"tool": "get_order", "params": {}}]
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "model", "invalid", "conversation[1].tool_calls")


def test_expected_call_the_policy_forbids_fails_replay(tmp_path):
    data = edited(A, ["environment", "state", "orders", "W1001", "status"], "pending")
    data["id"] = ""
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "semantic", "replay", "expected.tool_calls[0]")
    assert "only delivered orders can be refunded" in report.bad[0].findings[0].message


def test_outcome_clarify_with_a_write_call(tmp_path):
    data = edited(A, ["expected", "outcome"], "clarify")
    data["id"] = ""
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "semantic", "outcome-calls", "expected.outcome")
    rules = {(f.layer, f.rule) for f in report.bad[0].findings}
    assert ("lint", "clarify-write") in rules


def test_environment_of_the_wrong_shape(tmp_path):
    data = edited(A, ["environment", "state", "orders", "W1001", "status"], "lost")
    data["id"] = ""
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "semantic", "state-shape", "environment.state.orders.W1001.status")


def test_fault_on_an_unknown_tool(tmp_path):
    data = edited(A, ["environment", "faults"], [{"tool": "teleport", "kind": "timeout"}])
    data["id"] = ""
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "semantic", "unknown-tool", "environment.faults[0].tool")


def test_unknown_domain(tmp_path):
    data = edited(A, ["domain"], "banking")
    data["id"] = ""
    report = run(tmp_path, data)
    assert_one_bad(report, 2, "semantic", "unknown-domain", "domain")


def test_gzip_file(tmp_path):
    path = tmp_path / "cases.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(line(A) + "{nope\n" + line(B))
    report = validate_paths([path], batch=False)
    assert [(b.file, b.line) for b in report.bad] == [(str(path), 2)]
    assert kept(report) == [A.id, B.id]


def test_directory_mixing_good_and_bad_files(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a_good.jsonl").write_text(line(A))
    (tmp_path / "sub" / "b_bad.jsonl").write_text(line(B) + "[]\n" + line(clarify_case()))
    (tmp_path / "notes.txt").write_text("not a case file")
    report = validate_paths([tmp_path], batch=False)
    assert report.files == [str(tmp_path / "a_good.jsonl"), str(tmp_path / "sub" / "b_bad.jsonl")]
    assert [(Path(b.file).name, b.line) for b in report.bad] == [("b_bad.jsonl", 2)]
    assert kept(report) == [A.id, B.id, clarify_case().id]


def test_missing_path_is_a_user_error(tmp_path):
    from casemill.errors import UserError

    with pytest.raises(UserError, match="no such file"):
        validate_paths([tmp_path / "nope.jsonl"], batch=False)


def test_quarantine_holds_exactly_the_bad_records_with_reasons(tmp_path):
    path = tmp_path / "q.jsonl"
    wrong = edited(A, ["expected", "outcome"], "maybe")
    path.write_text(line(A) + "{x\n" + line(wrong) + line(B))
    report = validate_paths([path], batch=False)
    out = tmp_path / "out.quarantine.jsonl"
    assert write_quarantine(report, out) == 2
    entries = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(e["line"], e["file"]) for e in entries] == [(2, str(path)), (3, str(path))]
    assert entries[0]["raw"] == "{x"
    assert json.loads(entries[1]["raw"]) == wrong
    assert entries[1]["fields"] == ["expected.outcome"]
    assert entries[1]["reasons"][0]["rule"] == "not-allowed"
