"""The metrics Casemill reports, with their versions, directions and meaning.

Bump a metric's version when its old values stop being comparable with new ones (a changed
formula, a changed denominator); the versions land in every summary, so a comparison between two
runs can tell when it compares different things.

Each metric is declared under the `casemill.metrics` entry points (Casemill's own in its
`pyproject.toml`, pointing at `BUILT_IN`); `spec` also answers for a metric a package adds
(`casemill.evaluation.scoring.plugins`).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from casemill.errors import UserError


@dataclass(frozen=True)
class MetricSpec:
    name: str
    version: str
    higher_is_better: bool
    description: str
    unit: str = "ratio"  # ratio (0..1), count, seconds, tokens, usd

    def __call__(self, trial: Any) -> float | None:
        """This metric's value on `trial` (a `scoring.plugins.Trial`): the scorer computes the
        built-in metrics together, so the value is read from the trial's."""
        return trial.metrics.get(self.name)


_SPECS = (
    MetricSpec("task_success", "3", True, "every check below holds (see docs/reports.md)"),
    MetricSpec("tool_recall", "1", True, "expected tools executed / expected tools (set)"),
    MetricSpec(
        "tool_precision",
        "1",
        True,
        "expected tools among counted executed tools / counted executed tools (set); read "
        "tools count only when the case expects them",
    ),
    MetricSpec("tool_recall_multiset", "1", True, "like tool_recall, counting repeats"),
    MetricSpec("tool_precision_multiset", "1", True, "like tool_precision, counting repeats"),
    MetricSpec(
        "param_accuracy",
        "1",
        True,
        "expected calls matched one-to-one by a call of the same tool whose parameters match "
        "under the case's rules / expected calls",
    ),
    MetricSpec("phrase_recall", "1", True, "required phrases in the final reply / required"),
    MetricSpec("forbidden_violations", "1", False, "calls that hit a forbidden rule", "count"),
    MetricSpec(
        "reply_excludes_violations", "1", False, "excluded phrases in the final reply", "count"
    ),
    MetricSpec(
        "state_success",
        "2",
        True,
        "final state equals the replayed expected state (state_check replay); on recorded "
        "tools, the writes made equal the expected calls, one to one (state_check calls)",
    ),
    MetricSpec(
        "off_script_calls",
        "1",
        False,
        "calls on recorded tools that nothing was recorded for (told to the agent as errors)",
        "count",
    ),
    MetricSpec(
        "customer_turns", "1", False, "turns the simulated customer added to the episode", "count"
    ),
    MetricSpec(
        "completion",
        "3",
        True,
        "final reply given, no error, no give-up, no step limit, no customer-turn limit",
    ),
    MetricSpec("efficiency", "1", True, "min(1, optimal_steps / steps)"),
    MetricSpec("steps", "1", False, "tool calls plus the final reply", "count"),
    MetricSpec("latency_s", "1", False, "wall time of the trial", "seconds"),
    MetricSpec("tokens", "1", False, "prompt plus completion tokens", "tokens"),
    MetricSpec("cost_usd", "1", False, "tokens priced by the scoring config", "usd"),
    MetricSpec("overall", "2", True, "weighted mean of the configured metrics"),
    MetricSpec("rouge_l", "1", True, "ROUGE-L F1 of the reply against reference_reply"),
    MetricSpec("bleu", "1", True, "sentence BLEU / 100 of the reply against reference_reply"),
    MetricSpec(
        "embedding_similarity", "1", True, "cosine similarity (all-MiniLM-L6-v2) to the reference"
    ),
)

CHAPTER_VERSION = "chapter-1"
CHAPTER_METRICS = (
    "task_success",
    "tool_recall",
    "tool_precision",
    "param_accuracy",
    "phrase_recall",
)

# what every trial is measured on whatever the mode (steps, time, tokens, cost)
OPERATIONAL_METRICS = ("steps", "latency_s", "tokens", "cost_usd")

METRICS: dict[str, MetricSpec] = {s.name: s for s in _SPECS}
BUILT_IN = SimpleNamespace(**METRICS)  # what Casemill's `casemill.metrics` entry points name

JUDGE_PREFIX = "judge_"
_PASS_K = re.compile(r"pass\^(\d+)")


def pass_k_of(name: str) -> int | None:
    """k of a pass^k metric name (`pass^3` -> 3); None for any other name. `pass^0` gives 0,
    which a gate refuses (`pass^k` is for k of at least 1)."""
    found = _PASS_K.fullmatch(name)
    return int(found.group(1)) if found else None


def base_metric(name: str) -> str:
    """The per-trial metric `name` is computed from: task_success for pass^k, else `name`
    (whose version says whether two runs' values compare)."""
    return "task_success" if pass_k_of(name) is not None else name


def spec(name: str) -> MetricSpec | None:
    if name in METRICS:
        return METRICS[name]
    if name.startswith(JUDGE_PREFIX):
        return MetricSpec(name, "1", True, "LLM judge: share of trials the criterion held")
    if pass_k_of(name):
        return MetricSpec(
            name,
            METRICS["task_success"].version,
            True,
            "chance that k trials all succeed: per case C(c, k) / C(n, k), averaged",
        )
    return plugin_spec(name)


def plugin_spec(name: str) -> MetricSpec | None:
    """The spec of a metric an installed package declares (None when none does)."""
    from casemill import plugins

    found = plugins.find("metric", name) if name and name not in METRICS else None
    if found is None:
        return None
    return MetricSpec(
        name,
        found.version,
        bool(getattr(found, "higher_is_better", True)),
        str(getattr(found, "description", "") or (found.__doc__ or "").strip()),
        str(getattr(found, "unit", "ratio")),
    )


def higher_is_better(name: str) -> bool:
    found = spec(name)
    return True if found is None else found.higher_is_better


def versions(names: set[str] | list[str], mode: str) -> dict[str, str]:
    out = {}
    for name in sorted(names):
        if mode == "chapter" and name in CHAPTER_METRICS:
            out[name] = CHAPTER_VERSION
        else:
            found = spec(name)
            out[name] = found.version if found else "?"
    return out


DEFAULT_WEIGHTS: dict[str, float] = {
    "task_success": 0.4,
    "tool_recall": 0.1,
    "param_accuracy": 0.15,
    "phrase_recall": 0.1,
    "state_success": 0.15,
    "efficiency": 0.1,
}


class ScoringConfig(BaseModel):
    """Knobs of scoring that a team sets once: the weights of the overall score and prices."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    zero_on_violation: bool = Field(
        default=True, description="a forbidden call or excluded phrase sets overall to 0"
    )
    usd_per_prompt_token: float = Field(default=0.0, ge=0)
    usd_per_completion_token: float = Field(default=0.0, ge=0)
    semantic_threshold: float = Field(default=0.75, ge=0, le=1)


def load_scoring_config(path: str | Path) -> ScoringConfig:
    """A `ScoringConfig` from TOML (top-level keys as the model's fields, a [weights] table);
    a mistake raises `UserError` naming the file, the line and the field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as exc:
        raise UserError(f"{path}: cannot read the scoring config ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from exc
    try:
        config = ScoringConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err["loc"]]
        line = next(
            (
                n
                for n, row in enumerate(text.splitlines(), 1)
                if loc and row.strip().startswith(loc[-1])
            ),
            None,
        )
        where = f"{path}:{line}" if line else str(path)
        raise UserError(f"{where}: field '{'.'.join(loc)}': {err['msg']}") from exc
    _check_weights(config.weights, text, path)
    return config


def _check_weights(weights: dict[str, float], text: str, path: Path) -> None:
    """Weights name known metrics, none is negative (a negative weight turns the weighted mean
    into nonsense: `task_success = -1` alone gives overall 1 to every trial), and one is above 0
    (else overall is n/a everywhere)."""

    def where(name: str) -> str:
        line = next(
            (n for n, row in enumerate(text.splitlines(), 1) if re.match(rf"\s*{name}\s*=", row)),
            None,
        )
        return f"{path}:{line}" if line else str(path)

    unknown = sorted(n for n in weights if spec(n) is None)
    if unknown:
        raise UserError(f"{where(unknown[0])}: field 'weights': unknown metrics {unknown}")
    for name, weight in weights.items():
        if weight < 0:
            raise UserError(
                f"{where(name)}: field 'weights.{name}': a weight is 0 or more, not {weight:g}"
            )
    if weights and not any(weights.values()):
        raise UserError(f"{path}: field 'weights': every weight is 0; 'overall' needs one above 0")
