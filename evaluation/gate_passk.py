"""pass^k rules of the gate (`metric = "pass^3"`): the per-case values they are checked on, and
the check, made before the agent runs, that the run (and the baseline) has k trials per case.

A case's value is C(c, k) / C(n, k) for c successes in n trials (`stats.pass_hat_k` on that
case alone), so a slice's mean is the summary's pass^k estimator on the slice's cases.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from casemill.errors import UserError
from casemill.text import count
from evaluation.scoring import stats
from evaluation.scoring.model import RunSummary
from evaluation.scoring.registry import pass_k_of

if TYPE_CHECKING:
    from evaluation.gate import Gate


def pass_k_rows(
    successes: Mapping[str, Sequence[bool]], metric: str
) -> dict[str, dict[str, float | None]]:
    """Per case, {metric: its pass^k}; None for a case with fewer than k trials."""
    k = pass_k_of(metric) or 1
    return {i: {metric: stats.pass_hat_k([o], k)} for i, o in successes.items()}


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


def check_trials(
    gate: Gate,
    trials: int,
    *,
    baseline: RunSummary | None = None,
    baseline_name: str = "the baseline",
    option: str = "--trials",
) -> None:
    """Refuse, naming the file, line and rule, a pass^k rule that this run (`trials` per case) or
    its baseline (for a no_regression rule) has too few trials to measure."""
    for index, rule in enumerate(gate.rules):
        k = pass_k_of(rule.metric)
        if k is None:
            continue
        line = gate.lines[index] if index < len(gate.lines) else 1
        where = f"{gate.source}:{line}: rule {index + 1}, field 'metric'"
        if k > trials:
            raise UserError(
                f"{where}: {rule.metric} needs at least {count(k, 'trial')} per case; the run "
                f"has {count(trials, 'trial')} per case: use {option} {k} or more"
            )
        if rule.kind == "no_regression" and baseline is not None and baseline.trials < k:
            raise UserError(
                f"{where}: {rule.metric} needs at least {count(k, 'trial')} per case in the "
                f"baseline too; {baseline_name} ran {count(baseline.trials, 'trial')} per case"
            )
