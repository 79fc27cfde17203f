"""pass^k rules of the gate (`metric = "pass^3"`): per-case C(c, k) / C(n, k) averaged over the
slice, cases with too few trials named, and no_regression on pass^k."""

from __future__ import annotations

import pytest

from casemill.errors import UserError
from casemill.evaluation.gate import check_gate, parse_gate
from casemill.evaluation.scoring import score, summarize
from tests.evaluation.scoring.casebuild import (
    GOOD_REFUND,
    GOOD_REFUND_REPLY,
    cancel_case,
    refund_case,
    trajectory,
)

REFUND, CANCEL = refund_case(), cancel_case()
CASES = [REFUND, CANCEL]


def _trial(case, ok: bool, trial: int):
    if case is REFUND:
        calls, reply = (GOOD_REFUND, GOOD_REFUND_REPLY) if ok else ([], "Sorry.")
    else:
        calls = [("cancel_order", {"order_id": "W1002"})] if ok else []
        reply = "Cancelled." if ok else "Sorry."
    return score(case, trajectory(case, calls, reply, trial=trial))


def _run(refund: list[bool], cancel: list[bool], baseline=None):
    scores = [_trial(REFUND, ok, t) for t, ok in enumerate(refund)]
    scores += [_trial(CANCEL, ok, t) for t, ok in enumerate(cancel)]
    return scores, summarize(CASES, scores, baseline=baseline)


T, F = True, False


def test_a_pass_k_threshold_is_the_mean_of_per_case_c_choose_k_over_n_choose_k():
    scores, summary = _run([T, T, F, T], [T, T, T, T])
    gate = parse_gate(
        '[[rule]]\nmetric = "pass^3"\nmin = 0.8\nwhere = { intent = "refund" }\n\n'
        '[[rule]]\nmetric = "pass^3"\nmin = 0.6\n\n'
        '[[rule]]\nmetric = "pass^1"\nmax = 0.8\n',
        "g.toml",
    )
    verdict = check_gate(gate, CASES, scores, summary)
    refund, overall, one = verdict.rules
    # refund: 3 successes of 4 trials, C(3,3)/C(4,3) = 1/4; cancel 4 of 4: 1
    assert refund.rule == "rule 1: pass^3 >= 0.8 where intent in [refund]"
    assert (refund.passed, refund.value) == (False, pytest.approx(0.25))
    assert (overall.passed, overall.value) == (True, pytest.approx(0.625))
    assert overall.value == pytest.approx(summary.pass_k["3"])  # the summary's estimator
    assert (one.passed, one.value) == (False, pytest.approx(summary.task_success_rate))
    failure = verdict.failures[0]
    assert failure.rule == "rule 1: pass^3 >= 0.8 where intent in [refund]"
    assert (failure.metric, failure.value, failure.threshold) == ("pass^3", 0.25, 0.8)
    assert failure.case_ids == (REFUND.id,)
    assert failure.message == "mean 0.25 is below the minimum 0.8 over 1 case"


def test_a_case_with_fewer_than_k_trials_fails_the_rule_by_name():
    scores, summary = _run([T, T, T], [T, T])
    gate = parse_gate('[[rule]]\nname = "steady"\nmetric = "pass^3"\nmin = 0.1\n')
    verdict = check_gate(gate, CASES, scores, summary)
    assert verdict.passed is False
    (failure,) = verdict.failures
    assert failure.rule == "steady"
    assert failure.case_ids == (CANCEL.id,)
    assert failure.message == (
        "1 of 2 cases in the slice have fewer than 3 trials: pass^3 cannot be measured on them "
        "(run with --trials 3 or more)"
    )


def test_no_regression_on_pass_k_pairs_the_cases_values_and_names_those_that_fell():
    _, base = _run([T, T, T, T], [T, T, T, T])
    scores, current = _run([T, T, F, T], [T, F, T, T], baseline=base)
    assert not current.comparison.flips  # 3 of 4 still passes: no task-success flip
    gate = parse_gate('[[rule]]\nkind = "no_regression"\nmetric = "pass^3"\n')
    verdict = check_gate(gate, CASES, scores, current, base)
    assert verdict.passed is False
    (failure,) = verdict.failures
    assert failure.rule == "rule 1: pass^3 no regression"
    assert failure.value == pytest.approx(-0.75)  # 1 -> 1/4 on both cases
    assert failure.case_ids == tuple(sorted((REFUND.id, CANCEL.id)))
    assert failure.message.startswith("delta -0.75, 95% CI [-0.75, -0.75] lies entirely below")
    steady = check_gate(gate, CASES, *_run([T, T, T, T], [T, T, T, T], baseline=base), base)
    assert steady.passed is True and steady.rules[0].value == 0.0


def test_no_regression_on_pass_k_leaves_out_cases_short_of_trials_with_a_note():
    _, base = _run([T, T, T], [T])
    scores, current = _run([T, T, T], [T, T, T], baseline=base)
    gate = parse_gate('[[rule]]\nkind = "no_regression"\nmetric = "pass^3"\n')
    (rule,) = check_gate(gate, CASES, scores, current, base).rules
    assert rule.passed is True and rule.value == 0.0
    assert rule.note == "1 case with fewer than 3 trials in a run: left out"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[[rule]]\nmetric = "pass^0"\nmin = 1\n',
            ":2: rule 1, field 'metric': 'pass^0': k counts the trials that must all succeed, "
            "at least 1",
        ),
        ('[[rule]]\nmetric = "pass^k"\nmin = 1\n', "judge_<criterion>, pass^<k> (for example"),
        (
            '[[rule]]\nmetric = "pass^3"\nmin = 80\n',
            ":3: rule 1, field 'min': pass^3 is a ratio from 0 to 1; 80 is outside it",
        ),
    ],
)
def test_bad_pass_k_rules_name_file_line_and_field(text, expected):
    with pytest.raises(UserError) as info:
        parse_gate(text, "gates/bad.toml")
    assert str(info.value).startswith("gates/bad.toml")
    assert expected in str(info.value)


def test_the_commented_pass_k_examples_of_the_shipped_gates_parse():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for name in ("default.toml", "strict.toml"):
        lines = (root / "gates" / name).read_text().splitlines()
        example = "\n".join(x.removeprefix("#   ") for x in lines if x.startswith("#   "))
        (rule,) = parse_gate(example, name).rules
        assert rule.metric == "pass^3", name


def test_no_regression_on_pass_k_against_another_task_success_version_is_not_comparable():
    _, base = _run([T, T, T], [T, T, T])
    old = base.model_copy(update={"metric_versions": {**base.metric_versions, "task_success": "0"}})
    scores, current = _run([T, T, T], [T, T, T], baseline=old)
    gate = parse_gate('[[rule]]\nkind = "no_regression"\nmetric = "pass^3"\n')
    verdict = check_gate(gate, CASES, scores, current, old)
    assert verdict.passed is False
    assert verdict.failures[0].message == (
        "task_success versions differ from the baseline's: not comparable"
    )
