"""Statistics over cases: confidence intervals, pass^k, flakiness, convergence.

A rate (a metric in 0..1 whose per-case values are all 0 or 1: task success with one trial,
state success) gets the Wilson score interval, which keeps a real lower bound
at 75 of 75 (0.951 - 1.000, not 1.000 - 1.000). Any other mean gets scipy's bootstrap
(`scipy.stats.bootstrap`, percentile method) resampling cases (a case's trials stay together:
they are not independent), with a numpy `Generator` seeded from the run seed and the name of
what is resampled, so the same seed gives the same intervals whatever order slices are computed
in.
"""

from __future__ import annotations

import math
import warnings
import zlib
from collections.abc import Sequence
from math import comb

import numpy as np

RESAMPLES = 1000
LEVEL = 0.95
_BATCH = 4_000_000  # values per resampling batch (bounds memory on large runs)
WILSON, BOOTSTRAP, SINGLE = "wilson", "bootstrap", "single value"


def rng_for(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])


def wilson(successes: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The Wilson score interval of `successes` out of `n` (n > 0)."""
    from scipy.stats import norm

    z = float(norm.ppf(1 - (1 - level) / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_mean(
    values: np.ndarray, rng: np.random.Generator, resamples: int = RESAMPLES
) -> tuple[float, float]:
    """scipy's percentile bootstrap interval of the mean of `values` (at least two distinct)."""
    from scipy.stats import bootstrap

    batch = max(1, _BATCH // max(len(values), 1))
    with warnings.catch_warnings():  # a skewed sample's "degenerate" warning is not the user's
        warnings.simplefilter("ignore")
        found = bootstrap(
            (values,), np.mean, n_resamples=resamples, batch=batch, vectorized=True,
            confidence_level=LEVEL, method="percentile", rng=rng,
        )  # fmt: skip
    return float(found.confidence_interval.low), float(found.confidence_interval.high)


def interval(
    values: Sequence[float | None],
    seed: int,
    name: str,
    resamples: int = RESAMPLES,
    *,
    rate: bool = True,
) -> tuple[float | None, float | None, float | None, int, str]:
    """(mean, ci_low, ci_high, n, method) over the non-missing values, 95%: Wilson for a rate
    (`rate`: a metric in 0..1, and every value 0 or 1), the bootstrap otherwise; '' as the
    method when there is no value. A count, seconds or tokens are never a rate, even when
    every trial took 1 second."""
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    n = len(arr)
    if n == 0:
        return None, None, None, 0, ""
    mean = float(arr.mean())
    if rate and np.all((arr == 0) | (arr == 1)):
        low, high = wilson(int(arr.sum()), n)
        return mean, low, high, n, WILSON
    if n == 1 or np.all(arr == arr[0]):
        return mean, mean, mean, n, SINGLE
    low, high = bootstrap_mean(arr, rng_for(seed, name), resamples)
    return mean, low, high, n, BOOTSTRAP


def mean_ci(
    values: Sequence[float | None], seed: int, name: str, resamples: int = RESAMPLES
) -> tuple[float | None, float | None, float | None, int]:
    """(mean, ci_low, ci_high, n) over the non-missing values by the bootstrap, 95% (for paired
    differences, which are not rates); a single value, or equal values, give a point."""
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    n = len(arr)
    if n == 0:
        return None, None, None, 0
    mean = float(arr.mean())
    if n == 1 or np.all(arr == arr[0]):
        return mean, mean, mean, n
    low, high = bootstrap_mean(arr, rng_for(seed, name), resamples)
    return mean, min(low, mean), max(high, mean), n


def pass_hat_k(outcomes: Sequence[Sequence[bool]], k: int) -> float | None:
    """pass^k: per case C(c, k) / C(n, k) (c successes in n trials), averaged over the cases
    with at least k trials; None when no case has k trials."""
    per_case = [comb(sum(o), k) / comb(len(o), k) for o in outcomes if len(o) >= k]
    return sum(per_case) / len(per_case) if per_case else None


def flakiness(passes: int, trials: int) -> float:
    """0 when every trial agrees, 1 when half pass and half fail."""
    if trials == 0:
        return 0.0
    return 1.0 - abs(2.0 * passes / trials - 1.0)


def convergence(trials: Sequence[tuple[bool, int]]) -> float | None:
    """For one case, (success, steps) per trial: mean over trials of min(1, fewest steps among
    successful trials / steps), a failed trial counting 0; None when no trial succeeded."""
    best = [steps for ok, steps in trials if ok and steps > 0]
    if not best:
        return None
    fewest = min(best)
    return sum(min(1.0, fewest / steps) if ok and steps > 0 else 0.0 for ok, steps in trials) / len(
        trials
    )
