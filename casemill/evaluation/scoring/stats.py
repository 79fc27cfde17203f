"""Statistics over cases: bootstrap confidence intervals, pass^k, flakiness, convergence.

Resampling is by case (a case's trials stay together: they are not independent), with a numpy
`Generator` seeded from the run seed and the name of what is resampled, so the same seed gives
the same intervals whatever order slices are computed in.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from math import comb

import numpy as np

RESAMPLES = 1000
LEVEL = 0.95
_CHUNK = 4_000_000  # index entries per resampling chunk (bounds memory on large runs)


def rng_for(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])


def resample_means(
    values: np.ndarray, rng: np.random.Generator, resamples: int = RESAMPLES
) -> np.ndarray:
    """Means of `resamples` bootstrap resamples of `values` (a 1-D array without NaN)."""
    n = len(values)
    out = np.empty(resamples)
    per_chunk = max(1, _CHUNK // max(n, 1))
    for start in range(0, resamples, per_chunk):
        stop = min(resamples, start + per_chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = values[idx].mean(axis=1)
    return out


def mean_ci(
    values: Sequence[float | None], seed: int, name: str, resamples: int = RESAMPLES
) -> tuple[float | None, float | None, float | None, int]:
    """(mean, ci_low, ci_high, n) over the non-missing values; percentile bootstrap, 95%."""
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    n = len(arr)
    if n == 0:
        return None, None, None, 0
    mean = float(arr.mean())
    if n == 1 or np.all(arr == arr[0]):
        return mean, mean, mean, n
    means = resample_means(arr, rng_for(seed, name), resamples)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return mean, float(low), float(high), n


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
