"""`score(case, trajectory)`: every per-trial metric of one trajectory, as a `CaseScore`."""

from __future__ import annotations

from typing import Any

from casemill.case.model import Case
from casemill.evaluation import similarity
from casemill.evaluation.scoring import metrics as m
from casemill.evaluation.scoring.chapter import chapter_metrics
from casemill.evaluation.scoring.context import SEMANTIC_LABEL, CaseContext, context_for
from casemill.evaluation.scoring.model import CaseScore, Mode
from casemill.evaluation.scoring.plugins import Trial, measure, plugin_metrics
from casemill.evaluation.scoring.registry import ScoringConfig
from casemill.evaluation.trajectory import Trajectory

DEFAULT_CONFIG = ScoringConfig()

# assertion name -> the failure label shown when it is the first to fail
CHECKS = (
    ("no_error", "error"),
    ("completed", "incomplete"),
    ("no_forbidden_calls", "forbidden_call"),
    ("tools_called", "missing_tool"),
    ("no_unexpected_tools", "unexpected_tool"),
    ("params_match", "wrong_params"),
    ("state_matches", "state_mismatch"),
    ("phrases_present", "missing_phrase"),
    ("no_excluded_phrases", "excluded_phrase"),
)


def score(
    case: Case,
    trajectory: Trajectory,
    *,
    mode: Mode = "casemill",
    config: ScoringConfig | None = None,
) -> CaseScore:
    """Score one trial of one case. Never raises for a bad trajectory: an agent error is data."""
    if trajectory.case_id != case.id:
        raise ValueError(f"trajectory of case {trajectory.case_id} scored against case {case.id}")
    config = config or DEFAULT_CONFIG
    ctx = context_for(case)
    added = _Added(case, ctx, mode)
    if mode == "chapter":
        return _score_chapter(ctx, trajectory, config, added)
    return _score_casemill(ctx, trajectory, config, SEMANTIC_LABEL in case.tags.labels, added)


class _Added:
    """The plugin metrics of one trial (`scoring.plugins`), added to its values in place."""

    def __init__(self, case: Case, ctx: CaseContext, mode: Mode):
        self.case, self.ctx, self.mode = case, ctx, mode

    def __call__(self, t: Trajectory, values: dict, notes: list[str]) -> None:
        if not plugin_metrics():
            return
        trial = Trial(self.case, t, self.ctx, dict(values), self.mode)
        extra, failed = measure(trial)
        values.update(extra)
        notes.extend(failed)


def _operational(trajectory: Trajectory, config: ScoringConfig) -> dict[str, float | None]:
    prompt, completion = trajectory.prompt_tokens, trajectory.completion_tokens
    return {
        "steps": float(trajectory.steps),
        "latency_s": trajectory.latency_s,
        "tokens": float(prompt + completion),
        "cost_usd": prompt * config.usd_per_prompt_token
        + completion * config.usd_per_completion_token,
    }


def _score_casemill(
    ctx: CaseContext, t: Trajectory, config: ScoringConfig, semantic: bool, added: _Added
) -> CaseScore:
    calls = t.calls
    reply = t.final_reply or ""
    reply_lower = reply.lower()
    writes = m.write_set(ctx, calls)
    values: dict[str, float | None] = m.tool_metrics(ctx, calls, writes)
    values["param_accuracy"] = m.param_accuracy(ctx, calls)
    notes: list[str] = []
    hits = m.phrase_hits(ctx, reply_lower)
    if semantic and not all(hits):
        hits = _semantic_hits(ctx, reply, hits, config, notes)
    values["phrase_recall"] = sum(hits) / len(hits) if hits else None
    violations = m.forbidden_violations(ctx, calls, writes)
    excluded = m.excluded_found(ctx, reply_lower)
    values["forbidden_violations"] = float(len(violations))
    values["reply_excludes_violations"] = float(len(excluded))
    values["state_success"] = m.state_success(ctx, t)
    if ctx.state_check == "calls":
        values["off_script_calls"] = float(m.off_script_calls(calls))
    values["customer_turns"] = float(t.customer_turns)
    completed = t.completed
    values["completion"] = 1.0 if completed else 0.0
    values["efficiency"] = m.efficiency(ctx, t)
    values.update(_operational(t, config))
    if ctx.reference_reply is not None:
        _similarity(ctx.reference_reply, reply, values, notes)
    if ctx.replay_note:
        notes.append(ctx.replay_note)
    assertions = _assertions(t, completed, values, bool(violations), bool(excluded))
    success = all(assertions.values())
    values["task_success"] = 1.0 if success else 0.0
    added(t, values, notes)
    values["overall"] = _overall(values, config, bool(violations or excluded))
    failure = next((label for name, label in CHECKS if not assertions[name]), "none")
    return CaseScore.model_construct(
        case_id=t.case_id,
        trial=t.trial,
        agent=t.agent,
        mode="casemill",
        metrics=values,
        assertions=assertions,
        labels={"failure": failure, "state_check": ctx.state_check or "none"},
        task_success=success,
        violations=tuple(violations) + tuple(f"excluded phrase {p!r} in reply" for p in excluded),
        notes=tuple(notes),
        error=t.error,
        error_kind=t.error_kind,
        format=1,
    )


def _assertions(
    t: Trajectory, completed: bool, values: dict, violated: bool, excluded: bool
) -> dict[str, bool]:
    return {
        # an agent fault (unknown tool, malformed arguments) in a trial that ran on changed
        # nothing: the trial is judged by its calls, final state and reply like any other
        "no_error": not t.ended_in_error,
        "completed": completed,
        "no_forbidden_calls": not violated,
        "tools_called": values["tool_recall"] in (None, 1.0),
        "no_unexpected_tools": values["tool_precision"] in (None, 1.0),
        "params_match": values["param_accuracy"] in (None, 1.0),
        "state_matches": values["state_success"] in (None, 1.0),
        "phrases_present": values["phrase_recall"] in (None, 1.0),
        "no_excluded_phrases": not excluded,
    }


def _score_chapter(
    ctx: CaseContext, t: Trajectory, config: ScoringConfig, added: _Added
) -> CaseScore:
    values: dict[str, float | None] = dict(
        chapter_metrics(t.final_reply or "", t.calls, ctx.expected_calls, ctx.phrases)
    )
    values.update(_operational(t, config))
    notes: list[str] = []
    added(t, values, notes)
    success = values["task_success"] == 1.0
    assertions = {
        "expected_calls_present": values["param_accuracy"] == 1.0,
        "phrases_present": values["phrase_recall"] == 1.0,
    }
    failure = next((name for name, ok in assertions.items() if not ok), "none")
    return CaseScore.model_construct(
        case_id=t.case_id,
        trial=t.trial,
        agent=t.agent,
        mode="chapter",
        metrics=values,
        assertions=assertions,
        labels={"failure": failure},
        task_success=success,
        violations=(),
        notes=tuple(notes),
        error=t.error,
        error_kind=t.error_kind,
        format=1,
    )


def _overall(values: dict[str, Any], config: ScoringConfig, violated: bool) -> float | None:
    if violated and config.zero_on_violation:
        return 0.0
    total = weight = 0.0
    for name, w in config.weights.items():
        value = values.get(name)
        if value is not None and w:
            total += w * value
            weight += w
    return total / weight if weight else None


def _semantic_hits(
    ctx: CaseContext, reply: str, hits: list[bool], config: ScoringConfig, notes: list[str]
) -> list[bool]:
    if not similarity.embeddings_available():
        notes.append(similarity.SEMANTIC_MISSING)
        return hits
    out = []
    for phrase, hit in zip(ctx.phrases, hits, strict=True):
        found = hit or bool(
            similarity.phrase_meaning_found(phrase, reply, config.semantic_threshold)
        )
        out.append(found)
    return out


def _similarity(reference: str, reply: str, values: dict, notes: list[str]) -> None:
    values["rouge_l"] = similarity.rouge_l(reference, reply)
    values["bleu"] = similarity.bleu(reference, reply)
    if similarity.embeddings_available():
        values["embedding_similarity"] = similarity.embedding_similarity(reference, reply)
    else:
        notes.append(similarity.EMBEDDING_MISSING)
