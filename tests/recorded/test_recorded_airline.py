"""The acceptance of recorded agents: the shared tau-bench airline logs mined into generic
cases, then evaluated with the logged agent replayed (`--agent recorded:LOG`) on the recorded
tools and the scripted customer: no case lacks a simulator, and the conversation-level cases of
resolved conversations pass at least 98% (`bench/recorded_agreement.py` prints the figures)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from casemill.cli import app

runner = CliRunner()


@pytest.mark.shared_data
def test_the_logged_airline_agent_passes_its_resolved_conversations(shared_data, tmp_path):
    log = shared_data / "tau-bench-airline-logs" / "support_logs.jsonl"
    cases, run_dir = tmp_path / "cases.jsonl", tmp_path / "run"
    mined = runner.invoke(app, ["mine", "-f", "openai-jsonl", str(log), "-o", str(cases)])
    assert mined.exit_code == 0, mined.output
    done = runner.invoke(
        app, ["eval", "--cases", str(cases), "--agent", f"recorded:{log}", "-o", str(run_dir)]
    )
    assert done.exit_code == 0, done.output
    resolved = {
        json.loads(line)["conversation_id"]: json.loads(line)["resolved"]
        for line in log.read_text().splitlines()
    }
    by_id = {c["id"]: c for c in map(json.loads, cases.read_text().splitlines())}
    results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(results) == len(by_id) > 100
    kinds = {r["error_kind"] for r in results}
    assert "no_simulator" not in kinds and "not_covered" not in kinds, kinds
    wanted = [
        r
        for r in results
        if "conversation" in by_id[r["case_id"]]["tags"]["labels"]
        and resolved[by_id[r["case_id"]]["provenance"]["source"]["conversation_id"]]
    ]
    passed = sum(r["task_success"] for r in wanted)
    assert len(wanted) == 31  # the resolved conversations: one conversation-level case each
    assert passed / len(wanted) >= 0.98, f"{passed} of {len(wanted)}"
