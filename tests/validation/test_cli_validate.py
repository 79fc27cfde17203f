"""`casemill validate`: exit codes, human and JSON output, the quarantine file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill.cli import app
from casemill.errors import UserError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MIXED = FIXTURES / "mixed.jsonl"
GOOD = FIXTURES / "good.jsonl"
BAD_LINES = [2, 4, 6, 7, 9, 10, 11]
GOOD_LINES = [1, 3, 5, 8, 12]

runner = CliRunner()


def _quarantine_lines(path: Path) -> list[int]:
    return [json.loads(x)["line"] for x in path.read_text().splitlines()]


def test_good_file_exits_0_and_writes_no_quarantine(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["validate", str(GOOD), "--no-batch"])
    assert result.exit_code == 0, result.output
    assert "all cases valid" in result.output
    assert list(tmp_path.iterdir()) == []


def test_mixed_file_human_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["validate", str(MIXED), "--no-batch"])
    assert result.exit_code == 1
    for number in BAD_LINES:
        assert f"{MIXED}:{number}:" in result.output
    for number in GOOD_LINES:
        assert f"{MIXED}:{number}:" not in result.output
    assert f"{MIXED}:4: field 'expected.optimal_steps' error [schema/wrong-type]" in result.output
    quarantine = tmp_path / "mixed.quarantine.jsonl"
    assert f"7 bad records written to {quarantine}" in result.output.replace("\n", "")
    assert _quarantine_lines(quarantine) == BAD_LINES


def test_json_report(tmp_path):
    target = tmp_path / "q.jsonl"
    result = runner.invoke(
        app, ["validate", str(MIXED), "--json", "--no-batch", "--quarantine", str(target)]
    )
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["ok"] is False and report["valid"] == 5 and report["bad"] == 7
    assert report["quarantine"] == str(target)
    assert [b["line"] for b in report["bad_records"]] == BAD_LINES
    assert report["counts"]["semantic"] == {"missing-id": 1, "unknown-tool": 1}
    assert report["counts"]["json"] == {"invalid-json": 1, "not-object": 1}
    located = {(f["line"], f["field"], f["rule"]) for f in report["findings"]}
    assert (11, "expected.tool_calls[0].params.order_id", "missing-id") in located
    assert _quarantine_lines(target) == BAD_LINES


def test_strict_turns_lints_into_errors(tmp_path):
    from fixtures.casebuild import line, refund_case

    vague = refund_case(text="My order W1001 arrived and the mug is cracked.")
    data = json.loads(line(vague))
    data["expected"]["reply_contains"] = ["refund"]
    data["id"] = ""
    path = tmp_path / "vague.jsonl"
    path.write_text(json.dumps(data) + "\n")
    loose = runner.invoke(
        app, ["validate", str(path), "--no-batch", "--quarantine", str(tmp_path / "q1")]
    )
    assert loose.exit_code == 0
    assert "warning [lint/vague-phrase]" in loose.output
    strict = runner.invoke(
        app, ["validate", str(path), "--no-batch", "--strict", "--quarantine", str(tmp_path / "q2")]
    )
    assert strict.exit_code == 1
    assert "error [lint/vague-phrase]" in strict.output


def test_usage_errors_exit_2(tmp_path):
    assert runner.invoke(app, ["validate"]).exit_code == 2
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from casemill.cli import main; main()",
            "validate",
            str(tmp_path / "nope"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "no such file or folder" in " ".join(proc.stderr.split())


def test_a_quarantine_that_is_an_input_or_a_folder_is_refused(tmp_path):
    cases = tmp_path / "mixed.jsonl"
    cases.write_bytes(MIXED.read_bytes())
    for target, message in (
        (cases, f"--quarantine {cases} is also an input"),  # its bad records would replace it
        (tmp_path, f"--quarantine {tmp_path} is a folder"),
    ):
        result = runner.invoke(
            app, ["validate", str(cases), "--no-batch", "--quarantine", str(target)]
        )
        assert isinstance(result.exception, UserError), result.output
        assert str(result.exception).startswith(message)
    # a file inside a folder given as the input is an input too
    result = runner.invoke(
        app, ["validate", str(tmp_path), "--no-batch", "--quarantine", str(cases)]
    )
    assert isinstance(result.exception, UserError), result.output
    assert str(result.exception).startswith(f"--quarantine {cases} is also an input")
    assert cases.read_bytes() == MIXED.read_bytes()


@pytest.mark.slow
def test_acceptance_mixed_file_with_every_layer(tmp_path, monkeypatch):
    """The issue's acceptance: exit 1, every bad line reported, the quarantine holds exactly
    the bad ones, every good one kept (the batch layer included)."""
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["validate", str(MIXED), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["batch_checked"] is True
    assert [b["line"] for b in report["bad_records"]] == BAD_LINES
    assert report["valid"] == len(GOOD_LINES)
    assert _quarantine_lines(tmp_path / "mixed.quarantine.jsonl") == BAD_LINES


SEEDS = Path(__file__).resolve().parents[2] / "seeds"


@pytest.mark.skipif(not SEEDS.is_dir(), reason="no seeds/ folder")
def test_seeds_pass_every_layer_but_batch_strictly(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["validate", str(SEEDS), "--strict", "--no-batch", "--json"])
    report = json.loads(result.output)
    assert result.exit_code == 0, report["findings"][:5]
    assert report["bad"] == 0 and report["valid"] == report["records"] > 0
    assert list(tmp_path.iterdir()) == []


def test_a_folder_without_case_files_is_a_usage_error_not_all_valid(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not cases\n")
    result = runner.invoke(app, ["validate", str(tmp_path / "empty"), "--no-batch"])
    assert isinstance(result.exception, UserError), result.output
    assert "no .jsonl or .jsonl.gz case files to validate" in str(result.exception)
    assert "all cases valid" not in result.output
    assert not list(tmp_path.glob("*.quarantine.jsonl"))


def test_a_file_without_records_is_a_usage_error_not_all_valid(tmp_path):
    empty, blank = tmp_path / "empty.jsonl", tmp_path / "blank.jsonl"
    empty.write_text("")
    blank.write_text("\n  \n")
    result = runner.invoke(app, ["validate", str(empty), str(blank), "--no-batch"])
    assert isinstance(result.exception, UserError), result.output
    assert str(result.exception) == f"{empty}, {blank}: no case records in them"
    assert "all cases valid" not in result.output


def test_help_says_where_the_default_quarantine_goes():
    help_text = " ".join(
        runner.invoke(app, ["validate", "--help"], env={"COLUMNS": "200"}).output.split()
    )
    assert "NAME.quarantine.jsonl in the current folder" in help_text


def test_a_damaged_gzip_keeps_its_good_records_and_names_the_line(tmp_path):
    import gzip

    good = GOOD.read_bytes()
    path = tmp_path / "cases.jsonl.gz"  # a whole gzip member, then one cut short
    path.write_bytes(gzip.compress(good) + gzip.compress(b"\n" * 50_000)[:30])
    result = runner.invoke(
        app, ["validate", str(path), "--no-batch", "--json", "--quarantine", str(tmp_path / "q")]
    )
    report = json.loads(result.output)
    assert result.exit_code == 1
    (finding,) = report["findings"]
    assert (finding["layer"], finding["rule"]) == ("json", "invalid-gzip")
    assert finding["line"] > len(good.splitlines())
    assert report["valid"] == len(good.splitlines())
