"""A run against a baseline run: per-metric deltas over the cases both ran, with paired
bootstrap intervals, and the cases that flipped.

A case passes when it succeeded on at least half of its trials; a flip is a case that passes in
one run and not in the other. Deltas are current minus baseline, per case, then averaged; the
interval resamples cases (pairs stay together). When the two runs' case sets differ (another
corpus version, a subset file), the comparison says so in `case_note` and stays on the cases in
common.
"""

from __future__ import annotations

from evaluation.scoring import stats
from evaluation.scoring.caseset import difference_note
from evaluation.scoring.model import Comparison, Delta, Flip, RunSummary
from evaluation.scoring.registry import higher_is_better

COMPARED = (
    "task_success",
    "tool_recall",
    "tool_precision",
    "param_accuracy",
    "phrase_recall",
    "state_success",
    "forbidden_violations",
    "reply_excludes_violations",
    "efficiency",
    "completion",
    "overall",
    "latency_s",
    "tokens",
    "cost_usd",
)


def passed(rate: float | None) -> bool:
    return rate is not None and rate >= 0.5


def paired_delta(
    baseline: dict[str, dict], current: dict[str, dict], ids: list[str], metric: str, seed: int
) -> Delta:
    pairs = [
        (baseline[i].get(metric), current[i].get(metric))
        for i in ids
        if baseline[i].get(metric) is not None and current[i].get(metric) is not None
    ]
    base = [b for b, _ in pairs]
    cur = [c for _, c in pairs]
    diffs = [c - b for b, c in pairs]
    mean, low, high, n = stats.mean_ci(diffs, seed, f"delta:{metric}")
    return Delta(
        metric=metric,
        baseline=sum(base) / n if n else None,
        current=sum(cur) / n if n else None,
        delta=mean,
        ci_low=low,
        ci_high=high,
        paired_cases=n,
        higher_is_better=higher_is_better(metric),
    )


def flips(baseline: dict[str, dict], current: dict[str, dict], ids: list[str]) -> tuple[Flip, ...]:
    out = []
    for i in ids:
        b, c = baseline[i].get("task_success"), current[i].get("task_success")
        if passed(b) != passed(c):
            out.append(
                Flip(
                    case_id=i,
                    direction="pass->fail" if passed(b) else "fail->pass",
                    baseline_rate=b or 0.0,
                    current_rate=c or 0.0,
                )
            )
    out.sort(key=lambda f: (f.direction != "pass->fail", f.case_id))
    return tuple(out)


def case_set_note(baseline: RunSummary, current: RunSummary) -> str:
    """The warning for runs on different case sets ('' when both ran the same cases)."""
    base, cur = set(baseline.per_case), set(current.per_case)
    return difference_note(
        len(base & cur), len(cur - base), len(base - cur), current.case_set, baseline.case_set
    )


def compare(baseline: RunSummary, current: RunSummary, *, seed: int = 0) -> Comparison:
    base, cur = baseline.per_case, current.per_case
    ids = sorted(set(base) & set(cur))
    names = [n for n in COMPARED if any(n in cur[i] for i in ids)]
    differ = tuple(n for n in names if not comparable(baseline, current, n))
    return Comparison(
        baseline_agent=baseline.agent,
        paired_cases=len(ids),
        only_in_current=len(set(cur) - set(base)),
        only_in_baseline=len(set(base) - set(cur)),
        deltas=tuple(paired_delta(base, cur, ids, n, seed) for n in names if n not in differ),
        flips=() if "task_success" in differ else flips(base, cur, ids),
        not_comparable=differ,
        case_note=case_set_note(baseline, current),
        baseline_case_set=baseline.case_set,
        current_case_set=current.case_set,
    )


def comparable(baseline: RunSummary, current: RunSummary, metric: str) -> bool:
    """Whether a metric means the same in both runs (same version, or unknown in one)."""
    a = baseline.metric_versions.get(metric)
    b = current.metric_versions.get(metric)
    return a is None or b is None or a == b
