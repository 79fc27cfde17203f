"""A run against a baseline run: per-metric deltas over the cases both ran, with paired
bootstrap intervals, and the cases that flipped.

A case passes when it succeeded on at least half of its trials; a flip is a case that passes in
one run and not in the other. Deltas are current minus baseline, per case, then averaged; the
interval resamples cases (pairs stay together). When the two runs' case sets differ (another
corpus version, a subset file), the comparison says so in `case_note` and stays on the cases in
common.

With two or more trials per case in both runs, the deltas also hold pass^k (named `pass^2`,
`pass^3`, ..., as in a gate rule, right after task_success) for k = 2 .. the fewest trials either
run has on the cases in common: per case C(c, k) / C(n, k) current minus baseline, over the cases
with at least k trials in both. pass^1 would repeat task_success's row (c / n per case), so it is
not shown. pass^k is computed from task_success: when that metric's versions differ, the pass^k
rows are listed as not comparable too. `pass_k_note` says why pass^k is missing or on fewer cases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from casemill.evaluation.scoring import stats
from casemill.evaluation.scoring.caseset import difference_note
from casemill.evaluation.scoring.model import Comparison, Delta, Flip, RunSummary
from casemill.evaluation.scoring.registry import base_metric, higher_is_better, pass_k_of

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


def pass_k_rows(
    successes: Mapping[str, Sequence[bool]], metric: str
) -> dict[str, dict[str, float | None]]:
    """Per case, {metric: its pass^k} (`metric` is `pass^K`): C(c, k) / C(n, k) for c successes
    in n trials, `stats.pass_hat_k` on that case alone; None for a case with fewer than k
    trials. The gate's pass^k rules check these too (`casemill.evaluation.gate_passk`)."""
    k = pass_k_of(metric) or 1
    return {i: {metric: stats.pass_hat_k([o], k)} for i, o in successes.items()}


def most_trials(run: RunSummary, ids: list[str]) -> int:
    """The most trials `run` has on a case among `ids` (0 without per-trial outcomes)."""
    return max((len(run.trial_success.get(i, ())) for i in ids), default=0)


def with_pass_k(
    per_case: dict[str, dict], successes: dict[str, tuple[bool, ...]], ids: list[str], most: int
) -> dict[str, dict]:
    """`per_case` rows of `ids` with `pass^2` .. `pass^most` added (None where a case has
    fewer than k trials)."""
    out = {i: dict(per_case[i]) for i in ids}
    paired = {i: successes[i] for i in ids if i in successes}
    for k in range(2, most + 1):
        for i, row in pass_k_rows(paired, f"pass^{k}").items():
            out[i] |= row
    return out


def compare(baseline: RunSummary, current: RunSummary, *, seed: int = 0) -> Comparison:
    base, cur = baseline.per_case, current.per_case
    ids = sorted(set(base) & set(cur))
    trials = (most_trials(baseline, ids), most_trials(current, ids))
    most = min(trials)  # pass^k pairs up to the fewest trials of the two
    names = [n for n in COMPARED if any(n in cur[i] for i in ids)]
    at = names.index("task_success") + 1 if "task_success" in names else 0
    names[at:at] = [f"pass^{k}" for k in range(2, most + 1)]
    differ = tuple(n for n in names if not comparable(baseline, current, base_metric(n)))
    base_rows = with_pass_k(base, baseline.trial_success, ids, most)
    cur_rows = with_pass_k(cur, current.trial_success, ids, most)
    deltas = tuple(
        d
        for d in (paired_delta(base_rows, cur_rows, ids, n, seed) for n in names if n not in differ)
        if d.paired_cases or d.metric in COMPARED  # no case with k trials in both: no row
    )
    return Comparison(
        baseline_agent=baseline.agent,
        paired_cases=len(ids),
        only_in_current=len(set(cur) - set(base)),
        only_in_baseline=len(set(base) - set(cur)),
        deltas=deltas,
        flips=() if "task_success" in differ else flips(base, cur, ids),
        not_comparable=differ,
        pass_k_note=pass_k_note(trials, len(ids), deltas, differ, blind(baseline, current, ids)),
        case_note=case_set_note(baseline, current),
        baseline_case_set=baseline.case_set,
        current_case_set=current.case_set,
    )


def comparable(baseline: RunSummary, current: RunSummary, metric: str) -> bool:
    """Whether a metric means the same in both runs (same version, or unknown in one)."""
    a = baseline.metric_versions.get(metric)
    b = current.metric_versions.get(metric)
    return a is None or b is None or a == b


def blind(baseline: RunSummary, current: RunSummary, ids: list[str]) -> list[str]:
    """Which of the two runs has no per-trial outcome for any case of `ids`."""
    runs = (("the baseline", baseline), ("the current run", current))
    return [name for name, run in runs if ids and not any(i in run.trial_success for i in ids)]


def pass_k_note(
    trials: tuple[int, int],
    cases: int,
    deltas: tuple[Delta, ...],
    differ: tuple[str, ...],
    blind: list[str],
) -> str:
    """Why pass^k is not compared, or on which k it left cases out ('' when all is there), from
    the most trials the baseline and the current run have on the `cases` in common."""
    if not cases:
        return ""
    if blind:
        return (
            f"pass^k not compared: the per-trial outcomes of {' and '.join(blind)} are missing "
            "(they are read from a run's results.jsonl)"
        )
    names = ("the baseline", "the current run")
    fewest, most = min(trials), max(trials)
    fewer, other = names[trials.index(fewest)], names[1 - trials.index(fewest)]
    if most < 2:
        return ""  # single-trial runs: no pass^k in either summary, nothing to say
    if fewest < 2:
        return (
            f"pass^k not compared: {fewer} ran 1 trial per case (the other up to {most}); "
            "run both with --trials 2 or more"
        )
    paired = {d.metric: d.paired_cases for d in deltas}
    short = [
        f"{n} on {paired.get(n, 0)} of {cases}"
        for n in (f"pass^{k}" for k in range(2, fewest + 1))
        if n not in differ and paired.get(n, 0) < cases
    ]
    said = []
    if short:
        said.append(
            f"pass^k over the cases with at least k trials in both runs: {', '.join(short)}"
        )
    if fewest < most and "pass^2" not in differ:  # the higher k only one run can give
        beyond = f"pass^{fewest + 1}" + (f"..pass^{most}" if most > fewest + 1 else "")
        said.append(
            f"{beyond} not compared: {fewer} ran up to {fewest} trials per case "
            f"({other} up to {most})"
        )
    return "; ".join(said)
