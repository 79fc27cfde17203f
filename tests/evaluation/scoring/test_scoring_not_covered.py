"""Cases the agent has no behaviour for (a recorded agent's log holds no conversation for them):
counted apart, in no rate, error or result, and said in the summary and the reports."""

from __future__ import annotations

import json

import pytest

from casemill.evaluation.report.markdown import render_markdown
from casemill.evaluation.report.results import load_run
from casemill.evaluation.scoring import score, summarize
from casemill.evaluation.scoring.errors import describe_errors, describe_not_covered, unscored
from casemill.evaluation.scoring.pipeline import evaluate_run
from casemill.evaluation.trajectory import Trajectory
from tests.evaluation.scoring.casebuild import (
    GOOD_REFUND,
    GOOD_REFUND_REPLY,
    cancel_case,
    clarify_case,
    refund_case,
    trajectory,
)


def _not_covered(case) -> Trajectory:
    return Trajectory(
        case_id=case.id,
        agent="recorded:log.jsonl",
        agent_fingerprint="fp",
        error=f"log.jsonl holds no conversation 'x' (case {case.id}): not covered",
        error_kind="not_covered",
    )


@pytest.fixture
def run():
    refund, cancel, clarify = refund_case(), cancel_case(), clarify_case()
    trajectories = [
        trajectory(refund, GOOD_REFUND, GOOD_REFUND_REPLY, agent="recorded:log.jsonl"),
        trajectory(clarify, [], "Sorry.", agent="recorded:log.jsonl"),
        _not_covered(cancel),
    ]
    return [refund, cancel, clarify], trajectories


def test_a_case_not_covered_is_out_of_every_figure(run):
    cases, trajectories = run
    scores = [
        score(c, t)
        for c, t in zip(cases, [trajectories[0], trajectories[2], trajectories[1]], strict=True)
    ]
    summary = summarize(cases, scores)
    assert summary.not_covered == (cases[1].id,)
    assert (summary.cases, summary.results, summary.errors, summary.error_kinds) == (2, 2, 0, {})
    assert summary.task_success_rate == 0.5  # one of the two covered cases passed
    assert cases[1].id not in summary.per_case
    assert describe_errors(scores) is None and unscored(scores) is None
    assert describe_not_covered(scores) == (
        f"1 of 3 cases not covered by the agent (not scored); first: case {cases[1].id} "
        f"trial 0: log.jsonl holds no conversation 'x' (case {cases[1].id}): not covered"
    )


def test_a_run_that_covers_no_case_could_not_be_scored(run):
    cases, _ = run
    scores = [score(c, _not_covered(c)) for c in cases]
    assert unscored(scores).startswith(
        "no trial could be scored: 3 of 3 cases not covered by the agent (not scored); first: "
    )
    summary = summarize(cases, scores)
    assert (summary.cases, summary.results, summary.task_success_rate) == (0, 0, None)
    assert len(summary.not_covered) == 3


def test_the_summary_json_and_the_reports_list_them(run, tmp_path):
    cases, trajectories = run
    outcome = evaluate_run(tmp_path, cases, trajectories)
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written["not_covered"] == [cases[1].id]
    assert load_run(tmp_path).summary.not_covered == (cases[1].id,)
    line = f"1 case, out of every figure (the agent has no behaviour for them): {cases[1].id}"
    assert f"Not covered: {line}" in render_markdown(outcome.summary)
    html = (tmp_path / "report.html").read_text()
    assert f"Not covered: {line}." in html
    # the viewer lists every case: this one with the status "not covered", not as failed
    assert '"s":"not covered"' in html.replace(": ", ":")
