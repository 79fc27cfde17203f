"""Tool specifications: per-line `tools` and `--tools` files, undeclared arguments dropped and
recorded, other violations lowering the label confidence, bad specs reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mining_helpers import call_msg, chat, result_msg, write_jsonl
from typer.testing import CliRunner

from casemill.cli import app
from casemill.errors import UserError
from casemill.mining import MineOptions, mine
from casemill.mining.toolspec import ToolSpecError, conform, load_tools_file, parse_tools


def fn(name: str, parameters: dict | None = None) -> dict:
    function: dict = {"name": name, "description": f"{name} tool"}
    if parameters is not None:
        function["parameters"] = parameters
    return {"type": "function", "function": function}


FLIGHT = {
    "type": "object",
    "properties": {"flight_number": {"type": "string"}, "date": {"type": "string"}},
    "required": ["flight_number", "date"],
}
TOOLS = [
    fn("get_reservation", {"type": "object", "properties": {"reservation_id": {"type": "string"}}}),
    fn(
        "update_flights",
        {
            "type": "object",
            "properties": {
                "reservation_id": {"type": "string"},
                "flights": {"type": "array", "items": FLIGHT},
            },
            "required": ["reservation_id", "flights"],
        },
    ),
]
FLIGHTS = [
    {"flight_number": "HAT001", "date": "2024-05-20", "origin": "JFK"},
    {"flight_number": "HAT002", "date": "2024-05-21", "destination": "SFO"},
]


def conversation(conv_id: str, args: dict, tools: list | None = None) -> dict:
    record = chat(
        conv_id,
        [
            {"role": "user", "content": "Please move my trip to the 20th."},
            call_msg("c1", "get_reservation", {"reservation_id": "ZFA04Y"}),
            result_msg("c1", json.dumps({"reservation_id": "ZFA04Y", "flights": []})),
            {"role": "assistant", "content": "Shall I change the flights?"},
            {"role": "user", "content": "Yes."},
            call_msg("c2", "update_flights", args),
            result_msg("c2", json.dumps({"reservation_id": "ZFA04Y", "status": "ok"})),
            {"role": "assistant", "content": "Done."},
        ],
    )
    if tools is not None:
        record["tools"] = tools
    return record


GOOD = {"reservation_id": "ZFA04Y", "flights": FLIGHTS}


def written(tmp_path: Path, tools: list) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools))
    return path


def whole(result, conv_id: str):
    (case,) = [
        c
        for c in result.cases
        if c.provenance.source.conversation_id == conv_id
        and c.provenance.operators[-1].name == "conversation"
    ]
    return case


def test_nested_undeclared_keys_are_dropped_and_named():
    specs = parse_tools(TOOLS)
    got = conform("update_flights", {**GOOD, "note": "x"}, specs)
    assert got.arguments == {
        "reservation_id": "ZFA04Y",
        "flights": [
            {"flight_number": "HAT001", "date": "2024-05-20"},
            {"flight_number": "HAT002", "date": "2024-05-21"},
        ],
    }
    assert got.dropped == ["flights[0].origin", "flights[1].destination", "note"]
    assert got.problems == []
    assert GOOD["flights"][0]["origin"] == "JFK"  # the logged arguments are not touched


def test_open_objects_patterns_and_refs_are_respected():
    parameters = {
        "type": "object",
        "$defs": {"item": {"type": "object", "properties": {"sku": {"type": "string"}}}},
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
            "meta": {"type": "object", "properties": {}, "additionalProperties": True},
            "labels": {"type": "object", "properties": {}, "patternProperties": {"^x-": {}}},
        },
    }
    specs = parse_tools([fn("tag", parameters)])
    args = {
        "items": [{"sku": "A", "colour": "red"}],
        "meta": {"anything": 1},
        "labels": {"x-team": "a", "team": "b"},
    }
    got = conform("tag", args, specs)
    assert got.arguments == {
        "items": [{"sku": "A"}],
        "meta": {"anything": 1},
        "labels": {"x-team": "a"},
    }
    assert got.dropped == ["items[0].colour", "labels.team"]
    # no `parameters`: the tool takes none (OpenAI's reading), so every argument is dropped
    assert conform("ping", {"a": 1}, parse_tools([fn("ping")])).dropped == ["a"]


def test_per_line_tools_are_honoured_and_recorded(tmp_path):
    log = write_jsonl(
        tmp_path / "log.jsonl",
        [conversation("with", GOOD, TOOLS), conversation("without", GOOD)],
    )
    result = mine([log], "openai-jsonl", redact=False)
    case = whole(result, "with")
    (call,) = case.expected.tool_calls
    assert [set(f) for f in call.params["flights"]] == [{"flight_number", "date"}] * 2
    assert case.provenance.label_confidence == "high"
    assert "needs_label" not in case.tags.labels
    assert (
        "arguments the tool specification does not declare were dropped: "
        "update_flights(flights[0].origin, flights[1].destination)" in case.provenance.notes
    )
    assert case.provenance.operators[-1].args == {"format": "openai-jsonl", "tool_specs": 2}
    plain = whole(result, "without")  # no specs on its line, none given: as logged
    assert plain.expected.tool_calls[0].params == GOOD
    assert plain.provenance.operators[-1].args == {"format": "openai-jsonl"}


def test_a_lines_own_tools_win_over_the_given_ones(tmp_path):
    open_spec = [fn("get_reservation"), fn("update_flights", {"type": "object"})]
    log = write_jsonl(tmp_path / "log.jsonl", [conversation("own", GOOD, open_spec)])
    result = mine(
        [log], "openai-jsonl", redact=False, options=MineOptions(tools=parse_tools(TOOLS))
    )
    case = whole(result, "own")
    assert case.expected.tool_calls[0].params == GOOD  # the line's spec declares no properties
    assert case.provenance.operators[-1].args["tool_specs"] == 2


def test_missing_required_argument_lowers_the_confidence_with_the_reason(tmp_path):
    args = {"flights": [{"flight_number": "HAT001", "origin": "JFK"}]}
    log = write_jsonl(tmp_path / "log.jsonl", [conversation("bad", args, TOOLS)])
    case = whole(mine([log], "openai-jsonl", redact=False), "bad")
    assert case.provenance.label_confidence == "low"
    assert "needs_label" in case.tags.labels
    notes = case.provenance.notes
    assert "call does not match its tool specification" in notes
    assert "update_flights: (parameters): 'reservation_id' is a required property" in notes
    assert "update_flights: flights.0: 'date' is a required property" in notes
    assert "update_flights(flights[0].origin)" in notes  # still dropped, and said so
    assert case.expected.tool_calls[0].params == {"flights": [{"flight_number": "HAT001"}]}


def test_wrong_types_and_unknown_tools_are_not_silently_fixed(tmp_path):
    typed = {"reservation_id": 7, "flights": FLIGHTS}
    only_reads = [TOOLS[0]]
    log = write_jsonl(
        tmp_path / "log.jsonl",
        [conversation("typed", typed, TOOLS), conversation("unknown", GOOD, only_reads)],
    )
    result = mine([log], "openai-jsonl", redact=False)
    typed_case, unknown_case = whole(result, "typed"), whole(result, "unknown")
    assert typed_case.provenance.label_confidence == "low"
    assert "reservation_id: 7 is not of type 'string'" in typed_case.provenance.notes
    assert typed_case.expected.tool_calls[0].params["reservation_id"] == 7
    assert unknown_case.provenance.label_confidence == "low"
    assert "update_flights: unknown tool" in unknown_case.provenance.notes
    assert unknown_case.expected.tool_calls[0].params == GOOD


def test_a_line_with_a_bad_tools_list_is_quarantined(tmp_path):
    bad = [{"type": "function", "function": {"name": "x", "parameters": {"type": "objekt"}}}]
    log = write_jsonl(tmp_path / "log.jsonl", [conversation("bad", GOOD, bad)])
    result = mine([log], "openai-jsonl", redact=False)
    (record,) = result.quarantined
    assert (record.reason, record.field, record.line) == ("bad_tools", "tools", 1)
    assert "tools[0] (x): function.parameters is not a valid JSON Schema" in record.message
    assert not result.cases


def test_tools_file_is_honoured_by_the_cli(tmp_path):
    tools = written(tmp_path, TOOLS)
    log = write_jsonl(tmp_path / "log.jsonl", [conversation("cli", GOOD)])
    out = tmp_path / "out.jsonl"
    args = ["mine", str(log), "-f", "openai-jsonl", "-o", str(out), "--no-redact"]
    done = CliRunner().invoke(app, [*args, "--tools", str(tools)])
    assert done.exit_code == 0, done.output
    cases = [json.loads(line) for line in out.read_text().splitlines()]
    assert cases
    for case in cases:
        (call,) = case["expected"]["tool_calls"]
        assert call["params"]["flights"][0] == {"flight_number": "HAT001", "date": "2024-05-20"}
        assert "update_flights(flights[0].origin" in case["provenance"]["notes"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[{", "the tools file is not JSON"),
        ('{"tools": []}', "tools must be a JSON list"),
        ('[{"type": "function", "function": {}}]', "tools[0]: function.name must be"),
        (json.dumps([TOOLS[0], TOOLS[0]]), "tool 'get_reservation' is specified twice"),
    ],
)
def test_a_bad_tools_file_is_an_error_naming_the_file(tmp_path, content, message):
    path = tmp_path / "my-tools.json"
    path.write_text(content)
    with pytest.raises(UserError) as caught:
        load_tools_file(path)
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)


def test_the_cli_refuses_a_bad_tools_file(tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text('[{"function": {"name": "x", "parameters": []}}]')
    log = write_jsonl(tmp_path / "log.jsonl", [conversation("cli", GOOD)])
    casemill = Path(sys.executable).parent / "casemill"
    done = subprocess.run(
        [str(casemill), "mine", str(log), "-f", "openai-jsonl", "-o", str(tmp_path / "o.jsonl")]
        + ["--tools", str(tools)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stderr
    said = " ".join(done.stderr.split())
    assert str(tools) in said and "function.parameters must be a JSON Schema object" in said
    assert not (tmp_path / "o.jsonl").exists()


def test_specs_that_fit_change_no_expected_call(tmp_path):
    fits = TOOLS[:1] + [fn("update_flights", {"type": "object", "additionalProperties": True})]
    log = write_jsonl(tmp_path / "log.jsonl", [conversation("fits", GOOD)])
    plain = mine([log], "openai-jsonl", redact=False)
    checked = mine(
        [log], "openai-jsonl", redact=False, options=MineOptions(tools=parse_tools(fits))
    )
    assert [c.id for c in checked.cases] == [c.id for c in plain.cases]
    assert [c.provenance.notes for c in checked.cases] == [c.provenance.notes for c in plain.cases]


def test_parse_tools_rejects_what_is_not_a_function_list():
    with pytest.raises(ToolSpecError, match="expected"):
        parse_tools([{"type": "code_interpreter"}])


def test_the_responses_apis_and_anthropics_tool_entries_are_read_as_openais():
    openai = parse_tools([fn("get_flight", FLIGHT)])
    flat = parse_tools([{"type": "function", "name": "get_flight", "parameters": FLIGHT}])
    anthropic = parse_tools([{"name": "get_flight", "input_schema": FLIGHT}])
    for specs in (flat, anthropic):
        assert specs.by_name["get_flight"]["function"]["parameters"] == FLIGHT
        got = conform("get_flight", {"flight_number": "HAT1", "seat": "2A"}, specs)
        assert got == conform("get_flight", {"flight_number": "HAT1", "seat": "2A"}, openai)
    with pytest.raises(ToolSpecError, match="not a valid JSON Schema"):
        parse_tools([{"name": "get_flight", "input_schema": {"type": 7}}])


def test_the_mine_flow_task_takes_the_specs(tmp_path):
    from casemill.flows.mine import mine_file_task

    log = write_jsonl(tmp_path / "log.jsonl", [conversation("flow", GOOD)])
    specs = list(load_tools_file(written(tmp_path, TOOLS)).by_name.values())
    result = mine_file_task.fn(str(log), "fp", "openai-jsonl", False, 0, "code", specs)
    assert "update_flights(flights[0].origin" in whole(result, "flow").provenance.notes
    plain = mine_file_task.fn(str(log), "fp", "openai-jsonl", False, 0, "code")
    assert whole(plain, "flow").expected.tool_calls[0].params == GOOD
