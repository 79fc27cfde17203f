"""The evaluate stage (`casemill.evaluation.stage`), without Prefect and without the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casemill.errors import UserError
from casemill.evaluation.scoring.errors import NothingScored
from casemill.evaluation.stage import (
    EvaluateRequest,
    check_unscored,
    finish_evaluate,
    plan_evaluate,
    run_evaluate,
    run_part,
)
from casemill.io.jsonl import atomic_write_jsonl, read_jsonl
from tests.flows.conftest import seed_cases

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cases_file(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    atomic_write_jsonl(path, [c.model_dump(mode="json") for c in seed_cases(5)])
    return path


def test_run_evaluate_runs_scores_and_writes_the_reports(tmp_path, cases_file):
    run = tmp_path / "run"
    ticks = []
    outcome = run_evaluate(
        EvaluateRequest(agent="reference", cases=cases_file, output=run, trials=2),
        progress=lambda done, total: ticks.append((done, total)),
    )
    assert outcome.summary.cases == 5 and outcome.summary.results == 10
    assert outcome.summary.task_success_rate == 1.0 and outcome.verdict is None
    assert not outcome.gate_failed and ticks[-1] == (10, 10)
    assert {p.name for p in run.iterdir()} >= {"results.jsonl", "summary.json", "report.html"}
    assert len(list(read_jsonl(run / "results.jsonl"))) == 10
    written = json.loads((run / "summary.json").read_text())
    assert written["cases"] == 5 and written["agent"] == "reference"
    assert outcome.as_dict()["gate_passed"] is None and outcome.as_dict()["cases"] == 5


def test_batches_run_in_folders_of_their_own_and_score_as_one_run(tmp_path, cases_file):
    """The flow's pieces: with a batch size each batch runs in RUN/batches/bNNNN, and the
    scores are those of the run in one batch."""
    request = EvaluateRequest(
        agent="reference", cases=cases_file, output=tmp_path / "b", batch_size=2, caller="flow"
    )
    plan = plan_evaluate(request)
    assert [len(b.cases) for b in plan.batches] == [2, 2, 1]
    assert [b.run_dir.name for b in plan.batches] == ["b0000", "b0001", "b0002"]
    trajectories = [t for b in plan.batches for t in run_part(request, b.cases, b.run_dir)]
    assert all((b.run_dir / "trajectories.jsonl").is_file() for b in plan.batches)
    batched = finish_evaluate(request, plan, trajectories)
    whole = run_evaluate(
        EvaluateRequest(agent="reference", cases=cases_file, output=tmp_path / "w")
    )
    assert batched.summary.task_success_rate == whole.summary.task_success_rate == 1.0
    assert [s.case_id for s in batched.scores] == [s.case_id for s in whole.scores]


def test_a_failing_gate_is_an_outcome_not_an_error(tmp_path):
    request = EvaluateRequest(
        agent="reference:refund_whole_order", cases=ROOT / "seeds", output=tmp_path / "v",
        gate=ROOT / "gates" / "default.toml",
    )  # fmt: skip
    outcome = run_evaluate(request)
    assert outcome.gate_failed and outcome.as_dict()["gate_passed"] is False
    assert outcome.verdict.failures and outcome.summary.task_success_rate < 1.0


def test_invalid_records_are_quarantined_by_the_command_and_refused_by_the_flow(tmp_path):
    cases = tmp_path / "mixed.jsonl"
    good = [c.model_dump(mode="json") for c in seed_cases(2)]
    atomic_write_jsonl(cases, [*good, {"id": "not a case"}])
    told = []
    run = tmp_path / "run"
    outcome = run_evaluate(
        EvaluateRequest(agent="reference", cases=cases, output=run),
        warn=lambda label, text: told.append(label),
    )
    assert told == ["1 case record refused"] and outcome.summary.cases == 2
    assert len(list(read_jsonl(run / "quarantine.jsonl"))) == 1
    flow = EvaluateRequest(
        agent="reference", cases=str(cases), output=tmp_path / "f", caller="flow"
    )
    with pytest.raises(UserError, match=r"mixed\.jsonl:3: 1 invalid case records"):
        plan_evaluate(flow)


@pytest.mark.parametrize(
    ("caller", "changes", "message"),
    [
        ("cli", {"mode": "book"}, r"^--mode 'book': use 'casemill' or 'chapter'"),
        ("cli", {"rubric": Path("r.toml")}, r"^--rubric is for the LLM judge only"),
        ("cli", {"agent": "nosuchagent"}, r"unknown agent spec 'nosuchagent'"),
        ("flow", {"trials": 0}, r"^parameter 'trials' is 0; it must be at least 1"),
        ("flow", {"batch_size": 0}, r"^parameter 'batch_size' is 0; it must be at least 1"),
        ("flow", {"timeout": 0.0}, r"^parameter 'timeout_s' is 0.0; it must be above 0"),
    ],
)
def test_bad_input_is_refused_before_the_agent_runs(tmp_path, cases_file, caller, changes, message):
    run = tmp_path / "run"
    request = EvaluateRequest(
        **{"agent": "reference", "cases": cases_file, "output": run, "caller": caller, **changes}
    )
    with pytest.raises(UserError, match=message):
        run_evaluate(request)
    assert not (run / "results.jsonl").exists()


def test_the_baseline_cannot_be_the_run_folder(tmp_path, cases_file):
    run = tmp_path / "run"
    run_evaluate(EvaluateRequest(agent="reference", cases=cases_file, output=run))
    again = EvaluateRequest(agent="reference", cases=cases_file, output=run, baseline=run)
    with pytest.raises(UserError, match="is the run directory -o"):
        run_evaluate(again)


def test_a_run_with_nothing_scored_says_how_to_run_it_again(tmp_path, cases_file):
    """An agent that is never reached: every trial ends in an error; the hint names the
    command's option or the flow's parameter that runs them again."""
    agent = "http://127.0.0.1:9/agent"  # the discard port: nothing answers
    run = tmp_path / "run"
    request = EvaluateRequest(agent=agent, cases=cases_file, output=run, timeout=2.0)
    outcome = run_evaluate(request)
    assert outcome.summary.errors == 5
    with pytest.raises(NothingScored, match=r"--rerun-failed' runs them again$"):
        check_unscored(request, outcome)
    flow = EvaluateRequest(agent=agent, cases=cases_file, output=run, caller="flow")
    with pytest.raises(NothingScored, match=r"rerun_failed=true to redo them; every trial is in"):
        check_unscored(flow, outcome)
