"""The gate: parsing with located errors, threshold rules naming their failing cases, and the
no-regression rule against a baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from casemill.errors import UserError
from casemill.evaluation.gate import check_gate, load_gate, parse_gate
from casemill.evaluation.scoring import score, summarize
from tests.evaluation.scoring.casebuild import (
    GOOD_REFUND,
    GOOD_REFUND_REPLY,
    cancel_case,
    clarify_case,
    refund_case,
    trajectory,
)

ROOT = Path(__file__).resolve().parents[2]

GATE = """
[[rule]]
metric = "tool_recall"
min = 0.95
where = { intent = ["refund", "cancel"] }

[[rule]]
metric = "forbidden_violations"
max = 0
where = { category = "adversarial" }

[[rule]]
kind = "no_regression"
metric = "task_success"
"""


def _run(refund_ok: bool, clarify_writes: bool, cancel_ok: bool = True):
    refund, clarify, cancel = refund_case(), clarify_case(), cancel_case()
    scores = [
        score(refund, trajectory(refund, GOOD_REFUND if refund_ok else [], GOOD_REFUND_REPLY)),
        score(
            clarify,
            trajectory(
                clarify,
                [("cancel_order", {"order_id": "W1002"})] if clarify_writes else [],
                "Which order?",
            ),
        ),
        score(
            cancel,
            trajectory(
                cancel, [("cancel_order", {"order_id": "W1002"})] if cancel_ok else [], "Cancelled."
            ),
        ),
    ]
    cases = [refund, clarify, cancel]
    return cases, scores, summarize(cases, scores)


def test_passing_run_passes_every_rule():
    cases, scores, summary = _run(True, False)
    verdict = check_gate(parse_gate(GATE), cases, scores, summary)
    assert verdict.passed is True
    assert [r.passed for r in verdict.rules] == [True, True, True]
    assert "no baseline" in verdict.rules[2].note


def test_failing_rules_name_their_slices_and_cases():
    cases, scores, summary = _run(False, True)
    verdict = check_gate(parse_gate(GATE, "g.toml"), cases, scores, summary)
    assert verdict.passed is False
    by_metric = {f.metric: f for f in verdict.failures}
    recall = by_metric["tool_recall"]
    # refund (recall 0) and clarify (intent refund, no tools expected: not counted) and cancel (1)
    assert recall.value == pytest.approx(0.5)
    assert recall.case_ids == (cases[0].id,)
    assert recall.threshold == 0.95
    assert "intent in [refund, cancel]" in recall.rule
    forbidden = by_metric["forbidden_violations"]
    assert forbidden.case_ids == (cases[1].id,)
    assert forbidden.value == 1.0


def test_no_regression_fails_only_when_the_interval_is_below_zero():
    cases, scores, base = _run(True, False)
    _, worse_scores, worse = _run(False, True, cancel_ok=False)
    worse = summarize(cases, worse_scores, baseline=base)
    gate = parse_gate('[[rule]]\nkind = "no_regression"\nmetric = "task_success"\n')
    verdict = check_gate(gate, cases, worse_scores, worse, base)
    assert verdict.passed is False
    failure = verdict.failures[0]
    assert failure.value == pytest.approx(-1.0)
    assert set(failure.case_ids) == {c.id for c in cases}
    same = check_gate(gate, cases, scores, summarize(cases, scores), base)
    assert same.passed is True


def test_min_cases_fails_an_empty_slice():
    cases, scores, summary = _run(True, False)
    gate = parse_gate(
        '[[rule]]\nmetric = "task_success"\nmin = 0.5\nmin_cases = 1\n'
        'where = { intent = "exchange" }\n'
    )
    verdict = check_gate(gate, cases, scores, summary)
    assert verdict.passed is False and "fewer than min_cases" in verdict.failures[0].message


@pytest.mark.parametrize("baseline", [False, True])
def test_min_cases_fails_a_no_regression_rule_on_a_small_slice_too(baseline):
    cases, scores, base = _run(True, False)
    gate = parse_gate(
        '[[rule]]\nkind = "no_regression"\nmetric = "task_success"\nmin_cases = 5\n'
        'where = { intent = "refund" }\n'
    )
    verdict = check_gate(gate, cases, scores, base, base if baseline else None)
    assert verdict.passed is False
    (failure,) = verdict.failures
    assert failure.message == "2 cases in the slice, fewer than min_cases=5"
    assert failure.slice == "intent in [refund]"


def test_a_where_value_no_case_has_is_named_in_the_rule_note():
    cases, scores, summary = _run(True, False)
    gate = parse_gate(
        '[[rule]]\nmetric = "tool_recall"\nmin = 0.95\nwhere = { intent = ["refnd", "cancel"] }\n'
        '\n[[rule]]\nmetric = "task_success"\nmin = 0.9\nwhere = { operator = "typoz" }\n'
    )
    verdict = check_gate(gate, cases, scores, summary)
    assert verdict.passed is True  # an empty slice passes, as documented, but says why
    assert verdict.rules[0].note == "no case of the run has intent 'refnd'"
    assert verdict.rules[1].note == "no case of the run has operator 'typoz'; the slice has no case"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[[rule]]\nmetric = "tool_recal"\nmin = 1\n',
            ":2: rule 1, field 'metric': unknown metric 'tool_recal'",
        ),
        (
            '[[rule]]\nmetric = "task_success"\nmin = 1\n\n[[rule]]\nmetric = "tool_recall"\n',
            ":5: rule 2, field '(rule)': a threshold rule needs 'min' or 'max'",
        ),
        (
            '[[rule]]\nmetric = "task_success"\nmin = "high"\n',
            ":3: rule 1, field 'min': Input should be a valid number",
        ),
        (
            '[[rule]]\nmetric = "task_success"\nmin = 1\nwhere = { colour = "red" }\n',
            ":4: rule 1, field 'where': unknown 'where' keys ['colour']",
        ),
        (
            '[[rule]]\nmetric = "task_success"\nmin = 1\nlimit = 3\n',
            ":4: rule 1, field 'limit': Extra inputs are not permitted",
        ),
        (
            '[[rule]]\nkind = "no_regression"\nmetric = "task_success"\nmax = 1\n',
            ":1: rule 1, field '(rule)': a no_regression rule takes no",
        ),
        (
            '[[rule]]\nmetric = "task_success"\nmin = 1\nwhere = { category = "adversarail" }\n',
            ":4: rule 1, field 'where': unknown category 'adversarail'; known: capability,",
        ),
        (
            '[[rule]]\nmetric = "task_success"\nmin = 1\n'
            'where = { outcome = ["clarify", "refused"] }\n',
            ":4: rule 1, field 'where': unknown outcome 'refused'; known: resolve,",
        ),
        (
            '[[rule]]\nmetric = "tool_recall"\nmin = 95\n',
            ":3: rule 1, field 'min': tool_recall is a ratio from 0 to 1; 95 is outside it",
        ),
        (
            '[[rule]]\nmetric = "forbidden_violations"\nmax = -1\n',
            ":3: rule 1, field 'max': forbidden_violations is never negative; -1 is below 0",
        ),
        (
            '[[rule]]\nmetric = "task_success"\nmin = 0.9\nmax = 0.5\n',
            ":4: rule 1, field 'max': 'max' 0.5 is below 'min' 0.9: no value can pass",
        ),
        (
            '[[rule]]\nmetric = "task_success"\nmin = "0.9"\n',
            ":3: rule 1, field 'min': Input should be a valid number",
        ),
        (
            '[[rule]]\nmetric = "task_success"\nmin = 0.5\nwhere = { intent = [] }\n',
            ":4: rule 1, field 'where': 'where' intent is an empty list, which selects no case",
        ),
        (
            '[[rule]]\nname = "ts"\nmetric = "task_success"\nmin = 0.5\n\n'
            '[[rule]]\nname = "ts"\nmetric = "tool_recall"\nmin = 0.5\n',
            ":7: rule 2, field 'name': 'ts' already names rule 1; give each rule its own name",
        ),
        (
            '[rule]\nmetric = "task_success"\nmin = 0.5\n',
            ": 'rule' is a single table ([rule]); write each rule as [[rule]], with two brackets",
        ),
        ("[[rule]\nmetric = 1\n", ": not valid TOML"),
        ('[[rule]]\nmetric = "x"\nmin = \n', "(at line 3, column"),
        ("", ": no rules"),
    ],
)
def test_bad_gate_files_name_file_line_and_field(text, expected):
    with pytest.raises(UserError) as info:
        parse_gate(text, "gates/bad.toml")
    message = str(info.value)
    assert message.startswith("gates/bad.toml")
    assert expected in message


def test_shipped_gate_files_load():
    for path in sorted((ROOT / "gates").glob("*.toml")):
        gate = load_gate(path)
        assert gate.rules, path


def test_missing_gate_file_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="cannot read the gate file"):
        load_gate(tmp_path / "nope.toml")


def test_no_regression_refuses_metrics_whose_versions_differ():
    cases, scores, base = _run(True, False)
    old = base.model_copy(update={"metric_versions": {**base.metric_versions, "task_success": "0"}})
    current = summarize(cases, scores, baseline=old)
    assert "task_success" in current.comparison.not_comparable
    assert all(d.metric != "task_success" for d in current.comparison.deltas)
    gate = parse_gate('[[rule]]\nkind = "no_regression"\nmetric = "task_success"\n')
    verdict = check_gate(gate, cases, scores, current, old)
    assert verdict.passed is False
    assert "not comparable" in verdict.failures[0].message


def test_no_regression_notes_a_baseline_on_another_case_set():
    cases, scores, base = _run(True, False)
    refund, clarify, _ = cases
    current_cases, current_scores = [refund, clarify], scores[:2]  # a subset of the baseline's
    current = summarize(current_cases, current_scores, baseline=base)
    gate = parse_gate('[[rule]]\nkind = "no_regression"\nmetric = "task_success"\n')
    verdict = check_gate(gate, current_cases, current_scores, current, base)
    assert verdict.passed is True  # a partial overlap is compared, not refused
    (rule,) = verdict.rules
    assert rule.note == (
        "case sets differ: 2 cases in common, 0 only in this run, 1 only in the baseline "
        "(this run: not recorded; the baseline: not recorded); compared on the 2 in common"
    )
    same = check_gate(gate, cases, scores, summarize(cases, scores, baseline=base), base)
    assert same.rules[0].note == ""
