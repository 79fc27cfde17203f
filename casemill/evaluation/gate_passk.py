"""pass^k rules of the gate (`metric = "pass^3"`): the per-case values they are checked on and
the cases they cannot be measured on (`gate_checks.check_trials` refuses the rule up front).

A case's value is C(c, k) / C(n, k) for c successes in n trials (`compare.pass_k_rows`, which
a comparison with a baseline shows too), so a slice's mean is the summary's pass^k estimator on
the slice's cases.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from casemill.evaluation.scoring.compare import pass_k_rows

__all__ = ["fell", "pass_k_rows", "short_of"]


def short_of(successes: Mapping[str, Sequence[bool]], ids: Iterable[str], k: int) -> list[str]:
    """The cases among `ids` with fewer than k trials (pass^k cannot be measured on them)."""
    return sorted(i for i in ids if len(successes.get(i, ())) < k)


def fell(
    baseline: Mapping[str, dict], current: Mapping[str, dict], ids: Iterable[str], metric: str
) -> tuple[str, ...]:
    """The cases whose `metric` is lower now than in the baseline."""
    out = []
    for i in ids:
        b, c = baseline[i].get(metric), current[i].get(metric)
        if b is not None and c is not None and c < b - 1e-12:
            out.append(i)
    return tuple(sorted(out))
