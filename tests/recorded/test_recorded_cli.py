"""`casemill eval --agent recorded:LOG` on the cases `casemill mine` wrote from the same log
(the bundled support sample: its cases run on the support domain's simulated tools)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from casemill.cli import app
from tests.recorded.logs import write_log

runner = CliRunner()


@pytest.fixture(scope="module")
def mined_sample(tmp_path_factory, root):
    out = tmp_path_factory.mktemp("sample") / "cases.jsonl"
    log = root / "samples" / "support_logs.jsonl"
    done = runner.invoke(app, ["mine", "-f", "openai-jsonl", str(log), "-o", str(out)])
    assert done.exit_code == 0, done.output
    return log, out


def _results(run_dir):
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def test_the_logged_agent_passes_its_own_decision_points(mined_sample, tmp_path):
    log, cases = mined_sample
    run_dir = tmp_path / "run"
    done = runner.invoke(
        app, ["eval", "--cases", str(cases), "--agent", f"recorded:{log}", "-o", str(run_dir)]
    )
    assert done.exit_code == 0, done.output
    summary = json.loads((run_dir / "summary.json").read_text())
    assert (summary["cases"], summary["errors"], summary["not_covered"]) == (34, 0, [])
    assert summary["agent"] == f"recorded:{log}"
    assert summary["agent_settings"]["seed"] == 0
    by_id = {json.loads(line)["id"]: json.loads(line) for line in cases.read_text().splitlines()}
    decided = [
        r
        for r in _results(run_dir)
        if by_id[r["case_id"]]["tags"]["labels"] == ["mined", "decision_point"]
    ]
    assert len(decided) == 12 and all(r["task_success"] for r in decided)


def test_cases_of_another_log_are_not_covered_and_not_failed(mined_sample, tmp_path):
    log, cases = mined_sample
    other = write_log(tmp_path / "airline.jsonl")
    run_dir = tmp_path / "run"
    done = runner.invoke(
        app, ["eval", "--cases", str(cases), "--agent", f"recorded:{other}", "-o", str(run_dir)]
    )
    assert done.exit_code == 1
    assert "no trial could be scored: 34 of 34 cases not covered by the agent" in " ".join(
        done.output.split()
    )
    assert {r["error_kind"] for r in _results(run_dir)} == {"not_covered"}
