"""Checks of a gate against the run it will judge, made before the agent runs: a rule on a
metric the run will not measure (pass^k with too few trials, a judge criterion without the judge)
would otherwise fail, or pass on an empty slice, only after the whole run.

    check_trials(gate, trials, baseline=summary)   # pass^k rules
    check_judge(gate, criteria)                    # judge_<criterion> rules; None: no judge
    check_mode(gate, "chapter")                    # rules on metrics the chapter mode lacks
    check_embeddings(gate, embeddings_available()) # embedding_similarity without the extra
"""

from __future__ import annotations

from collections.abc import Sequence

from casemill.errors import UserError
from casemill.evaluation.gate import Gate
from casemill.evaluation.scoring.model import RunSummary
from casemill.evaluation.scoring.registry import (
    CHAPTER_METRICS,
    JUDGE_PREFIX,
    OPERATIONAL_METRICS,
    base_metric,
    pass_k_of,
)
from casemill.text import count


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
        if metric in given or metric.startswith(JUDGE_PREFIX):
            continue
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
