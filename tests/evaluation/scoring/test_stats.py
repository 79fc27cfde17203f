"""Intervals: Wilson for rates (a real lower bound at n of n), scipy's bootstrap for means."""

from __future__ import annotations

import pytest

from casemill.evaluation.scoring.stats import BOOTSTRAP, WILSON, interval, mean_ci, wilson


def test_all_successes_keep_a_lower_bound_below_one():
    mean, low, high, n, method = interval([1.0] * 75, 0, "task_success")
    assert (mean, n, method) == (1.0, 75, WILSON)
    assert low == pytest.approx(0.9513, abs=1e-4) and high == 1.0


def test_wilson_matches_the_textbook_values():
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)


def test_means_that_are_not_rates_are_bootstrapped_and_repeat_with_the_seed():
    values = [0.5, 1.0, 0.25, 0.75, 1.0, 0.0, 0.5, 0.5]
    mean, low, high, n, method = interval(values, 3, "tool_recall")
    assert method == BOOTSTRAP and n == 8 and mean == pytest.approx(0.5625)
    assert 0.0 <= low < mean < high <= 1.0
    assert interval(values, 3, "tool_recall") == (mean, low, high, n, method)


def test_no_value_gives_no_interval_and_equal_differences_a_point():
    assert interval([None, None], 0, "x") == (None, None, None, 0, "")
    assert mean_ci([0.0, 0.0, 0.0], 0, "delta:x") == (0.0, 0.0, 0.0, 3)


def test_a_count_or_a_duration_is_never_taken_for_a_rate():
    mean, low, high, n, method = interval([1.0, 1.0, 1.0], 0, "latency_s", rate=False)
    assert (mean, low, high, n, method) == (1.0, 1.0, 1.0, 3, "single value")
