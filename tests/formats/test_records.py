from __future__ import annotations

from pathlib import Path

from casemill.formats.records import read_records


def test_jsonl_records_carry_line_numbers_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\n{"b": \n[3]\n')
    records = list(read_records(path))
    assert [(r.line, r.value) for r in records] == [(1, {"a": 1}), (3, None), (4, None)]
    assert "not valid JSON" in records[1].error
    assert records[2].error == "expected a JSON object, got list"


def test_json_array_elements_are_located_at_their_own_line(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('[\n  {"id": "0"},\n  {\n    "id": "1"\n  },\n  7\n]\n', encoding="utf-8")
    records = list(read_records(path))
    assert [(r.line, r.value, r.error) for r in records[:2]] == [
        (2, {"id": "0"}, None),
        (3, {"id": "1"}, None),
    ]
    assert records[2].line == 6
    assert records[2].error == "expected a JSON object, got int"


def test_truncated_json_array_keeps_the_elements_before_the_break(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('[{"id": "0"},\n {"id": "1"},\n {"id": ', encoding="utf-8")
    records = list(read_records(path))
    assert [r.value for r in records[:2]] == [{"id": "0"}, {"id": "1"}]
    assert records[2].line == 3
    assert "truncated" in records[2].error


def test_a_pretty_printed_single_object_is_one_record(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text('{\n  "a": 1,\n  "b": [1, 2]\n}\n', encoding="utf-8")
    (record,) = read_records(path)
    assert (record.line, record.value, record.error) == (1, {"a": 1, "b": [1, 2]}, None)


def test_a_broken_pretty_printed_object_is_reported_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text('{\n  "a": 1,\n', encoding="utf-8")
    records = list(read_records(path))
    assert [r.line for r in records] == [1, 2]
    assert all(r.error for r in records)
