"""Score a finished run and write its reports: the one call the CLI and the flows make.

    outcome = evaluate_run(run_dir, cases, trajectories, baseline_dir=..., gate_path=...)
    outcome.summary, outcome.verdict   # verdict is None without a gate

A case with no trajectory is scored as an error (`not_run`), never dropped; a trajectory that
cannot be scored becomes an error record (`scoring_error`) and the run carries on.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from casemill.case.model import Case
from casemill.evaluation.gate import check_gate, load_gate
from casemill.evaluation.report import html, markdown, results
from casemill.evaluation.scoring.aggregate import summarize
from casemill.evaluation.scoring.caseset import case_set as case_set_of
from casemill.evaluation.scoring.model import CaseScore, CaseSet, GateVerdict, Mode, RunSummary
from casemill.evaluation.scoring.plugins import plugin_metrics
from casemill.evaluation.scoring.registry import ScoringConfig
from casemill.evaluation.scoring.scorer import score
from casemill.evaluation.trajectory import Trajectory
from casemill.io.jsonl import atomic_write_text

if TYPE_CHECKING:
    from casemill.evaluation.judge import Judge

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalOutcome:
    summary: RunSummary
    verdict: GateVerdict | None
    scores: tuple[CaseScore, ...] = field(default=(), repr=False)
    paths: dict[str, Path] = field(default_factory=dict)


def _error_score(
    case_id: str, trial: int, agent: str, kind: str, message: str, mode: Mode
) -> CaseScore:
    return CaseScore(
        case_id=case_id,
        trial=trial,
        agent=agent,
        mode=mode,
        error=message,
        error_kind=kind,
        labels={"failure": "error"},
        assertions={"no_error": False},
    )


def score_all(
    cases: Sequence[Case],
    trajectories: Sequence[Trajectory],
    *,
    mode: Mode = "casemill",
    config: ScoringConfig | None = None,
) -> list[CaseScore]:
    """Scores of every trajectory, plus an error record per case that has none. A metric
    plugin that does not load stops here, before any trial is scored (`UserError`)."""
    plugin_metrics()
    case_map = {c.id: c for c in cases}
    agent = trajectories[0].agent if trajectories else ""
    out, seen = [], set()
    for t in trajectories:
        case = case_map.get(t.case_id)
        if case is None:
            log.warning("trajectory for case %s, which is not among the cases: ignored", t.case_id)
            continue
        seen.add(t.case_id)
        try:
            out.append(score(case, t, mode=mode, config=config))
        except Exception as exc:  # one bad record must not abort the run's scoring
            log.exception("scoring case %s trial %s failed", t.case_id, t.trial)
            out.append(
                _error_score(
                    t.case_id,
                    t.trial,
                    t.agent,
                    "scoring_error",
                    f"{type(exc).__name__}: {exc}",
                    mode,
                )
            )
    for case in cases:
        if case.id not in seen:
            out.append(
                _error_score(
                    case.id, 0, agent, "not_run", "no trajectory was recorded for this case", mode
                )
            )
    return out


def settings_differ(baseline: dict, current: dict) -> bool:
    """Whether two runs' agents ran with other settings (a temperature, say) besides their
    models: the model is what two compared agents usually differ by, and their names say so."""

    def besides_model(settings: dict) -> dict:
        return {k: v for k, v in settings.items() if k != "model"}

    return besides_model(baseline) != besides_model(current)


def settings_note(baseline: RunSummary, settings: dict) -> str:
    """The note for a baseline whose agent ran with other settings (another temperature):
    its deltas mix the change of agent with the change of settings."""
    current = RunSummary(agent_settings=settings).settings_line or "none recorded"
    return (
        f"the baseline ran its agent with other settings ({baseline.settings_line or 'none recorded'}"
        f"; this run: {current})"
    )


def evaluate_run(
    run_dir: Path,
    cases: Sequence[Case],
    trajectories: Sequence[Trajectory],
    *,
    baseline_dir: Path | None = None,
    gate_path: Path | None = None,
    judge: Judge | None = None,
    mode: Mode = "casemill",
    config: ScoringConfig | None = None,
    seed: int = 0,
    case_set: CaseSet | None = None,
    agent_settings: dict | None = None,
    notes: Sequence[str] = (),
    endpoint: str | None = None,
) -> EvalOutcome:
    """Score, aggregate, compare, gate, and write results.jsonl, summary.json, report.html and
    summary.md into `run_dir`. A bad gate or baseline raises `UserError` before any scoring.
    `case_set` says what the cases came from (`CaseInput.case_set()`); without it the summary
    records the cases' count and digest only. `agent_settings` (`agents.agent_settings`) is
    what the agent was configured with, recorded so that runs can be told comparable. `notes`
    go into the summary's notes as the scores' own do (a skipped embedding similarity): what
    the caller was asked for and skipped, such as the judge without an endpoint
    (`judge.skipped_note`). `endpoint` is the URL the agent talked to, for the run's header."""
    run_dir = Path(run_dir)
    gate = load_gate(gate_path) if gate_path is not None else None
    baseline = (
        results.load_baseline(baseline_dir, (c.id for c in cases))
        if baseline_dir is not None
        else None
    )
    scores = score_all(cases, trajectories, mode=mode, config=config)
    added = list(notes)
    if judge is not None:
        from casemill.evaluation.judge import apply_judge

        scores, judge_notes = apply_judge(judge, cases, trajectories, scores, run_dir=run_dir)
        added += judge_notes
    recorded = case_set if case_set is not None else case_set_of(cases)
    summary = summarize(cases, scores, baseline=baseline, seed=seed, case_set=recorded)
    settings = dict(agent_settings or {})
    if baseline is not None and settings_differ(baseline.agent_settings, settings):
        added.append(settings_note(baseline, settings))
    update: dict = {"agent_settings": settings, "endpoint": endpoint}
    if added:
        update["notes"] = (*summary.notes, *added)
    summary = summary.model_copy(update=update)
    verdict = None
    if gate is not None:
        verdict = check_gate(gate, cases, scores, summary, baseline)
        summary = summary.model_copy(update={"gate": verdict})
    paths = {
        "results": results.write_results(run_dir, scores),
        "summary": results.write_summary(run_dir, summary),
        "report": atomic_write_text(
            run_dir / results.REPORT,
            [html.render_html(summary, cases, scores, trajectories, name=str(run_dir))],
        ),
        "summary_md": atomic_write_text(
            run_dir / results.SUMMARY_MD, [markdown.render_markdown(summary)]
        ),
    }
    return EvalOutcome(summary=summary, verdict=verdict, scores=tuple(scores), paths=paths)
