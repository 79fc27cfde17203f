"""The exported JSON Schema: in sync with the model (regenerate with the command in the
message), Draft 2020-12, and it accepts what the model accepts on ordinary records."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from fixtures.casebuild import good_cases, record
from hypothesis import given, settings
from hypothesis import strategies as st
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


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-2, 5)
    | st.floats(-1, 1)
    | st.sampled_from(
        ["", "x", "resolve", "clarify", "customer", "refund_items", "exact", "id", "easy", "seed"]
    )
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=2)
        | st.dictionaries(
            st.sampled_from(["tool", "kind", "role", "params", "x"]), inner, max_size=2
        )
    ),
    max_leaves=4,
)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_fast_acceptor_is_sound_on_mutated_records(data):
    layer = SchemaLayer.default()
    record_ = record(data.draw(st.sampled_from(good_cases())))
    paths = [p for p in _paths(record_) if p]
    path = data.draw(st.sampled_from(paths))
    parent = record_
    for key in path[:-1]:
        parent = parent[key]
    action = data.draw(st.sampled_from(["replace", "delete", "extra"]))
    if action == "replace" or (action == "delete" and isinstance(parent, list)):
        parent[path[-1]] = data.draw(json_value)
    elif action == "delete":
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent["unexpected"] = data.draw(json_value)
    if layer.accept(record_):
        assert layer.validator.is_valid(record_), record_


def test_fast_acceptor_takes_good_records():
    layer = SchemaLayer.default()
    assert layer.accept is not None
    assert all(layer.accept(record(c)) for c in good_cases())


def test_tools_document_lists_every_support_tool():
    tools = json.loads((ROOT / "schemas" / "support.tools.json").read_text())
    names = [t["function"]["name"] for t in tools["tools"]]
    assert "refund_items" in names and "get_order" in names and len(names) == 8
