"""Typed results of scoring: one `CaseScore` per case and trial, and the `RunSummary` of a run.

Scores, assertions and labels are kept apart (as pydantic-evals does): `metrics` are numbers
(None where a metric does not apply to the case), `assertions` are named pass/fail checks,
`labels` are short strings (the first failing check, the scoring mode).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from casemill.evaluation.trajectory import NOT_COVERED

RESULTS_FORMAT = 1
# 2: `case_set`, what the run was evaluated on; 3: `agent_settings`; 4: pass^k rows among a
# comparison's deltas and `comparison.pass_k_note`; 5: `not_covered`; intervals of rates by
# Wilson's score method, of other means by scipy's bootstrap, each `Stat` naming its `method`;
# `endpoint`
SUMMARY_FORMAT = 5

Mode = Literal["casemill", "chapter"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CaseScore(_Frozen):
    """The score of one trial of one case."""

    format: int = RESULTS_FORMAT
    case_id: str
    trial: int = 0
    agent: str = ""
    mode: Mode = "casemill"
    metrics: dict[str, float | None] = Field(default_factory=dict)
    assertions: dict[str, bool] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    task_success: bool = False
    violations: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    error: str | None = None
    error_kind: str | None = None

    @property
    def covered(self) -> bool:
        """Whether the agent had a behaviour for the case (see `NOT_COVERED`): a trial that is
        not covered is counted apart, neither passed nor failed."""
        return self.error_kind != NOT_COVERED


class Stat(_Frozen):
    """A mean with its 95% confidence interval over cases."""

    mean: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    method: str = Field(
        default="",
        description="how the interval was found: 'wilson' (a rate: every value 0 or 1), "
        "'bootstrap' (scipy's, resampling cases), 'single value'; '' before format 5",
    )


class SliceRow(_Frozen):
    dimension: str
    value: str
    cases: int
    results: int
    task_success: Stat
    metrics: dict[str, float | None] = Field(default_factory=dict)


class FlakyCase(_Frozen):
    case_id: str
    passes: int
    trials: int
    flakiness: float = Field(description="1 - |2 * passes / trials - 1|: 0 steady, 1 a coin toss")


class FamilyConsistency(_Frozen):
    family: str
    members: int
    consistency: float = Field(description="share of members whose pass/fail equals the seed's")


class Consistency(_Frozen):
    families: int = 0
    mean: float | None = None
    worst: tuple[FamilyConsistency, ...] = ()


class Delta(_Frozen):
    metric: str
    baseline: float | None
    current: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    paired_cases: int
    higher_is_better: bool = True

    @property
    def significant_regression(self) -> bool:
        if self.ci_low is None or self.ci_high is None:
            return False
        return self.ci_high < 0 if self.higher_is_better else self.ci_low > 0


class Flip(_Frozen):
    case_id: str
    direction: Literal["pass->fail", "fail->pass"]
    baseline_rate: float
    current_rate: float


class CaseSet(_Frozen):
    """What a run was evaluated on: the case sources as given, the corpus version when they are
    a corpus folder, and a digest of the sorted content ids (same set, same digest)."""

    sources: tuple[str, ...] = Field(
        default=(), description="the --cases paths, relative to the working folder when inside it"
    )
    corpus_version: int | None = Field(
        default=None, description="the corpus manifest version the cases were read at"
    )
    corpus_sha256: str | None = Field(
        default=None, description="the manifest's active_sha256 (the cases' canonical lines)"
    )
    count: int = 0
    digest: str = Field(default="", description="sha256 of the sorted unique case ids, one a line")


class Comparison(_Frozen):
    baseline_agent: str = ""
    paired_cases: int = 0
    only_in_current: int = 0
    only_in_baseline: int = 0
    deltas: tuple[Delta, ...] = ()
    flips: tuple[Flip, ...] = ()
    not_comparable: tuple[str, ...] = Field(
        default=(), description="metrics left out: their versions differ between the runs"
    )
    pass_k_note: str = Field(
        default="",
        description="why the pass^k deltas are missing (a run without per-trial outcomes, or "
        "with 1 trial per case), stop below a run's trials (the other ran fewer) or left cases "
        "out (fewer than k trials in a run); '' otherwise",
    )
    case_note: str = Field(
        default="", description="set when the two runs' case sets differ: the counts and corpora"
    )
    baseline_case_set: CaseSet | None = None
    current_case_set: CaseSet | None = None


class GateFailure(_Frozen):
    rule: str
    slice: str
    metric: str
    value: float | None
    threshold: float | None
    case_ids: tuple[str, ...] = ()
    message: str = ""

    def cases_shown(self, most: int = 10) -> str:
        """The first `most` case ids, with " ..." when there are more (for terminal lines)."""
        return ", ".join(self.case_ids[:most]) + (" ..." if len(self.case_ids) > most else "")


class RuleResult(_Frozen):
    rule: str
    passed: bool
    value: float | None = None
    note: str = ""


class GateVerdict(_Frozen):
    gate: str = ""
    passed: bool
    failures: tuple[GateFailure, ...] = ()
    rules: tuple[RuleResult, ...] = ()


class RunSummary(_Frozen):
    """What a run came to. `per_case` (per-case means over trials) and `trial_success` are kept
    for comparisons and the gate; they are not written to summary.json but rebuilt from
    results.jsonl on load."""

    format: int = SUMMARY_FORMAT
    agent: str = ""
    agent_settings: dict[str, str | float | int | bool | None] = Field(
        default_factory=dict,
        description="the agent's configuration as run (openai:MODEL: model, temperature); "
        "empty when the agent has none to tell or the run predates format 3",
    )
    endpoint: str | None = Field(
        default=None,
        description="the URL the agent talked to (an openai:MODEL agent's endpoint); None when "
        "the agent has none to tell or the run predates format 5",
    )
    mode: Mode = "casemill"
    cases: int = 0
    case_set: CaseSet | None = Field(default=None, description="None: not recorded (format 1)")
    trials: int = 0
    results: int = 0
    errors: int = Field(
        default=0, description="trials that ended in an error (not counting agent faults)"
    )
    error_kinds: dict[str, int] = Field(
        default_factory=dict,
        description="trials with an error noted, by kind, agent faults (unknown_tool, "
        "malformed_tool_call) on trials that ran on included",
    )
    not_covered: tuple[str, ...] = Field(
        default=(),
        description="the cases the agent has no behaviour for (a recorded agent whose log holds "
        "no conversation for them), sorted: counted apart, in no rate, error or result above",
    )
    task_success_rate: float | None = None
    task_success: Stat = Field(default_factory=Stat)
    metrics: dict[str, Stat] = Field(default_factory=dict)
    pass_k: dict[str, float] = Field(default_factory=dict)
    convergence: float | None = None
    flaky: tuple[FlakyCase, ...] = ()
    consistency: Consistency = Field(default_factory=Consistency)
    slices: tuple[SliceRow, ...] = ()
    comparison: Comparison | None = None
    metric_versions: dict[str, str] = Field(default_factory=dict)
    notes: tuple[str, ...] = ()
    gate: GateVerdict | None = None
    seed: int = 0
    per_case: dict[str, dict[str, float | None]] = Field(default_factory=dict, exclude=True)
    trial_success: dict[str, tuple[bool, ...]] = Field(
        default_factory=dict,
        exclude=True,
        description="per case, task success of each trial in trial order (for pass^k rules of "
        "the gate); like per_case, rebuilt from results.jsonl on load",
    )

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    @property
    def settings_line(self) -> str | None:
        """`model m, temperature 0.7`: the agent's recorded settings in one line, or None."""
        if not self.agent_settings:
            return None
        return ", ".join(f"{k} {v}" for k, v in sorted(self.agent_settings.items()))
