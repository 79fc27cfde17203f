"""pass^k in a comparison with a baseline: paired per-case deltas for k = 2 .. the fewest trials
of the two runs, over the cases with at least k trials in both, and the note when it is missing.

The runs are built as summaries with their per-trial outcomes (what `load_run` rebuilds from
results.jsonl), so each value below can be worked out by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casemill.evaluation.scoring.compare import compare, paired_delta
from casemill.evaluation.scoring.model import RunSummary
from casemill.evaluation.scoring.stats import pass_hat_k

T, F = True, False


def run(outcomes: dict[str, list[bool]], *, version: str = "2", agent: str = "a") -> RunSummary:
    """A summary with task success per case (its mean over trials) and the trials' outcomes."""
    return RunSummary(
        agent=agent,
        trials=max((len(o) for o in outcomes.values()), default=0),
        per_case={i: {"task_success": sum(o) / len(o)} for i, o in outcomes.items()},
        trial_success={i: tuple(o) for i, o in outcomes.items()},
        metric_versions={"task_success": version},
    )


def deltas(comparison) -> dict:
    return {d.metric: d for d in comparison.deltas}


def test_one_case_from_two_of_three_to_three_of_three():
    comp = compare(run({"c1": [T, T, F]}), run({"c1": [T, T, T]}))
    rows = deltas(comp)
    assert [d.metric for d in comp.deltas] == ["task_success", "pass^2", "pass^3"]
    assert rows["pass^2"].baseline == pytest.approx(1 / 3)  # C(2,2) / C(3,2)
    assert rows["pass^2"].current == 1.0
    assert rows["pass^2"].delta == pytest.approx(1 - 1 / 3)
    assert rows["pass^3"].delta == pytest.approx(1.0)  # 0 of C(3,3) before, 1 now
    assert rows["pass^2"].paired_cases == 1 and rows["pass^2"].higher_is_better
    assert comp.pass_k_note == "" and comp.not_comparable == ()


def test_pass_k_goes_up_to_the_fewest_trials_and_averages_per_case_differences():
    base = run({"refund": [T, T, F], "cancel": [T, T, T]})
    cur = run({"refund": [T, T, T, T], "cancel": [T, T, T, F]})
    comp = compare(base, cur, seed=3)
    rows = deltas(comp)
    assert "pass^4" not in rows  # the baseline has 3 trials per case
    # pass^2: refund 1 - 1/3, cancel C(3,2)/C(4,2) - 1 = 1/2 - 1
    assert rows["pass^2"].delta == pytest.approx(((1 - 1 / 3) + (0.5 - 1)) / 2)
    # pass^3: refund 1 - 0, cancel C(3,3)/C(4,3) - 1 = 1/4 - 1
    assert rows["pass^3"].delta == pytest.approx((1 + (0.25 - 1)) / 2)
    assert rows["pass^3"].baseline == pytest.approx(0.5)
    assert rows["pass^3"].current == pytest.approx((1 + 0.25) / 2)
    for name in ("pass^2", "pass^3"):
        d = rows[name]
        assert d.paired_cases == 2 and d.ci_low <= d.delta <= d.ci_high
    assert comp == compare(base, cur, seed=3)  # same seed, same intervals
    assert comp.pass_k_note == (
        "pass^4 not compared: the baseline ran up to 3 trials per case (the current run up to 4)"
    )
    more = compare(run({"c1": [T, F]}), run({"c1": [T, T, T, T, F]}))
    assert more.pass_k_note == (
        "pass^3..pass^5 not compared: the baseline ran up to 2 trials per case "
        "(the current run up to 5)"
    )


def test_the_interval_is_the_paired_bootstrap_the_gate_uses():
    """Same per-case values, seed and name ('delta:pass^2') as a gate's pass^2 no_regression."""
    base = run({f"c{i}": [T, i % 2 == 0, i % 3 == 0] for i in range(12)})
    cur = run({f"c{i}": [T, T, i % 4 != 0] for i in range(12)})
    ids = sorted(base.per_case)
    rows = {
        name: {i: {"pass^2": pass_hat_k([r.trial_success[i]], 2)} for i in ids}
        for name, r in (("base", base), ("cur", cur))
    }
    expected = paired_delta(rows["base"], rows["cur"], ids, "pass^2", 5)
    assert deltas(compare(base, cur, seed=5))["pass^2"] == expected
    assert expected.ci_low < expected.delta < expected.ci_high  # not a degenerate interval


def test_a_case_with_fewer_than_k_trials_in_a_run_is_left_out_of_that_k_and_said():
    base = run({"a": [T, T, T], "b": [T, F]})
    cur = run({"a": [T, T, F], "b": [T, T]})
    comp = compare(base, cur)
    rows = deltas(comp)
    assert rows["pass^2"].paired_cases == 2
    assert rows["pass^2"].delta == pytest.approx(((1 / 3 - 1) + (1 - 0)) / 2)
    assert rows["pass^3"].paired_cases == 1 and rows["pass^3"].delta == pytest.approx(-1.0)
    assert comp.pass_k_note == (
        "pass^k over the cases with at least k trials in both runs: pass^3 on 1 of 2"
    )


def test_a_k_no_case_reaches_in_both_runs_gets_no_row_but_a_note():
    base = run({"a": [T, T, T], "b": [T, T]})
    cur = run({"a": [T, T], "b": [T, T, T]})
    comp = compare(base, cur)
    assert [d.metric for d in comp.deltas] == ["task_success", "pass^2"]
    assert "pass^3 on 0 of 2" in comp.pass_k_note


def test_single_trial_runs_have_no_pass_k_and_no_note():
    comp = compare(run({"a": [T], "b": [F]}), run({"a": [F], "b": [F]}))
    assert [d.metric for d in comp.deltas] == ["task_success"]
    assert comp.pass_k_note == ""


def test_one_run_with_a_single_trial_says_pass_k_is_not_compared():
    comp = compare(run({"a": [T], "b": [F]}), run({"a": [T, T, F], "b": [T, T, T]}))
    assert [d.metric for d in comp.deltas] == ["task_success"]
    assert comp.pass_k_note == (
        "pass^k not compared: the baseline ran 1 trial per case (the other up to 3); "
        "run both with --trials 2 or more"
    )


def test_a_summary_without_per_trial_outcomes_gives_no_pass_k_and_says_so():
    """A summary read on its own (summary.json never holds trial_success; an older Casemill's
    comparison had none) has per-case means but no trials to take pass^k from."""
    old = run({"a": [T, T, F], "b": [T, T, T]}).model_copy(update={"trial_success": {}})
    comp = compare(old, run({"a": [T, T, T], "b": [T, T, T]}))
    assert [d.metric for d in comp.deltas] == ["task_success"]
    assert comp.pass_k_note == (
        "pass^k not compared: the per-trial outcomes of the baseline are missing "
        "(they are read from a run's results.jsonl)"
    )
    both = compare(old, old)
    assert "of the baseline and the current run are missing" in both.pass_k_note


def test_pass_k_is_not_compared_when_task_success_versions_differ():
    base = run({"a": [T, T, F]}, version="1")
    comp = compare(base, run({"a": [T, T, T]}, version="2"))
    assert comp.not_comparable == ("task_success", "pass^2", "pass^3")
    assert comp.deltas == () and comp.flips == ()
    assert comp.pass_k_note == ""  # the versions say it; no second note


outcomes = st.lists(st.booleans(), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.sampled_from("abcdefgh"), st.tuples(outcomes, outcomes), min_size=1),
    st.integers(0, 3),
)
def test_each_pass_k_row_is_the_mean_per_case_difference_over_cases_with_k_trials(pairs, seed):
    base = run({i: b for i, (b, _) in pairs.items()})
    cur = run({i: c for i, (_, c) in pairs.items()})
    comp = compare(base, cur, seed=seed)
    rows = deltas(comp)
    most = min(max(len(b) for b, _ in pairs.values()), max(len(c) for _, c in pairs.values()))
    for k in range(2, 6):
        both = [(b, c) for b, c in pairs.values() if len(b) >= k and len(c) >= k]
        name = f"pass^{k}"
        if k > most or not both:
            assert name not in rows
            continue
        diffs = [pass_hat_k([c], k) - pass_hat_k([b], k) for b, c in both]
        assert rows[name].paired_cases == len(both)
        assert rows[name].delta == pytest.approx(sum(diffs) / len(diffs))
        assert rows[name].ci_low - 1e-9 <= rows[name].delta <= rows[name].ci_high + 1e-9
    same = compare(cur, cur, seed=seed)
    assert all(d.delta == 0 and d.ci_low == d.ci_high == 0 for d in same.deltas)
