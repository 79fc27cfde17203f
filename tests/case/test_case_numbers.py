"""Numbers in case files: NaN and infinities are refused with their place (Python's `json` reads
them, JSON has none), and the model refuses the coercible values the JSON Schema refuses, so
`casemill validate` and the readers that use the model alone (export, the corpus) agree."""

from __future__ import annotations

import copy
import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest
from fixtures.casebuild import line, record, refund_case
from pydantic import ValidationError
from typer.testing import CliRunner

from casemill.case.matching import value_matches
from casemill.case.model import Case, ParamRule, ToolCall
from casemill.cli import app
from casemill.validation import SchemaLayer

runner = CliRunner()


def _record() -> dict[str, Any]:
    """A good refund case as a file holds it, with every optional part present (a partial
    refund amount, a forbidden call, a fault, an assistant call, lineage, a review edit)."""
    data = record(refund_case())
    data["expected"]["tool_calls"][0]["params"]["amount"] = 14.5
    data["expected"]["tool_calls"][0]["match"]["amount"] = {"kind": "number", "tolerance": 0.01}
    data["expected"]["forbidden_calls"] = [{"tool": "cancel_order", "params": {"amount": 1.5}}]
    data["environment"]["faults"] = [{"tool": "get_order", "kind": "timeout", "params": {}}]
    data["conversation"].append(
        {"role": "assistant", "tool_calls": [{"tool": "get_order", "params": {"n": 1.5}}]}
    )
    data["provenance"] = {
        "origin": "generated",
        "seed": 7,
        "source": {"file": "log.jsonl", "line": 3},
        "operators": [{"kind": "noise", "name": "typos", "version": "1", "args": {"p": 0.5}}],
    }
    data["review"] = {
        "status": "approved",
        "reviewer": "ana",
        "decided_at": "2026-01-02T03:04:05Z",
        "edits": [{"path": "expected.outcome", "before": 1.5, "after": 2.5}],
    }
    data.pop("id")  # computed: the edits above change the content
    Case.model_validate(data)  # the base is valid
    return data


def _put(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(data)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    target = data
    for part in parents:
        target = target[part]
    target[last] = value
    return data


def _errors(data: Any, *, as_json: bool = False) -> list[tuple[str, str]]:
    """(dotted location, error type) of each error the model finds, [] when valid."""
    try:
        if as_json:
            Case.model_validate_json(json.dumps(data))
        else:
            Case.model_validate(data)
    except ValidationError as exc:
        return [(".".join(map(str, e["loc"])), e["type"]) for e in exc.errors()]
    return []


# -- NaN and infinities -------------------------------------------------------------------------

NUMBER_PLACES = [
    "expected.tool_calls.0.params.amount",
    "expected.tool_calls.0.match.amount.tolerance",
    "expected.forbidden_calls.0.params.amount",
    "environment.state.orders.W1001.items.0.price",
    "environment.faults.0.params.x",
    "conversation.2.tool_calls.0.params.n",
    "provenance.operators.0.args.p",
    "review.edits.0.before",
    "review.edits.0.after",
]


@pytest.mark.parametrize("as_json", [False, True], ids=["dict", "json-text"])
@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("place", NUMBER_PLACES)
def test_non_finite_numbers_are_refused_where_they_are(place, number, as_json):
    assert _errors(_put(_record(), place, number), as_json=as_json) == [(place, "finite_number")]


def test_every_non_finite_number_is_named_with_its_spelling():
    data = _put(_record(), "environment.state.orders.W1001.items.0.price", math.inf)
    data = _put(data, "environment.state.orders.W1001.items.1.price", -math.inf)
    with pytest.raises(ValidationError) as caught:
        Case.model_validate(_put(data, "environment.state.extra", [1, [math.nan]]))
    found = {".".join(map(str, e["loc"])): e["msg"] for e in caught.value.errors()}
    assert found == {
        "environment.state.orders.W1001.items.0.price": (
            "Input should be a finite number, not Infinity (NaN and Infinity are not JSON numbers)"
        ),
        "environment.state.orders.W1001.items.1.price": (
            "Input should be a finite number, not -Infinity (NaN and Infinity are not JSON numbers)"
        ),
        "environment.state.extra.1.0": (
            "Input should be a finite number, not NaN (NaN and Infinity are not JSON numbers)"
        ),
    }


def test_an_integer_too_large_for_a_double_is_refused_like_an_infinity():
    place = "expected.tool_calls.0.params.amount"
    with pytest.raises(ValidationError) as caught:
        Case.model_validate(_put(_record(), place, 10**400))
    [error] = caught.value.errors()
    assert error["loc"] == tuple(int(p) if p.isdigit() else p for p in place.split("."))
    assert error["msg"].startswith("Input should be a finite number, not an integer beyond")
    assert _errors(_put(_record(), place, -(2**1024))) == [(place, "finite_number")]
    assert _errors(_put(_record(), place, 2**1023)) == []  # a double holds it


def test_a_part_built_in_code_refuses_nan_too():
    with pytest.raises(ValidationError, match="not NaN") as caught:
        ToolCall(tool="refund_items", params={"amount": float("nan")})
    assert caught.value.errors()[0]["loc"] == ("params", "amount")


def _nan_file(tmp_path: Path) -> tuple[Path, list[str]]:
    good = refund_case()
    bad = record(good)  # a hand edit: NaN where the amount goes, the old id kept
    bad["expected"]["tool_calls"][0]["params"]["amount"] = math.nan
    text = [line(good), line(bad), line(refund_case("W1009"))]
    assert "NaN" in text[1]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(text), encoding="utf-8")
    return path, text


def test_validate_refuses_a_nan_amount_as_a_bad_record_and_keeps_the_good_ones(tmp_path):
    path, text = _nan_file(tmp_path)
    quarantine = tmp_path / "bad.jsonl"
    result = runner.invoke(
        app, ["validate", str(path), "--no-batch", "--quarantine", str(quarantine)]
    )
    assert result.exit_code == 1, result.output
    assert (
        f"{path}:2: field 'expected.tool_calls[0].params.amount' error [model/not-finite] "
        "Input should be a finite number, not NaN"
    ) in result.output
    assert "please report" not in result.output and "check-crashed" not in result.output
    assert "1 bad records written to" in result.output
    [kept] = [json.loads(x) for x in quarantine.read_text(encoding="utf-8").splitlines()]
    assert kept["line"] == 2 and kept["case_id"] == refund_case().id
    assert kept["fields"] == ["expected.tool_calls[0].params.amount"]
    assert [(r["layer"], r["field"]) for r in kept["reasons"]] == [
        ("model", "expected.tool_calls[0].params.amount")
    ]
    assert kept["raw"] + "\n" == text[1]


def _validate_json(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`casemill validate --json` on a file with bad records: its report and the quarantine."""
    quarantine = path.with_name("bad.jsonl")
    result = runner.invoke(
        app, ["validate", str(path), "--json", "--no-batch", "--quarantine", str(quarantine)]
    )
    assert result.exit_code == 1, result.output
    quarantined = [json.loads(x) for x in quarantine.read_text().splitlines()]
    return json.loads(result.output), quarantined


def test_validate_json_report_keeps_the_good_cases_of_a_file_with_infinity(tmp_path):
    bad = record(refund_case())
    bad["environment"]["state"]["orders"]["W1001"]["items"][0]["price"] = math.inf
    path = tmp_path / "cases.jsonl"
    path.write_text(line(refund_case("W1008")) + line(bad) + line(refund_case("W1009")))
    report, quarantined = _validate_json(path)
    assert (report["records"], report["valid"], report["bad"]) == (3, 2, 1)
    assert [(f["line"], f["layer"], f["field"]) for f in report["findings"]] == [
        (2, "model", "environment.state.orders.W1001.items[0].price")
    ]
    assert [q["line"] for q in quarantined] == [2]


def test_numbers_json_cannot_read_into_python_are_bad_lines_not_a_crash(tmp_path):
    """Python's `json` refuses an int of over 4,300 digits (ValueError) and deep nesting
    (RecursionError): bad records like any unreadable line, the good ones around them kept."""
    many_digits = line(record(refund_case())).replace(
        '"optimal_steps": 3', '"optimal_steps": 1' + "0" * 5000
    )
    assert "0" * 5000 in many_digits
    deep = '{"domain": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    path = tmp_path / "cases.jsonl"
    path.write_text(line(refund_case("W1008")) + many_digits + deep + line(refund_case("W1009")))
    report, quarantined = _validate_json(path)
    assert (report["records"], report["valid"], report["bad"]) == (4, 2, 2)
    assert [(f["line"], f["layer"], f["rule"], f["message"]) for f in report["findings"]] == [
        (2, "json", "invalid-json", "not valid JSON: a number of over 4,300 digits"),
        (3, "json", "invalid-json", "not valid JSON: arrays or objects nested too deeply"),
    ]
    assert [q["line"] for q in quarantined] == [2, 3]


@pytest.mark.parametrize("sent", [10**400, "nan", "inf", "-Infinity", math.nan, math.inf])
def test_a_number_rule_matches_no_value_a_double_cannot_hold(sent):
    rule = ParamRule(kind="number", tolerance=0.01)
    assert value_matches(20.0, sent, rule) is False  # no OverflowError from the scoring
    assert value_matches(20.0, "20.001", rule) is True


@pytest.mark.parametrize("sent", [math.nan, math.inf, -math.inf, 10**400])
def test_an_agent_sending_a_number_json_cannot_hold_matches_nothing_and_scoring_goes_on(sent):
    """An agent's tool-call arguments come from its JSON, which Python reads NaN and Infinity
    from: the exact and set rules and the forbidden-call check say no match, they do not raise
    (orjson writes NaN as null, so it must not match a null either)."""
    from types import SimpleNamespace

    from casemill.case.matching import forbidden_hit
    from casemill.case.model import ForbiddenCall

    assert value_matches(20.0, sent) is False
    assert value_matches(None, sent) is False
    assert value_matches({"amount": 20.0}, {"amount": sent}) is False
    assert value_matches([1.0, 2.0], [2.0, sent], ParamRule(kind="set")) is False
    assert value_matches([1.0, 2.0], [2.0, 1.0], ParamRule(kind="set")) is True
    rule = ForbiddenCall(tool="refund_items", params={"detail": {"amount": 20}})
    call = SimpleNamespace(tool="refund_items", params={"detail": {"amount": sent}})
    assert forbidden_hit(rule, call, frozenset()) is False  # type: ignore[arg-type]
    same = SimpleNamespace(tool="refund_items", params={"detail": {"amount": 20}})
    assert forbidden_hit(rule, same, frozenset()) is True  # type: ignore[arg-type]


# -- coercible values: the model refuses what the JSON Schema refuses ---------------------------

# every typed scalar field of the case that is not a string, and values of JSON that lax pydantic
# would coerce into it
COERCIBLE = [
    ("expected.optimal_steps", "2"),
    ("expected.optimal_steps", True),
    ("environment.faults.0.times", "1"),
    ("provenance.seed", "7"),
    ("provenance.seed", False),
    ("provenance.source.line", "3"),
    ("schema_version", True),
    ("schema_version", "1"),
    ("expected.tool_calls.0.match.amount.tolerance", "0.01"),
    ("expected.tool_calls.0.match.amount.tolerance", True),
    ("expected.tool_calls.0.match.amount.ids", 1),
    ("expected.tool_calls.0.match.amount.ids", "true"),
    ("expected.forbidden_calls.0.any_write", 0),
    ("review.auto_approved", "false"),
    ("review.auto_approved", 0.0),
    ("review.decided_at", 1767323045),
    ("review.decided_at", 1767323045.5),
]


@pytest.mark.parametrize(("place", "value"), COERCIBLE)
def test_the_model_refuses_what_the_schema_refuses(place, value):
    data = _put(_record(), place, value)
    schema = SchemaLayer.default().findings(data)
    # (an error inside an optional object is reported at the object: `provenance.source`)
    assert [f.rule for f in schema] == ["wrong-type"]
    assert _dotted(place).startswith(schema[0].field)
    expected = [("" if place == "schema_version" else place, _type_of(place))]
    assert _errors(data) == expected
    assert _errors(data, as_json=True) == expected


def _dotted(place: str) -> str:
    """A place as findings write it: `expected.tool_calls[0].match`."""
    return "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in place.split(".")).lstrip(".")


def _type_of(place: str) -> str:
    if place == "schema_version":
        return "value_error"  # the migration hook: "schema_version must be a positive integer"
    if place.endswith(("tolerance",)):
        return "float_type"
    if place.endswith(("ids", "any_write", "auto_approved")):
        return "bool_type"
    if place.endswith("decided_at"):
        return "datetime_type"
    return "int_type"


@pytest.mark.parametrize(
    ("place", "value", "read"),
    [
        ("expected.optimal_steps", 3.0, 3),  # JSON Schema's integer: 3.0 is 3
        ("schema_version", 1.0, 1),
        ("provenance.source.line", 12.0, 12),
        ("expected.tool_calls.0.match.amount.tolerance", 1, 1.0),  # an integer is a number
    ],
)
def test_values_both_accept_are_read_canonically(place, value, read):
    data = _put(_record(), place, value)
    assert SchemaLayer.default().findings(data) == []
    got: Any = Case.model_validate(data)
    for part in place.split("."):
        if part.isdigit():
            got = got[int(part)]
        else:
            got = got[part] if isinstance(got, dict) else getattr(got, part)
    assert got == read and type(got) is type(read)


def test_an_iso_date_time_is_required_not_a_timestamp_string():
    assert _errors(_put(_record(), "review.decided_at", "1767323045")) == [
        ("review.decided_at", "datetime_parsing")
    ]
    assert _errors(_put(_record(), "review.decided_at", "2026-01-02T03:04:05+01:00")) == []


SCALAR_PLACES = sorted({place for place, _ in COERCIBLE})
JSON_VALUES = ["2", "true", "", "x", 0, 1, 2, 2.0, 2.5, -1, True, False, None, [], {}, [1]]


def test_whatever_the_model_accepts_the_schema_accepts():
    """Every typed scalar field against every kind of JSON value: a record the model reads
    passes the schema (the reverse may not hold: cross-field rules, a newer schema_version)."""
    layer = SchemaLayer.default()
    base = _record()
    laxer = [
        (place, value)
        for place, value in itertools.product(SCALAR_PLACES, JSON_VALUES)
        if not _errors(data := _put(base, place, value)) and layer.findings(data)
    ]
    assert laxer == []


def test_export_refuses_a_record_validate_refuses(tmp_path):
    bad = _put(record(refund_case()), "expected.optimal_steps", "3")
    source = tmp_path / "cases.jsonl"
    source.write_text(line(bad))
    out = tmp_path / "out.jsonl"
    quarantine = tmp_path / "bad.jsonl"
    result = runner.invoke(
        app, ["validate", str(source), "--no-batch", "--quarantine", str(quarantine)]
    )
    assert result.exit_code == 1
    assert f"{source}:1: field 'expected.optimal_steps' error [schema/wrong-type]" in result.output
    result = runner.invoke(app, ["export", "--to", "chapter", str(source), "-o", str(out)])
    said = " ".join(result.output.split())
    assert result.exit_code == 1, said
    assert f"{source}:1: field 'expected.optimal_steps'" in said
    assert "Input should be an integer, not a string ('3')" in said
    assert not out.exists() or out.read_text() == ""
