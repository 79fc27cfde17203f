"""The exported JSON Schema: in sync with the model (regenerate with the command in the
message), Draft 2020-12, and it accepts what the model accepts on ordinary records."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from fixtures.casebuild import good_cases, record
from jsonschema import Draft202012Validator

from casemill.validation import SchemaLayer, case_json_schema
from casemill.validation.schema import CASE_SCHEMA_PATH, EXPORT_COMMAND, SCHEMA_DIALECT

ROOT = Path(__file__).resolve().parents[2]


def _exporter():
    spec = importlib.util.spec_from_file_location(
        "export_schema", ROOT / "scripts" / "export_schema.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_schemas_match_the_code():
    for path, text in _exporter().documents().items():
        committed = path.read_text(encoding="utf-8") if path.is_file() else ""
        assert committed == text, (
            f"{path.relative_to(ROOT)} is out of date with the code; regenerate it with "
            f"`{EXPORT_COMMAND}` and commit the result"
        )


def test_export_check_mode_reports_up_to_date(capsys):
    assert _exporter().main(["--check"]) == 0


def test_schema_is_draft_2020_12_with_an_id():
    schema = json.loads(CASE_SCHEMA_PATH.read_text())
    assert schema["$schema"] == SCHEMA_DIALECT
    assert schema["$id"].startswith("urn:casemill:schema:case:")
    Draft202012Validator.check_schema(schema)
    assert schema == case_json_schema()
    assert list(schema) == sorted(schema)  # stable key order


def test_good_records_pass_and_findings_have_dotted_paths():
    layer = SchemaLayer.default()
    for case in good_cases():
        assert layer.findings(record(case)) == []
    data = record(good_cases()[0])
    data["expected"]["tool_calls"][0]["match"]["order_id"]["kind"] = "fuzzy"
    data["tags"]["difficulty"] = 3
    found = sorted((f.field, f.rule) for f in layer.findings(data, "x.jsonl", 4))
    assert found == [
        ("expected.tool_calls[0].match.order_id.kind", "not-allowed"),
        ("tags.difficulty", "not-allowed"),
    ]


def test_tools_document_lists_every_support_tool():
    tools = json.loads((ROOT / "schemas" / "support.tools.json").read_text())
    names = [t["function"]["name"] for t in tools["tools"]]
    assert "refund_items" in names and "get_order" in names and len(names) == 8
