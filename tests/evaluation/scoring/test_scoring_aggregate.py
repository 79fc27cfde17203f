"""Run summaries: pass^k, flakiness, convergence, bootstrap intervals, slices, consistency, and
the comparison with a baseline."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casemill.evaluation.scoring import score, summarize
from casemill.evaluation.scoring.compare import compare
from casemill.evaluation.scoring.stats import convergence, flakiness, mean_ci, pass_hat_k
from tests.evaluation.scoring.casebuild import (
    GOOD_REFUND,
    GOOD_REFUND_REPLY,
    cancel_case,
    clarify_case,
    refund_case,
    trajectory,
    variant_of,
)


def test_pass_hat_k_by_hand():
    outcomes = [[True, True, False], [True, False, False], [True, True, True]]
    assert pass_hat_k(outcomes, 1) == pytest.approx((2 / 3 + 1 / 3 + 1) / 3)
    assert pass_hat_k(outcomes, 2) == pytest.approx((1 / 3 + 0 + 1) / 3)
    assert pass_hat_k(outcomes, 3) == pytest.approx(1 / 3)
    assert pass_hat_k(outcomes, 4) is None


def test_flakiness_and_convergence_by_hand():
    assert flakiness(2, 3) == pytest.approx(2 / 3)
    assert flakiness(3, 3) == 0.0 and flakiness(0, 3) == 0.0
    assert convergence([(True, 3), (True, 6), (False, 2)]) == pytest.approx((1 + 0.5 + 0) / 3)
    assert convergence([(False, 3)]) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=5), min_size=1, max_size=20))
def test_pass_hat_k_is_a_probability_that_never_grows_with_k(outcomes):
    values = [pass_hat_k(outcomes, k) for k in range(1, 6)]
    present = [v for v in values if v is not None]
    assert all(0.0 <= v <= 1.0 for v in present)
    uniform = len({len(o) for o in outcomes}) == 1
    if uniform:
        assert all(a >= b - 1e-12 for a, b in zip(present, present[1:], strict=False))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1), min_size=2, max_size=40), st.integers(0, 5))
def test_bootstrap_interval_holds_the_mean_and_repeats_with_its_seed(values, seed):
    mean, low, high, n = mean_ci(values, seed, "x")
    assert n == len(values)
    assert low - 1e-9 <= mean <= high + 1e-9
    assert mean_ci(values, seed, "x") == (mean, low, high, n)


def _scores(case, outcomes, agent="a"):
    good = trajectory(case, GOOD_REFUND, GOOD_REFUND_REPLY, agent=agent)
    bad = trajectory(case, [], "Sorry.", agent=agent)
    out = []
    for trial, ok in enumerate(outcomes):
        t = (good if ok else bad).model_copy(update={"trial": trial})
        out.append(score(case, t))
    return out


def test_summary_counts_pass_k_flaky_and_slices():
    refund, clarify = refund_case(), clarify_case()
    scores = _scores(refund, [True, True, False])
    scores += [score(clarify, trajectory(clarify, [], "Which order?", trial=k)) for k in range(3)]
    summary = summarize([refund, clarify], scores, seed=7)
    assert (summary.cases, summary.trials, summary.results, summary.errors) == (2, 3, 6, 0)
    assert summary.task_success_rate == pytest.approx((2 / 3 + 1) / 2)
    assert summary.pass_k["1"] == pytest.approx((2 / 3 + 1) / 2)
    assert summary.pass_k["3"] == pytest.approx(0.5)
    assert [f.case_id for f in summary.flaky] == [refund.id]
    rows = {(r.dimension, r.value): r for r in summary.slices}
    assert rows[("category", "adversarial")].task_success.mean == 1.0
    assert rows[("category", "capability")].task_success.mean == pytest.approx(2 / 3)
    assert rows[("intent", "refund")].cases == 2
    assert rows[("outcome", "clarify")].results == 3
    # 2: a trial that recovered from an agent fault (unknown tool) is judged like any other
    assert summary.metric_versions["task_success"] == "3"
    assert summary.metric_versions["completion"] == "3"
    assert summarize([refund, clarify], scores, seed=7) == summary


def test_consistency_over_a_seed_family():
    seed_case = refund_case()
    same = variant_of(seed_case, "The mug in order W1001 arived craked. Refund it pls.")
    other = variant_of(seed_case, "the MUG in order w1001 arrived cracked!! refund it")
    scores = _scores(seed_case, [True]) + _scores(same, [True]) + _scores(other, [False])
    summary = summarize([seed_case, same, other], scores)
    assert summary.consistency.families == 1
    assert summary.consistency.mean == pytest.approx(0.5)
    assert summary.consistency.worst[0].family == seed_case.id


def test_comparison_gives_flips_and_paired_deltas():
    refund, cancel = refund_case(), cancel_case()
    base_scores = _scores(refund, [True, True]) + [
        score(cancel, trajectory(cancel, [], "no", trial=k)) for k in range(2)
    ]
    cur_scores = _scores(refund, [False, False]) + [
        score(
            cancel,
            trajectory(cancel, [("cancel_order", {"order_id": "W1002"})], "Cancelled.", trial=k),
        )
        for k in range(2)
    ]
    base = summarize([refund, cancel], base_scores)
    cur = summarize([refund, cancel], cur_scores, baseline=base)
    comp = cur.comparison
    assert comp is not None and comp.paired_cases == 2
    assert {(f.case_id, f.direction) for f in comp.flips} == {
        (refund.id, "pass->fail"),
        (cancel.id, "fail->pass"),
    }
    delta = {d.metric: d for d in comp.deltas}["task_success"]
    assert delta.delta == pytest.approx(0.0)
    assert delta.ci_low <= 0.0 <= delta.ci_high
    assert comp == compare(base, cur)


@settings(max_examples=15, deadline=None)
@given(st.randoms(use_true_random=False))
def test_summary_does_not_depend_on_the_order_of_scores_or_cases(rnd):
    refund, clarify, cancel = refund_case(), clarify_case(), cancel_case()
    scores = _scores(refund, [True, False, True])
    scores += [score(clarify, trajectory(clarify, [], "Which order?", trial=k)) for k in range(3)]
    cases = [refund, clarify, cancel]
    reference = summarize(cases, scores, seed=3)
    shuffled_scores, shuffled_cases = list(scores), list(cases)
    rnd.shuffle(shuffled_scores)
    rnd.shuffle(shuffled_cases)
    again = summarize(shuffled_cases, shuffled_scores, seed=3)
    assert again.model_dump_json() == reference.model_dump_json()
