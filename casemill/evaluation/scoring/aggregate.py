"""From per-trial scores to a run summary: means with intervals (Wilson, bootstrap), slices, pass^k,
flakiness, convergence, consistency per seed family, and the comparison with a baseline."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from casemill.case.model import Case
from casemill.evaluation.scoring import stats
from casemill.evaluation.scoring.compare import compare
from casemill.evaluation.scoring.errors import ended_in_error, error_counts
from casemill.evaluation.scoring.model import (
    CaseScore,
    CaseSet,
    Consistency,
    FamilyConsistency,
    FlakyCase,
    RunSummary,
    SliceRow,
    Stat,
)
from casemill.evaluation.scoring.registry import spec, versions

SLICE_DIMENSIONS = ("origin", "operator", "category", "intent", "outcome", "difficulty")
SLICE_METRICS = (
    "tool_recall",
    "tool_precision",
    "param_accuracy",
    "phrase_recall",
    "state_success",
    "forbidden_violations",
    "efficiency",
)
MAX_NOTES = 20


def slice_keys(case: Case | None) -> list[tuple[str, str]]:
    """The slices a case belongs to: one value per dimension, one per intent."""
    if case is None:
        return [(d, "(unknown)") for d in SLICE_DIMENSIONS]
    ops = case.provenance.operators
    keys = [
        ("origin", case.provenance.origin),
        ("operator", ops[-1].name if ops else "(none)"),
        ("category", case.tags.category),
        ("outcome", case.expected.outcome),
        ("difficulty", case.tags.difficulty),
    ]
    keys += [("intent", i) for i in (case.tags.intents or ("(none)",))]
    return keys


def by_case(scores: Iterable[CaseScore]) -> dict[str, list[CaseScore]]:
    """The trials of each case the agent covered (`CaseScore.covered`), in trial order."""
    grouped: dict[str, list[CaseScore]] = defaultdict(list)
    for s in scores:
        if s.covered:
            grouped[s.case_id].append(s)
    for trials in grouped.values():
        trials.sort(key=lambda s: s.trial)
    return dict(sorted(grouped.items()))


def per_case_means(grouped: dict[str, list[CaseScore]]) -> dict[str, dict[str, float | None]]:
    """Per case, each metric's mean over its trials (None when no trial has it)."""
    out = {}
    for case_id, trials in grouped.items():
        sums: dict[str, float] = defaultdict(float)
        counts: dict[str, int] = defaultdict(int)
        for s in trials:
            for name, value in s.metrics.items():
                if value is not None:
                    sums[name] += value
                    counts[name] += 1
                else:
                    counts.setdefault(name, 0)
        row: dict[str, float | None] = {
            name: (sums[name] / counts[name] if counts[name] else None) for name in counts
        }
        row["task_success"] = sum(s.task_success for s in trials) / len(trials)
        out[case_id] = row
    return out


def trial_success(grouped: dict[str, list[CaseScore]]) -> dict[str, tuple[bool, ...]]:
    """Per case, task success of each trial in trial order (what pass^k is computed from)."""
    return {case_id: tuple(s.task_success for s in trials) for case_id, trials in grouped.items()}


def _stat(values: Sequence[float | None], seed: int, name: str, metric: str) -> Stat:
    """The mean of `metric` with its interval (Wilson's when the metric is a rate in 0..1)."""
    found = spec(metric)
    rate = found is not None and found.unit == "ratio"
    mean, low, high, n, method = stats.interval(values, seed, name, rate=rate)
    return Stat(mean=mean, ci_low=low, ci_high=high, n=n, method=method)


def summarize(
    cases: Sequence[Case],
    scores: Sequence[CaseScore],
    *,
    baseline: RunSummary | None = None,
    seed: int = 0,
    case_set: CaseSet | None = None,
) -> RunSummary:
    """The run's summary; `baseline` (with its per-case table) adds deltas and flips, and a
    note when the two runs' case sets differ. `case_set` records what the run was on. Cases the
    agent did not cover are listed apart (`not_covered`) and counted in nothing else."""
    case_map = {c.id: c for c in cases}
    everything, scores = scores, [s for s in scores if s.covered]
    grouped = by_case(scores)
    per_case = per_case_means(grouped)
    names = sorted({n for row in per_case.values() for n in row})
    metric_stats = {n: _stat([row.get(n) for row in per_case.values()], seed, n, n) for n in names}
    successes = trial_success(grouped)
    outcomes = list(successes.values())
    trials = max((len(o) for o in outcomes), default=0)
    errors = error_counts(scores)
    modes = Counter(s.mode for s in everything)
    mode = modes.most_common(1)[0][0] if modes else "casemill"
    summary = RunSummary(
        agent=_agent(everything),
        mode=mode,
        cases=len(grouped),
        case_set=case_set,
        trials=trials,
        results=len(scores),
        errors=sum(1 for s in scores if ended_in_error(s)),
        error_kinds=errors,
        not_covered=tuple(sorted({s.case_id for s in everything if not s.covered} - set(grouped))),
        task_success_rate=metric_stats["task_success"].mean if grouped else None,
        task_success=metric_stats.get("task_success", Stat()),
        metrics=metric_stats,
        pass_k={
            str(k): v
            for k in range(1, trials + 1)
            if (v := stats.pass_hat_k(outcomes, k)) is not None
        },
        convergence=_convergence(grouped),
        flaky=_flaky(grouped),
        consistency=consistency(case_map, per_case),
        slices=_slices(case_map, grouped, per_case, seed),
        metric_versions=versions(names, mode),
        notes=_notes(scores),
        seed=seed,
        per_case=per_case,
        trial_success=successes,
    )
    if baseline is not None:
        comparison = compare(baseline, summary, seed=seed)
        notes = (*summary.notes, comparison.case_note) if comparison.case_note else summary.notes
        summary = summary.model_copy(update={"comparison": comparison, "notes": notes})
    return summary


def _agent(scores: Sequence[CaseScore]) -> str:
    agents = Counter(s.agent for s in scores)
    return ", ".join(sorted(agents, key=lambda a: (-agents[a], a)))


def _notes(scores: Sequence[CaseScore]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for s in sorted(scores, key=lambda s: (s.case_id, s.trial)):
        for note in s.notes:
            if note not in seen and not note.startswith("state check skipped: the expected"):
                seen[note] = None
                if len(seen) >= MAX_NOTES:
                    return tuple(seen)
    return tuple(seen)


def _convergence(grouped: dict[str, list[CaseScore]]) -> float | None:
    values = []
    for trials in grouped.values():
        pairs = [(s.task_success, int(s.metrics.get("steps") or 0)) for s in trials]
        value = stats.convergence(pairs)
        if value is not None:
            values.append(value)
    return sum(values) / len(values) if values else None


def _flaky(grouped: dict[str, list[CaseScore]]) -> tuple[FlakyCase, ...]:
    out = []
    for case_id, trials in grouped.items():
        passes = sum(s.task_success for s in trials)
        if 0 < passes < len(trials):
            out.append(
                FlakyCase(
                    case_id=case_id,
                    passes=passes,
                    trials=len(trials),
                    flakiness=stats.flakiness(passes, len(trials)),
                )
            )
    out.sort(key=lambda f: (-f.flakiness, f.case_id))
    return tuple(out)


def family_of(case: Case) -> str:
    """A case's seed family: its first parent, or itself when it has none."""
    return case.provenance.parents[0] if case.provenance.parents else case.id


def consistency(case_map: dict[str, Case], per_case: dict[str, dict]) -> Consistency:
    """How often the agent behaves the same (pass or fail) on a seed and on its label-preserving
    variants (variants whose `expected` equals the seed's). A family counts when it has at least
    one such variant scored; with the seed itself not scored, members are compared with the
    family's majority."""
    families: dict[str, list[str]] = defaultdict(list)
    for case_id in per_case:
        case = case_map.get(case_id)
        if case is not None:
            families[family_of(case)].append(case_id)
    rows = []
    for family, members in sorted(families.items()):
        root = case_map.get(family)
        kept = [
            m
            for m in members
            if m == family or root is None or case_map[m].expected == root.expected
        ]
        if len(kept) < 2:
            continue
        passed = {m: (per_case[m]["task_success"] or 0.0) >= 0.5 for m in kept}
        ref = passed[family] if family in passed else sum(passed.values()) * 2 >= len(passed)
        variants = [m for m in kept if m != family]
        agree = sum(passed[m] == ref for m in variants)
        rows.append(
            FamilyConsistency(family=family, members=len(kept), consistency=agree / len(variants))
        )
    if not rows:
        return Consistency()
    rows.sort(key=lambda r: (r.consistency, r.family))
    return Consistency(
        families=len(rows),
        mean=sum(r.consistency for r in rows) / len(rows),
        worst=tuple(rows[:10]),
    )


def _slices(
    case_map: dict[str, Case],
    grouped: dict[str, list[CaseScore]],
    per_case: dict[str, dict],
    seed: int,
) -> tuple[SliceRow, ...]:
    members: dict[tuple[str, str], list[str]] = defaultdict(list)
    for case_id in grouped:
        for key in slice_keys(case_map.get(case_id)):
            members[key].append(case_id)
    rows = []
    for (dimension, value), ids in sorted(members.items()):
        rows_of = [per_case[i] for i in ids]
        means: dict[str, float | None] = {}
        for name in SLICE_METRICS:
            vals = [r[name] for r in rows_of if r.get(name) is not None]
            means[name] = sum(vals) / len(vals) if vals else None
        rows.append(
            SliceRow(
                dimension=dimension,
                value=value,
                cases=len(ids),
                results=sum(len(grouped[i]) for i in ids),
                task_success=_stat(
                    [r["task_success"] for r in rows_of],
                    seed,
                    f"slice:{dimension}={value}",
                    "task_success",
                ),
                metrics=means,
            )
        )
    return tuple(rows)
