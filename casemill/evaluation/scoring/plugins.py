"""Metrics from plugins: a package's own per-trial measure, computed on every trial beside
Casemill's and reported the same way (each trial's `metrics`, the run's means with intervals,
the metric versions, gate rules).

A metric is an object (or a class made without arguments) declared under the
`casemill.metrics` entry points:

    class Polite:
        name = "polite"
        version = "1"                # bump when old values stop being comparable
        higher_is_better = True      # optional (default True)
        unit = "ratio"               # optional: ratio (0..1, the default), count, seconds, ...
        description = "the reply says please"   # optional

        def __call__(self, trial):   # a `Trial`: the case, the trajectory, the built-in values
            return 1.0 if "please" in (trial.trajectory.final_reply or "").lower() else 0.0

A metric answers a number, or None where it does not apply (a mean skips it). One that raises
or answers something else gives None on that trial and a note naming it: a failure is data, it
does not stop the run. Plugin metrics are computed after task success and before `overall`, so
a weight in the scoring config can count them; they never change task success.

Casemill's own metrics are declared in the same group (`casemill.evaluation.scoring.registry
:BUILT_IN`); the scorer computes them together, since they share their intermediate results.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from casemill import plugins
from casemill.errors import UserError
from casemill.loading import raised

if TYPE_CHECKING:
    from casemill.case.model import Case
    from casemill.evaluation.scoring.context import CaseContext
    from casemill.evaluation.trajectory import Trajectory

PLUGIN_KIND = "metric"


@dataclass(frozen=True)
class Trial:
    """What a metric sees of one trial: the case, what the agent did, the case's scoring
    context (expected calls and tools, phrases, the replayed expected state) and the values of
    the built-in metrics on this trial (`task_success` included)."""

    case: Case
    trajectory: Trajectory
    context: CaseContext
    metrics: Mapping[str, float | None]
    mode: str


class Metric(Protocol):
    """A per-trial metric: a name, a version, and a function of one `Trial` to a value."""

    name: str
    version: str

    def __call__(self, trial: Trial) -> float | None: ...


def plugin_metrics() -> list[Any]:
    """The metrics installed packages (or `plugins.register`) add, by name; Casemill's own
    are left out (the scorer computes them)."""
    return [plugins.get(PLUGIN_KIND, name) for name in plugins.added(PLUGIN_KIND)]


def check_metric(obj: Any, plugin: plugins.Plugin) -> Any:
    """The `casemill.plugins` check of the metric kind: the Protocol's members, a version that
    is a non-empty string, a name equal to the entry point's."""
    missing = plugins.lacks(obj, Metric)
    if missing:
        raise UserError(
            f"{plugin.who} is not a Metric (casemill.evaluation.scoring.plugins.Metric): it "
            f"lacks {', '.join(missing)}"
        )
    if not isinstance(obj.version, str) or not obj.version:
        raise UserError(
            f'{plugin.who}: version is {obj.version!r}; give it a version string ("1") to bump '
            "when its old values stop being comparable"
        )
    if obj.name != plugin.name:
        raise UserError(
            f"{plugin.who} calls itself {obj.name!r}; the two must be the same (reports name "
            "the metric by it)"
        )
    return obj


def measure(trial: Trial) -> tuple[dict[str, float | None], list[str]]:
    """Every plugin metric's value on `trial`, and a note for each that failed."""
    values: dict[str, float | None] = {}
    notes: list[str] = []
    for metric in plugin_metrics():
        try:
            value = metric(trial)
        except Exception as exc:
            values[metric.name] = None
            notes.append(f"metric {metric.name!r} raised {raised(exc)}")
            continue
        values[metric.name] = _number(value)
        if value is not None and values[metric.name] is None:
            notes.append(f"metric {metric.name!r} answered {value!r}, not a number: left out")
    return values, notes


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None
