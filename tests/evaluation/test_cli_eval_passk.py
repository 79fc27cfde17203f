"""`casemill eval --gate` with a pass^k rule: refused before the agent runs when --trials (or the
baseline's trials) are too few; checked, and named as written, when they are enough."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill.cli import app
from casemill.evaluation.report.results import load_run
from tests.evaluation.scoring.casebuild import cancel_case, refund_case

runner = CliRunner()

GATE = """[[rule]]
metric = "task_success"
min = 0.5

[[rule]]
metric = "pass^3"
min = 0.8
where = { intent = "refund" }

[[rule]]
kind = "no_regression"
metric = "pass^3"
"""


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(c.model_dump_json() + "\n" for c in (refund_case(), cancel_case())))
    gate = tmp_path / "gate.toml"
    gate.write_text(GATE)
    return cases, gate


def _eval(cases: Path, out: Path, *extra: str):
    argv = ["eval", "--agent", "reference", "--cases", str(cases), "-o", str(out), *extra]
    return runner.invoke(app, argv)


def test_too_few_trials_for_a_pass_k_rule_is_refused_before_the_agent_runs(tmp_path, inputs):
    cases, gate = inputs
    result = _eval(cases, tmp_path / "run", "--trials", "2", "--gate", str(gate))
    assert result.exit_code == 2
    assert (
        f"error: {gate}:6: rule 2, field 'metric': pass^3 needs at least 3 trials per case; "
        "the run has 2 trials per case: use --trials 3 or more"
    ) in " ".join(result.output.split())
    assert not (tmp_path / "run" / "trajectories.jsonl").exists()


def test_a_baseline_with_too_few_trials_is_refused_for_a_pass_k_no_regression(tmp_path, inputs):
    cases, gate = inputs
    assert _eval(cases, tmp_path / "base", "--trials", "1").exit_code == 0
    result = _eval(
        cases, tmp_path / "run", "--trials", "3", "--gate", str(gate),
        "--baseline", str(tmp_path / "base"),
    )  # fmt: skip
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "rule 3, field 'metric': pass^3 needs at least 3 trials per case in the baseline" in said
    assert f"--baseline {tmp_path / 'base'} ran 1 trial per case" in said


def test_a_pass_k_gate_is_checked_and_its_rules_named_as_written(tmp_path, inputs):
    cases, gate = inputs
    assert _eval(cases, tmp_path / "base", "--trials", "3").exit_code == 0
    base = str(tmp_path / "base")
    result = _eval(
        cases, tmp_path / "run", "--trials", "3", "--gate", str(gate), "--baseline", base
    )
    assert result.exit_code == 0, result.output
    assert "gate passed (3 rules)" in result.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    rules = {r["rule"]: r for r in summary["gate"]["rules"]}
    assert rules["rule 2: pass^3 >= 0.8 where intent in [refund]"]["value"] == 1.0
    assert rules["rule 3: pass^3 no regression"]["value"] == 0.0
    assert "trial_success" not in summary  # rebuilt from results.jsonl, not written
    loaded = load_run(tmp_path / "run").summary
    assert loaded.trial_success == {c: (True, True, True) for c in loaded.per_case}


JUDGE_GATE = '[[rule]]\nmetric = "task_success"\nmin = 0.5\n\n[[rule]]\nmetric = "judge_truthful"\nmin = 0.9\n'


def test_a_judge_rule_without_the_judge_is_refused_before_the_agent_runs(tmp_path, inputs):
    cases, _ = inputs
    gate = tmp_path / "judge.toml"
    gate.write_text(JUDGE_GATE)
    result = _eval(cases, tmp_path / "run", "--gate", str(gate))
    assert result.exit_code == 2
    assert (
        f"error: {gate}:6: rule 2, field 'metric': judge_truthful is given by the LLM judge only, "
        "which this run does not use: add --judge, or drop the rule"
    ) in " ".join(result.output.split())
    assert not (tmp_path / "run" / "trajectories.jsonl").exists()


def test_a_judge_rule_on_a_criterion_the_rubric_lacks_is_refused(tmp_path, inputs):
    cases, _ = inputs
    gate = tmp_path / "judge.toml"
    gate.write_text(JUDGE_GATE.replace("judge_truthful", "judge_helpful"))
    result = _eval(cases, tmp_path / "run", "--gate", str(gate), "--judge")
    assert result.exit_code == 2
    assert (
        "judge_helpful: the judge's rubric has no criterion 'helpful'; its criteria: "
        "addresses_request, truthful, policy_safe, clear_and_polite"
    ) in " ".join(result.output.split())


def test_a_judge_rule_when_the_judge_is_skipped_is_refused_not_passed(
    tmp_path, inputs, no_llm_endpoint
):
    cases, _ = inputs
    gate = tmp_path / "judge.toml"
    gate.write_text(JUDGE_GATE)
    result = _eval(cases, tmp_path / "run", "--gate", str(gate), "--judge")
    said = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "judge skipped" in said
    assert (
        "judge_truthful is given by the LLM judge only, which this run does not use: the judge "
        "is skipped (above); configure its endpoint"
    ) in said


def test_the_default_gate_in_chapter_mode_is_refused_not_passed_unchecked(tmp_path, inputs):
    cases, _ = inputs
    gate = Path(__file__).resolve().parents[2] / "gates" / "default.toml"
    result = _eval(cases, tmp_path / "run", "--mode", "chapter", "--gate", str(gate))
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "rule 2, field 'metric': forbidden_violations is not measured in --mode chapter" in said
    assert not (tmp_path / "run" / "trajectories.jsonl").exists()


def test_an_embedding_rule_without_the_semantic_extra_is_refused(tmp_path, inputs, monkeypatch):
    monkeypatch.setattr("casemill.evaluation.similarity.embeddings_available", lambda: False)
    cases, _ = inputs
    gate = tmp_path / "emb.toml"
    gate.write_text('[[rule]]\nmetric = "embedding_similarity"\nmin = 0.8\n')
    result = _eval(cases, tmp_path / "run", "--gate", str(gate))
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert f"{gate}:2: rule 1, field 'metric': embedding_similarity needs the optional" in said
    assert not (tmp_path / "run" / "trajectories.jsonl").exists()
