"""`casemill.io.jsonl`: line decoding and its error messages."""

from __future__ import annotations

from casemill.io.jsonl import decode_line, where


def test_an_unterminated_string_is_placed_without_a_doubled_at() -> None:
    line = decode_line("f.jsonl", 3, b'{"a": "b')
    assert line is not None and line.value is None
    assert line.error == "not valid JSON: Unterminated string starting at column 7"


def test_other_json_errors_read_at_column() -> None:
    line = decode_line("f.jsonl", 1, b'{"a" 1}')
    assert line is not None
    assert line.error == "not valid JSON: Expecting ':' delimiter at column 6"


def test_where_adds_at_only_when_the_message_lacks_it() -> None:
    assert where("Expecting value", "line", 4) == "Expecting value at line 4"
    assert where("Unterminated string starting at", "line", 4) == (
        "Unterminated string starting at line 4"
    )
