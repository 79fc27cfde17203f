"""`casemill.io.limits`: the one place that decides what a parsed record may hold (no lone
surrogate, no nesting past the depth limit, no integer past a float's range), and every reader
that applies it: case files, logs and import sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casemill.formats.records import read_records
from casemill.io.jsonl import read_jsonl
from casemill.io.limits import MAX_DEPTH, record_problem
from casemill.mining.reading import iter_lines, json_objects


def nested(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "reason", "where"),
    [
        ({"a": {"b": "ok\ud800"}}, "unencodable_text", "at a.b"),
        ({"k\udfff": 1}, "unencodable_text", "at k"),
        ({"a": [1, 10**400]}, "number_out_of_range", "at a[1]"),
        ({"a": nested(MAX_DEPTH + 5)}, "too_deep", "at a[0][0]"),
    ],
)
def test_problems_are_named_with_their_field(value, reason, where):
    problem = record_problem(value)
    assert problem is not None
    assert problem[0] == reason
    assert where in problem[1]


def test_plain_records_pass_and_skip_the_walk():
    good = {"a": [1, 2.5, -(10**300)], "b": "caf\u00e9 \U0001f600", "c": nested(MAX_DEPTH - 2)}
    assert record_problem(good) is None
    assert record_problem(good, json.dumps(good).encode()) is None
    # a surrogate pair written as escapes is one valid character, not a lone surrogate
    assert record_problem(json.loads('{"a": "\\ud83d\\ude00"}'), b'{"a": "\\ud83d\\ude00"}') is None


def test_a_deep_value_far_past_the_stack_does_not_recurse():
    assert record_problem({"a": nested(50_000)})[0] == "too_deep"


def lines_of(tmp_path: Path, *records: str) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(r + "\n" for r in records), encoding="utf-8")
    return path


# as text: json.dumps itself cannot write 1,000 levels
BAD = [
    '{"a": "\\ud800"}',
    '{"a": ' + "[" * 1000 + "1" + "]" * 1000 + "}",
    '{"a": 1' + "0" * 400 + "}",
]


@pytest.mark.parametrize("bad", BAD, ids=["surrogate", "deep", "huge"])
def test_every_reader_keeps_the_good_record_and_names_the_bad_line(tmp_path, bad):
    path = lines_of(tmp_path, '{"ok": 1}', bad, '{"ok": 2}')
    cases = list(read_jsonl(path))
    assert [line.value for line in cases if line.error is None] == [{"ok": 1}, {"ok": 2}]
    assert [line.number for line in cases if line.error] == [2]
    imported = list(read_records(path))
    assert [r.value for r in imported if r.error is None] == [{"ok": 1}, {"ok": 2}]
    assert [r.line for r in imported if r.error] == [2]
    mined = list(json_objects(str(path), iter_lines(path)))
    assert [m for m in mined if isinstance(m, tuple)] == [(1, {"ok": 1}), (3, {"ok": 2})]
    assert [m.line for m in mined if not isinstance(m, tuple)] == [2]


@pytest.mark.parametrize("bad", BAD, ids=["surrogate", "deep", "huge"])
def test_a_json_array_source_refuses_the_same_elements(tmp_path, bad):
    path = tmp_path / "in.json"
    path.write_text('[\n{"ok": 1},\n' + bad + ',\n{"ok": 2}\n]\n', encoding="utf-8")
    records = list(read_records(path))
    assert [r.value for r in records if r.error is None] == [{"ok": 1}, {"ok": 2}]
    assert len([r for r in records if r.error]) == 1


def test_an_otel_export_line_nested_too_deep_is_quarantined(tmp_path):
    from casemill.mining.parsers.otel_documents import documents

    path = tmp_path / "spans.jsonl"
    deep = '{"resourceSpans": ' + "[" * 1000 + "]" * 1000 + "}"
    path.write_text('{"resourceSpans": []}\n' + deep + "\n", encoding="utf-8")
    out = list(documents(path, None))
    assert out[0] == (1, {"resourceSpans": []})
    assert (out[1].record.line, out[1].record.reason) == (2, "too_deep")
