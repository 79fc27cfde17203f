"""Scoring: per-trial metrics (`score`), run summaries (`summarize`), baseline comparison.

    from evaluation.scoring import score, summarize
    scores = [score(case_by_id[t.case_id], t) for t in trajectories]
    summary = summarize(cases, scores, seed=0)

`evaluation.scoring.pipeline.evaluate_run` does all of it for a run directory and writes the
reports.
"""

from evaluation.scoring.aggregate import slice_keys, summarize
from evaluation.scoring.compare import compare
from evaluation.scoring.context import SEMANTIC_LABEL, clear_cache
from evaluation.scoring.model import (
    CaseScore,
    Comparison,
    Delta,
    Flip,
    GateFailure,
    GateVerdict,
    RunSummary,
    SliceRow,
    Stat,
)
from evaluation.scoring.registry import METRICS, ScoringConfig
from evaluation.scoring.scorer import score

__all__ = [
    "METRICS",
    "SEMANTIC_LABEL",
    "CaseScore",
    "Comparison",
    "Delta",
    "Flip",
    "GateFailure",
    "GateVerdict",
    "RunSummary",
    "ScoringConfig",
    "SliceRow",
    "Stat",
    "clear_cache",
    "compare",
    "score",
    "slice_keys",
    "summarize",
]
