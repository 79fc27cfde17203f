"""Scoring: per-trial metrics (`score`), run summaries (`summarize`), baseline comparison.

    from casemill.evaluation.scoring import score, summarize
    scores = [score(case_by_id[t.case_id], t) for t in trajectories]
    summary = summarize(cases, scores, seed=0)

`casemill.evaluation.scoring.pipeline.evaluate_run` does all of it for a run directory and writes the
reports.
"""

from casemill.evaluation.scoring.aggregate import slice_keys, summarize
from casemill.evaluation.scoring.compare import compare
from casemill.evaluation.scoring.context import SEMANTIC_LABEL, clear_cache
from casemill.evaluation.scoring.model import (
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
from casemill.evaluation.scoring.registry import METRICS, ScoringConfig
from casemill.evaluation.scoring.scorer import score

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
