"""Checks of a gate against the run it will judge, made before the agent runs: a rule on a
metric the run will not measure (pass^k with too few trials, a judge criterion without the judge)
would otherwise fail, or pass on an empty slice, only after the whole run.

    check_trials(gate, trials, baseline=summary)   # pass^k rules
    check_judge(gate, criteria)                    # judge_<criterion> rules; None: no judge
    check_mode(gate, "chapter")                    # rules on metrics the chapter mode lacks
    check_embeddings(gate, embeddings_available()) # embedding_similarity without the extra

And the kinds of rule a gate file may use (`kind = "..."` in a `[[rule]]`): each a `GateCheck`
declared under the `casemill.gate_checks` entry points. Casemill declares `threshold` and
`no_regression`; a package adds its own, and a rule names it with its `args`:

    [[rule]]
    kind = "p90_below"            # a `casemill.gate_checks` entry point of an installed package
    metric = "latency_s"
    args = { limit = 2.0 }
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from casemill import plugins
from casemill.errors import UserError
from casemill.evaluation.gate import Gate
from casemill.evaluation.scoring.model import GateFailure, RuleResult, RunSummary
from casemill.evaluation.scoring.registry import (
    CHAPTER_METRICS,
    JUDGE_PREFIX,
    OPERATIONAL_METRICS,
    base_metric,
    pass_k_of,
    plugin_spec,
)
from casemill.loading import raised
from casemill.text import count

if TYPE_CHECKING:
    from casemill.case.model import Case
    from casemill.evaluation.gate import Rule

PLUGIN_KIND = "gate_check"
BUILT_IN_KINDS = ("threshold", "no_regression")


def _where(gate: Gate, index: int) -> str:
    line = gate.lines[index] if index < len(gate.lines) else 1
    return f"{gate.source}:{line}: rule {index + 1}, field 'metric'"


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
        if k > trials:
            raise UserError(
                f"{_where(gate, index)}: {rule.metric} needs at least {count(k, 'trial')} per "
                f"case; the run has {count(trials, 'trial')} per case: use {option} {k} or more"
            )
        if rule.kind == "no_regression" and baseline is not None and baseline.trials < k:
            raise UserError(
                f"{_where(gate, index)}: {rule.metric} needs at least {count(k, 'trial')} per "
                f"case in the baseline too; {baseline_name} ran "
                f"{count(baseline.trials, 'trial')} per case"
            )


def check_judge(
    gate: Gate, criteria: Sequence[str] | None, *, why: str = "add --judge, or drop the rule"
) -> None:
    """Refuse a rule on a judge_<criterion> metric the run will not give: no judge runs
    (`criteria` None; `why` says what to do) or its rubric has no such criterion."""
    for index, rule in enumerate(gate.rules):
        if not rule.metric.startswith(JUDGE_PREFIX):
            continue
        name = rule.metric.removeprefix(JUDGE_PREFIX)
        if criteria is None:
            raise UserError(
                f"{_where(gate, index)}: {rule.metric} is given by the LLM judge only, which "
                f"this run does not use: {why}"
            )
        if name not in criteria:
            raise UserError(
                f"{_where(gate, index)}: {rule.metric}: the judge's rubric has no criterion "
                f"{name!r}; its criteria: {', '.join(criteria)}"
            )


def check_mode(gate: Gate, mode: str) -> None:
    """Refuse a rule on a metric the scoring mode does not give: the chapter mode measures
    neither forbidden calls nor the final state, so a rule on them would pass unchecked."""
    if mode != "chapter":
        return
    given = (*CHAPTER_METRICS, *OPERATIONAL_METRICS)
    for index, rule in enumerate(gate.rules):
        metric = base_metric(rule.metric)
        if metric in given or metric.startswith(JUDGE_PREFIX) or plugin_spec(metric):
            continue  # a package's metric is measured in both modes
        raise UserError(
            f"{_where(gate, index)}: {rule.metric} is not measured in --mode chapter (it gives "
            f"{', '.join(given)}): drop the rule, or use --mode casemill"
        )


def check_embeddings(gate: Gate, available: bool) -> None:
    """Refuse a rule on embedding_similarity when the optional semantic extra that computes it is
    not installed: every case would lack the metric, and the rule pass on no value."""
    if available:
        return
    from casemill.evaluation.similarity import INSTALL_EXTRA

    for index, rule in enumerate(gate.rules):
        if rule.metric == "embedding_similarity":
            raise UserError(
                f"{_where(gate, index)}: embedding_similarity needs the optional semantic extra, "
                f"which is not installed: install {INSTALL_EXTRA}"
            )


@dataclass(frozen=True)
class GateSlice:
    """What a gate check sees: its rule (`metric`, `min`, `max`, `args`), the ids of the cases
    its `where` selects, each case's metric means over its trials, each case's task success per
    trial, the cases, the run's summary and the baseline's (None without one)."""

    rule: Rule
    case_ids: tuple[str, ...]
    per_case: Mapping[str, Mapping[str, float | None]]
    trial_success: Mapping[str, tuple[bool, ...]]
    cases: Mapping[str, Case]
    summary: RunSummary
    baseline: RunSummary | None


@dataclass(frozen=True)
class CheckResult:
    """A gate check's verdict on its slice: the value it judged (None: none), what to tell the
    reader, and the cases to blame when it failed."""

    passed: bool
    value: float | None = None
    message: str = ""
    case_ids: tuple[str, ...] = ()


class GateCheck(Protocol):
    """A kind of gate rule: a name (the rule's `kind`) and a verdict on one slice."""

    name: str

    def __call__(self, gate_slice: GateSlice) -> CheckResult: ...


class BuiltInCheck:
    """`threshold` and `no_regression` as `GateCheck`s (`check_gate` runs them on its own path,
    which adds pass^k; called, they give the same verdict on a plain metric)."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, gate_slice: GateSlice) -> CheckResult:
        from casemill.evaluation import gate

        s, ids = gate_slice, list(gate_slice.case_ids)
        label = s.rule.label(0)
        per_case = {i: dict(v) for i, v in s.per_case.items()}
        if self.name == "threshold":
            result, failure = gate._threshold(s.rule, label, ids, per_case)
        else:
            result, failure = gate._no_regression(
                s.rule, label, ids, per_case, s.baseline, s.summary
            )
        if failure is None:
            return CheckResult(True, result.value, result.note)
        return CheckResult(False, failure.value, failure.message, failure.case_ids)


THRESHOLD = BuiltInCheck("threshold")
NO_REGRESSION = BuiltInCheck("no_regression")


def known_kind(kind: str) -> str:
    """`kind` if a gate rule may name it (a built-in one, or a check a package declares); else
    a `ValueError` naming the known kinds, which the gate's reader locates in the file."""
    if kind in BUILT_IN_KINDS:
        return kind
    try:
        found = plugins.find(PLUGIN_KIND, kind)
    except UserError as exc:
        raise ValueError(str(exc)) from None
    if found is None:
        known = ", ".join(plugins.names(PLUGIN_KIND))
        raise ValueError(
            f"unknown kind {kind!r}; known: {known} (a package adds one under the "
            "'casemill.gate_checks' entry points: see docs/plugins.md)"
        )
    return kind


def plugin_rule(
    rule: Rule, label: str, gate_slice: GateSlice
) -> tuple[RuleResult, GateFailure | None]:
    """The result of a rule whose kind a plugin provides; a check that raises fails the rule,
    with what it raised (the gate says which rule could not be checked)."""
    check = plugins.get(PLUGIN_KIND, rule.kind)
    try:
        verdict = check(gate_slice)
    except Exception as exc:
        verdict = CheckResult(False, message=f"gate check {rule.kind!r} raised {raised(exc)}")
    if not isinstance(verdict, CheckResult):
        verdict = CheckResult(
            False, message=f"gate check {rule.kind!r} answered {verdict!r}, not a CheckResult"
        )
    if verdict.passed:
        return RuleResult(rule=label, passed=True, value=verdict.value, note=verdict.message), None
    failure = GateFailure(
        rule=label,
        slice=rule.slice_text().removeprefix(" where ") or "all",
        metric=rule.metric,
        value=verdict.value,
        threshold=rule.min if rule.min is not None else rule.max,
        case_ids=tuple(verdict.case_ids),
        message=verdict.message,
    )
    return RuleResult(rule=label, passed=False, value=verdict.value), failure
