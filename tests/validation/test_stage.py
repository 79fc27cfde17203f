"""The validate stage (`casemill.validation.stage`), without the command line: its checks, the
quarantine it writes and the outcome it returns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casemill.errors import UserError
from casemill.validation import validate_paths
from casemill.validation.stage import (
    ValidateRequest,
    default_quarantine,
    refuse_no_records,
    run_validate,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MIXED = FIXTURES / "mixed.jsonl"
GOOD = FIXTURES / "good.jsonl"
BAD_LINES = [2, 4, 6, 7, 9, 10, 11]


def _lines(path: Path) -> list[int]:
    return [json.loads(x)["line"] for x in path.read_text().splitlines()]


def test_bad_records_go_to_the_default_quarantine_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    told = []
    outcome = run_validate(ValidateRequest((MIXED,), batch=False), progress=told.append)
    assert told == ["validating (json, schema, model, semantic, lint, batch)"]
    assert outcome.exit_code == 1 and not outcome.report.ok
    assert outcome.quarantine == tmp_path / "mixed.quarantine.jsonl"
    assert _lines(outcome.quarantine) == BAD_LINES
    assert (outcome.report.records, outcome.report.valid_count) == (12, 5)
    assert outcome.report.valid == []  # streamed: no case kept


def test_the_outcome_as_json_is_the_report_with_its_quarantine(tmp_path):
    target = tmp_path / "q.jsonl"
    outcome = run_validate(ValidateRequest((MIXED,), batch=False, quarantine=target))
    data = outcome.as_json()
    assert data["quarantine"] == str(target) and data["bad"] == 7 and data["valid"] == 5
    kept = validate_paths([MIXED], batch=False)
    assert {k: v for k, v in data.items() if k not in ("quarantine", "seconds")} == {
        k: v for k, v in kept.as_dict().items() if k != "seconds"
    }


def test_good_files_write_no_quarantine_unless_one_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outcome = run_validate(ValidateRequest((GOOD,), batch=False))
    assert outcome.exit_code == 0 and outcome.quarantine is None
    assert outcome.as_json()["quarantine"] is None and list(tmp_path.iterdir()) == []
    named = run_validate(ValidateRequest((GOOD,), batch=False, quarantine=tmp_path / "q.jsonl"))
    assert named.quarantine == tmp_path / "q.jsonl"
    assert named.quarantine.read_text() == ""


def test_strict_makes_lint_warnings_errors(tmp_path):
    record = json.loads(GOOD.read_text().splitlines()[0])
    record["expected"]["reply_contains"] = ["refund"]  # proves nothing: a lint warning
    del record["id"]  # computed again from the content
    path = tmp_path / "vague.jsonl"
    path.write_text(json.dumps(record) + "\n")
    target = tmp_path / "q.jsonl"
    loose = run_validate(ValidateRequest((path,), batch=False, quarantine=target))
    assert loose.exit_code == 0 and [w.rule for w in loose.report.warnings] == ["vague-phrase"]
    strict = run_validate(ValidateRequest((path,), strict=True, batch=False, quarantine=target))
    assert strict.exit_code == 1 and _lines(target) == [1]


@pytest.mark.slow
def test_the_batch_layer_runs_unless_turned_off(tmp_path):
    target = tmp_path / "q.jsonl"
    outcome = run_validate(ValidateRequest((MIXED,), quarantine=target))
    assert outcome.report.batch_checked and "batch" in outcome.report.seconds
    assert _lines(target) == BAD_LINES


def test_inputs_and_targets_are_refused_before_anything_is_written(tmp_path):
    cases = tmp_path / "mixed.jsonl"
    cases.write_bytes(MIXED.read_bytes())
    (tmp_path / "empty").mkdir()
    (tmp_path / "blank.jsonl").write_text("\n")
    for request, message in (
        (ValidateRequest((cases,), quarantine=cases), f"--quarantine {cases} is also an input"),
        (ValidateRequest((tmp_path,), quarantine=cases), f"--quarantine {cases} is also an input"),
        (ValidateRequest((cases,), quarantine=tmp_path), f"--quarantine {tmp_path} is a folder"),
        (ValidateRequest((tmp_path / "empty",)), "no .jsonl or .jsonl.gz case files"),
        (ValidateRequest((tmp_path / "nope",)), "no such file or folder"),
        (ValidateRequest((tmp_path / "blank.jsonl",)), "no case records in them"),
    ):
        with pytest.raises(UserError, match=message):
            run_validate(request)
    assert cases.read_bytes() == MIXED.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blank.jsonl", "empty", "mixed.jsonl"]


def test_the_default_quarantine_is_named_after_the_first_input(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    named = {
        first: default_quarantine(first).name
        for first in ("seeds/", "cases.jsonl.gz", "set.json", "/", ".jsonl")
    }
    assert named == {
        "seeds/": "seeds.quarantine.jsonl",
        "cases.jsonl.gz": "cases.quarantine.jsonl",
        "set.json": "set.quarantine.jsonl",
        "/": "input.quarantine.jsonl",
        ".jsonl": "input.quarantine.jsonl",
    }
    assert default_quarantine("seeds").parent == tmp_path


def test_a_report_of_no_record_is_refused(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    report = validate_paths([empty], batch=False)
    with pytest.raises(UserError, match=f"^{empty}: no case records in them$"):
        refuse_no_records(report, [empty])


def test_the_bar_is_told_the_records_read_of_the_files_lines(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    big = tmp_path / "big.jsonl"
    big.write_text(GOOD.read_text() * 200)
    lines = GOOD.read_text().count("\n") * 200
    told: list[tuple[int, int]] = []
    run_validate(
        ValidateRequest((big,), batch=False), bar=lambda done, total: told.append((done, total))
    )
    assert told[-1] == (lines, lines)
    assert [d for d, _ in told] == sorted(d for d, _ in told) and len(told) > 1
