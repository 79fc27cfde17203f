"""The gate: a TOML file of rules a run must satisfy to ship.

    [[rule]]
    name = "refund and cancel tools"          # optional
    metric = "tool_recall"
    min = 0.95
    where = { intent = ["refund", "cancel"] }

    [[rule]]
    metric = "forbidden_violations"
    max = 0
    where = { category = "adversarial" }

    [[rule]]
    kind = "no_regression"                    # needs a baseline run
    metric = "task_success"

    [[rule]]
    metric = "pass^3"                         # needs --trials 3 or more
    min = 0.8
    where = { intent = "refund" }

A threshold rule compares the slice's mean of the metric (per case, averaged over trials) with
`min` and/or `max`, and names the cases whose own value is out of bounds. A no-regression rule
fails when the paired 95% interval of (current - baseline) lies entirely on the bad side of zero
(below it for a metric where higher is better) and names the cases that flipped pass->fail; it
is checked on the cases both runs have, and its note says so when the case sets differ.
`metric = "pass^K"` checks the chance that K trials all succeed: per case C(c, K) / C(n, K) (c
successes of n trials), averaged over the slice; a case with fewer than K trials fails a threshold
rule (its pass^K cannot be measured), and `gate_checks.check_trials` refuses the rule before the
agent runs when the run (or, for no_regression, the baseline) has fewer than K trials per case.
A no-regression rule on pass^K pairs the cases' pass^K values and names the cases whose value
fell.
`where` selects cases by origin, operator, category, intent, outcome, difficulty, label or
domain; a list means any of (an empty list is refused: it would select no case). A slice with
fewer than `min_cases` cases fails a rule of either kind (default 0: an empty slice passes with a
note).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from casemill.case.model import Case
from casemill.evaluation.gate_file import (  # noqa: F401  (parse_gate, load_gate: the gate's API)
    Gate,
    Rule,
    case_values,
    load_gate,
    parse_gate,
    wanted,
)
from casemill.evaluation.gate_passk import fell, pass_k_rows, short_of
from casemill.evaluation.scoring.aggregate import by_case, per_case_means, trial_success
from casemill.evaluation.scoring.caseset import difference_note
from casemill.evaluation.scoring.compare import comparable, flips, paired_delta
from casemill.evaluation.scoring.model import (
    CaseScore,
    GateFailure,
    GateVerdict,
    RuleResult,
    RunSummary,
)
from casemill.evaluation.scoring.registry import (
    base_metric,
    higher_is_better,
    pass_k_of,
)
from casemill.text import count


def _unmatched(rule: Rule, seen: dict[str, set[str]]) -> str:
    """A note naming the `where` values no case of the run has (`seen`: the values the run's
    cases have, by key; a typo'd intent, operator or label selects nothing, and an empty slice
    passes); "" when every value matches a case."""
    missing = []
    for key, value in rule.where.items():
        missing += [f"{key} {v!r}" for v in sorted(wanted(value) - seen[key])]
    return f"no case of the run has {', '.join(missing)}" if missing else ""


def _selected(rule: Rule, case_map: dict[str, Case], per_case: dict[str, dict]) -> list[str]:
    return [i for i in per_case if rule.selects(case_map.get(i))]


def _too_few(rule: Rule, label: str, ids: list[str]) -> tuple[RuleResult, GateFailure] | None:
    """The failure of a rule (of any kind) whose slice has fewer than `min_cases` cases."""
    if len(ids) >= rule.min_cases:
        return None
    note = f"{count(len(ids), 'case')} in the slice, fewer than min_cases={rule.min_cases}"
    return RuleResult(rule=label, passed=False, note=note), GateFailure(
        rule=label,
        slice=rule.slice_text().removeprefix(" where ") or "all",
        metric=rule.metric,
        value=None,
        threshold=None,
        message=note,
    )


def _threshold(
    rule: Rule, label: str, ids: list[str], per_case: dict[str, dict]
) -> tuple[RuleResult, GateFailure | None]:
    values = {i: per_case[i].get(rule.metric) for i in ids}
    present = {i: v for i, v in values.items() if v is not None}
    if not present:
        note = "no case in the slice has this metric" if ids else "the slice has no case"
        return RuleResult(rule=label, passed=True, note=note), None
    mean = sum(present.values()) / len(present)
    low_ok = rule.min is None or mean >= rule.min - 1e-12
    high_ok = rule.max is None or mean <= rule.max + 1e-12
    if low_ok and high_ok:
        return RuleResult(rule=label, passed=True, value=mean), None
    bad = sorted(
        i
        for i, v in present.items()
        if (rule.min is not None and v < rule.min - 1e-12)
        or (rule.max is not None and v > rule.max + 1e-12)
    )
    threshold = rule.min if not low_ok else rule.max
    side = "below the minimum" if not low_ok else "above the maximum"
    failure = GateFailure(
        rule=label,
        slice=rule.slice_text().removeprefix(" where ") or "all",
        metric=rule.metric,
        value=mean,
        threshold=threshold,
        case_ids=tuple(bad),
        message=f"mean {mean:.4g} is {side} {threshold:g} over {count(len(present), 'case')}",
    )
    return RuleResult(rule=label, passed=False, value=mean), failure


def _no_regression(
    rule: Rule,
    label: str,
    ids: list[str],
    per_case: dict[str, dict],
    baseline: RunSummary | None,
    summary: RunSummary,
) -> tuple[RuleResult, GateFailure | None]:
    if baseline is None:
        return RuleResult(rule=label, passed=True, note="skipped: no baseline run given"), None
    result, failure = _against_baseline(rule, label, ids, per_case, baseline, summary)
    base, cur = set(baseline.per_case), set(per_case)
    differ = difference_note(
        len(base & cur), len(cur - base), len(base - cur), summary.case_set, baseline.case_set
    )
    if differ:  # a pass on a partial overlap is still a pass, but the reader should know
        note = "; ".join(n for n in (result.note, differ) if n)
        result = result.model_copy(update={"note": note})
    return result, failure


def _against_baseline(
    rule: Rule,
    label: str,
    ids: list[str],
    per_case: dict[str, dict],
    baseline: RunSummary,
    summary: RunSummary,
) -> tuple[RuleResult, GateFailure | None]:
    if not comparable(baseline, summary, base_metric(rule.metric)):
        note = f"{base_metric(rule.metric)} versions differ from the baseline's: not comparable"
        return RuleResult(rule=label, passed=False, note=note), GateFailure(
            rule=label, slice="all", metric=rule.metric, value=None, threshold=0.0, message=note
        )
    paired = sorted(i for i in ids if i in baseline.per_case)
    delta = paired_delta(baseline.per_case, per_case, paired, rule.metric, summary.seed)
    if delta.delta is None:
        return RuleResult(rule=label, passed=True, note="no paired cases with this metric"), None
    if not delta.significant_regression:
        return RuleResult(rule=label, passed=True, value=delta.delta), None
    if pass_k_of(rule.metric):  # a case whose pass^k fell need not flip (3/3 -> 2/3)
        flipped = fell(baseline.per_case, per_case, paired, rule.metric)
    else:
        flipped = tuple(
            f.case_id
            for f in flips(baseline.per_case, per_case, paired)
            if f.direction == "pass->fail"
        )
    direction = "below" if higher_is_better(rule.metric) else "above"
    message = (
        f"delta {delta.delta:+.4g}, 95% CI [{delta.ci_low:+.4g}, {delta.ci_high:+.4g}] lies "
        f"entirely {direction} zero over {delta.paired_cases} paired cases"
    )
    failure = GateFailure(
        rule=label,
        slice=rule.slice_text().removeprefix(" where ") or "all",
        metric=rule.metric,
        value=delta.delta,
        threshold=0.0,
        case_ids=flipped,
        message=message,
    )
    return RuleResult(rule=label, passed=False, value=delta.delta), failure


def _pass_k(
    rule: Rule,
    label: str,
    ids: list[str],
    successes: dict[str, tuple[bool, ...]],
    baseline: RunSummary | None,
    summary: RunSummary,
) -> tuple[RuleResult, GateFailure | None]:
    """A pass^k rule: the threshold or no-regression check on the cases' pass^k values."""
    k = pass_k_of(rule.metric) or 1
    rows = pass_k_rows(successes, rule.metric)
    short = short_of(successes, ids, k)
    if rule.kind == "no_regression":
        base = baseline
        if baseline is not None:
            base_rows = pass_k_rows(baseline.trial_success, rule.metric)
            base = baseline.model_copy(update={"per_case": base_rows})
            short = sorted(set(short) | set(short_of(baseline.trial_success, ids, k)))
            short = [i for i in short if i in base_rows]
        result, failure = _no_regression(rule, label, ids, rows, base, summary)
        if short and baseline is not None:
            left = f"{count(len(short), 'case')} with fewer than {k} trials in a run: left out"
            result = result.model_copy(
                update={"note": "; ".join(n for n in (left, result.note) if n)}
            )
        return result, failure
    if short:
        message = (
            f"{len(short)} of {count(len(ids), 'case')} in the slice have fewer than {k} trials: "
            f"{rule.metric} cannot be measured on them (run with --trials {k} or more)"
        )
        return RuleResult(rule=label, passed=False, note=message), GateFailure(
            rule=label,
            slice=rule.slice_text().removeprefix(" where ") or "all",
            metric=rule.metric,
            value=None,
            threshold=rule.min if rule.min is not None else rule.max,
            case_ids=tuple(short),
            message=message,
        )
    return _threshold(rule, label, ids, rows)


def check_gate(
    gate: Gate,
    cases: Sequence[Case],
    scores: Sequence[CaseScore],
    summary: RunSummary,
    baseline: RunSummary | None = None,
) -> GateVerdict:
    """Check every rule; the verdict lists each failing rule with its slice and cases."""
    case_map = {c.id: c for c in cases}
    per_case, successes = summary.per_case, summary.trial_success
    if not per_case and scores:
        per_case = per_case_means(by_case(scores))
    if not successes and scores:
        successes = trial_success(by_case(scores))
    keys = {key for rule in gate.rules for key in rule.where}
    seen = {key: set().union(*(case_values(c, key) for c in cases)) for key in keys}
    results, failures = [], []
    for index, rule in enumerate(gate.rules):
        label = rule.label(index)
        ids = _selected(rule, case_map, per_case)
        too_few = _too_few(rule, label, ids)
        if too_few is not None:
            result, failure = too_few
        elif rule.kind not in ("threshold", "no_regression"):
            view = (per_case, successes, case_map, summary, baseline)
            result, failure = _plugin(rule, label, ids, *view)
        elif pass_k_of(rule.metric):
            result, failure = _pass_k(rule, label, ids, successes, baseline, summary)
        elif rule.kind == "threshold":
            result, failure = _threshold(rule, label, ids, per_case)
        else:
            result, failure = _no_regression(rule, label, ids, per_case, baseline, summary)
        unmatched = _unmatched(rule, seen)
        if unmatched:
            note = "; ".join(n for n in (unmatched, result.note) if n)
            result = result.model_copy(update={"note": note})
        results.append(result)
        if failure is not None:
            failures.append(failure)
    return GateVerdict(
        gate=gate.source, passed=not failures, failures=tuple(failures), rules=tuple(results)
    )


def _plugin(rule: Rule, label: str, ids: list[str], *view: Any):
    """A rule whose kind a package's gate check provides (`gate_checks.plugin_rule`); `view`:
    the per-case means, the trials' successes, the cases, the summary and the baseline."""
    from casemill.evaluation.gate_checks import GateSlice, plugin_rule

    return plugin_rule(rule, label, GateSlice(rule, tuple(ids), *view))
