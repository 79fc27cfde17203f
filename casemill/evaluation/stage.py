"""The evaluate stage: an agent run on cases, every trial scored, the reports written, gated.

`run_evaluate(request)` is what `casemill eval` calls; the `evaluate-agent` flow calls the same
pieces, one Prefect task a batch: `plan_evaluate` checks the inputs (before the agent runs) and
cuts the cases into batches, `run_part` runs one batch with the resumable runner into its own
folder, and `finish_evaluate` scores the trajectories, writes the reports into the run folder
and checks the gate (`evaluate_run`). Without a `batch_size` the cases are one batch run in the
run folder itself, as `casemill eval` has always done; with one, each batch runs in
`RUN/batches/bNNNN`, as the flow does.

The gate failing is an outcome (`EvaluateOutcome.gate_failed`), not an error: the command exits
1 on it and the flow fails. A run in which no trial could be scored is one too
(`check_unscored` raises `NothingScored` with what to do).

Example:
    >>> request = EvaluateRequest(agent="reference", cases=Path("corpus"), output=Path("runs/r"))
    >>> outcome = run_evaluate(request)  # doctest: +SKIP
    >>> outcome.summary.task_success_rate, outcome.gate_failed  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from casemill.case.model import DEFAULT_CUSTOMER_TURNS, Case
from casemill.errors import UserError
from casemill.evaluation.trajectory import Trajectory
from casemill.text import count

log = logging.getLogger(__name__)

Caller = Literal["cli", "flow"]
Progress = Callable[[int, int], None]
Warn = Callable[[str, str], None]


@dataclass(frozen=True)
class EvaluateRequest:
    """Everything a run reads and writes, and its knobs (`casemill eval`'s options). `output` is
    the run folder (resumable); `batch_size` None runs the cases as one batch in it; `caller`
    says how the errors name the settings and how invalid case records are met: the command
    (`--trials`) sets them aside in `quarantine.jsonl` and runs the rest, the flow (`trials`)
    refuses the run, as a scheduled run on a damaged corpus must fail where someone looks."""

    agent: str
    cases: Path | str  # as given: the summary records the path the cases came from
    output: Path
    trials: int = 1
    concurrency: int = 8
    timeout: float = 60.0
    max_steps: int = 20
    temperature: float | None = None
    baseline: Path | str | None = None
    gate: Path | str | None = None
    rerun_failed: bool = False
    mode: str = "casemill"
    judge: bool = False
    human_labels: Path | None = None
    rubric: Path | None = None
    scoring: Path | None = None
    seed: int = 0
    batch_size: int | None = None
    caller: Caller = "cli"
    # the simulated customer: scripted (None), or played by this model (`--user-model`)
    user_model: str | None = None
    max_customer_turns: int = DEFAULT_CUSTOMER_TURNS
    filters: tuple[str, ...] = ()  # KEY=VALUE[,VALUE...] (`selection.parse_filter`)
    sample: int | None = None  # a stratified sample of this many cases (by operator, `seed`)
    limit: int | None = None  # the first this many cases left


@dataclass(frozen=True)
class EvaluateBatch:
    """Cases run together by one call of the runner, into `run_dir`."""

    index: int
    cases: tuple[Case, ...]
    run_dir: Path


@dataclass(frozen=True)
class EvaluatePlan:
    """The checked inputs of a run: the cases and what they came from, the scoring config,
    the agent's settings (for the summary), the judge (None without `--judge`), the notes of
    what was skipped, and the batches."""

    cases: tuple[Case, ...]
    case_set: Any
    config: Any
    agent_settings: dict[str, Any]
    batches: tuple[EvaluateBatch, ...]
    judge: Any = None
    notes: tuple[str, ...] = ()
    endpoint: str | None = None


@dataclass(frozen=True)
class EvaluateOutcome:
    """What a run wrote and measured: the summary (as summary.json), the gate's verdict (None
    without a gate), every trial's score, and the paths of the reports."""

    agent: str
    run_dir: Path
    summary: Any
    verdict: Any
    scores: tuple[Any, ...] = field(default=(), repr=False)
    paths: dict[str, Path] = field(default_factory=dict)

    @property
    def gate_failed(self) -> bool:
        return self.verdict is not None and not self.verdict.passed

    def as_dict(self) -> dict[str, Any]:
        """The figures the flow returns (JSON-friendly)."""
        summary = self.summary
        return {
            "agent": self.agent,
            "run_dir": str(self.run_dir),
            "task_success_rate": summary.task_success_rate,
            "cases": summary.cases,
            "case_set": summary.case_set.model_dump(mode="json") if summary.case_set else None,
            "case_note": summary.comparison.case_note if summary.comparison else "",
            "errors": summary.errors,
            "gate_passed": None if self.verdict is None else self.verdict.passed,
        }


def plan_evaluate(request: EvaluateRequest, *, warn: Warn | None = None) -> EvaluatePlan:
    """Check everything that can be wrong with the input before the agent runs (each
    `UserError` says what to fix), load the cases, the agent and the judge, cut the batches.
    `warn(label, text)` is told of refused case records and of a judge skipped."""
    warn = warn or _log_warning
    if request.caller == "flow":
        settings = check_agent(request.agent, request.temperature)
        loaded = load_case_input(str(request.cases))
        size = 1 if request.batch_size is None else request.batch_size
        check_run_inputs(
            loaded.cases, trials=request.trials, concurrency=request.concurrency,
            batch_size=size, timeout_s=request.timeout, max_steps=request.max_steps,
            baseline=_str(request.baseline), gate=_str(request.gate),
        )  # fmt: skip
        judge, notes, config = None, (), None
    else:
        loaded, config, gate = _check_command_inputs(request, warn)
        settings = check_agent(request.agent, request.temperature)
        judge, notes = _judge(request, warn)
        if gate is not None and judge is None:  # --judge, but no endpoint to ask
            from casemill.evaluation.gate_checks import check_judge

            check_judge(gate, None, why="the judge is skipped (above); configure its endpoint")
    loaded, chosen = _select(request, loaded)
    settings = {**settings, **customer_settings(request)}
    cases = tuple(loaded.cases)
    return EvaluatePlan(
        cases=cases, case_set=loaded.case_set(), config=config, agent_settings=settings,
        batches=_batches(request, cases), judge=judge, notes=(*notes, *chosen),
        endpoint=agent_endpoint(request.agent, request.temperature),
    )  # fmt: skip


def _select(request: EvaluateRequest, loaded: Any) -> tuple[Any, tuple[str, ...]]:
    """The loaded cases narrowed to the request's filters, sample and limit (the case set the
    run records is then theirs), with the note saying how."""
    from dataclasses import replace

    from casemill.evaluation.selection import select_cases

    for name in ("sample", "limit"):
        value = getattr(request, name)
        if value is not None and value < 1:
            raise UserError(f"--{name} {value}: it must be at least 1")
    kept, note = select_cases(
        loaded.cases, filters=request.filters, sample=request.sample, limit=request.limit,
        seed=request.seed,
    )  # fmt: skip
    if not note:
        return loaded, ()
    return replace(loaded, cases=kept), (note,)


def _batches(request: EvaluateRequest, cases: tuple[Case, ...]) -> tuple[EvaluateBatch, ...]:
    if request.batch_size is None:
        return (EvaluateBatch(0, cases, request.output),)
    size = request.batch_size
    starts = range(0, len(cases), size)
    return tuple(
        EvaluateBatch(i, cases[start : start + size], request.output / "batches" / f"b{i:04d}")
        for i, start in enumerate(starts)
    )


def run_part(
    request: EvaluateRequest,
    cases: Sequence[Case],
    run_dir: Path,
    *,
    progress: Progress | None = None,
) -> list[Trajectory]:
    """Run the agent on one batch of cases into `run_dir` (a re-run goes on from what it
    holds; with `rerun_failed`, also redoes the trials that ended in an error)."""
    from casemill.evaluation.agents import load_agent
    from casemill.evaluation.runner import run

    return run(
        load_agent(request.agent, temperature=request.temperature),
        list(cases),
        Path(run_dir),
        trials=request.trials,
        concurrency=request.concurrency,
        timeout_s=request.timeout,
        max_steps=request.max_steps,
        rerun_failed=request.rerun_failed,
        progress=progress or False,
        customer=load_customer(request.user_model),
        max_customer_turns=request.max_customer_turns,
    )


def load_customer(user_model: str | None) -> Any:
    """The simulated customer of a run: scripted, or played by `user_model` on the configured
    endpoint (`EndpointNotConfigured`, a `UserError`, says what to set when there is none)."""
    from casemill.evaluation.customer import ScriptedCustomer

    if not user_model:
        return ScriptedCustomer()
    from casemill.evaluation.customer_llm import LLMCustomer

    return LLMCustomer.from_settings(user_model)


def customer_settings(request: EvaluateRequest) -> dict[str, Any]:
    """The simulated customer, for the run's provenance (the summary's agent settings), when it
    is not the default (scripted, 10 turns): the model and its prompt's hash, the maximum."""
    customer = load_customer(request.user_model)  # fails now when its endpoint is missing
    out: dict[str, Any] = {}
    if request.user_model:
        out = {"customer": customer.name, "customer_prompt_hash": customer.prompt_hash}
    if request.max_customer_turns != DEFAULT_CUSTOMER_TURNS:
        out["max_customer_turns"] = request.max_customer_turns
    return out


def finish_evaluate(
    request: EvaluateRequest, plan: EvaluatePlan, trajectories: Sequence[Trajectory]
) -> EvaluateOutcome:
    """Score every trajectory, compare with the baseline, check the gate, and write
    results.jsonl, summary.json, report.html and summary.md into the run folder."""
    from casemill.evaluation.scoring.pipeline import evaluate_run

    outcome = evaluate_run(
        request.output, plan.cases, trajectories, baseline_dir=_path(request.baseline),
        gate_path=_path(request.gate), judge=plan.judge,
        mode=request.mode,  # type: ignore[arg-type]
        config=plan.config, seed=request.seed, case_set=plan.case_set,
        agent_settings=plan.agent_settings, notes=plan.notes, endpoint=plan.endpoint,
    )  # fmt: skip
    found = (outcome.summary, outcome.verdict, outcome.scores, outcome.paths)
    return EvaluateOutcome(request.agent, request.output, *found)


def run_evaluate(
    request: EvaluateRequest,
    *,
    progress: Progress | None = None,
    warn: Warn | None = None,
    announce: Callable[[EvaluatePlan], None] | None = None,
) -> EvaluateOutcome:
    """Check, run batch by batch, score, report and gate: `casemill eval` in one call.
    `announce(plan)` is told what will run before the agent is called; `progress(done, total)`
    as trials finish."""
    plan = plan_evaluate(request, warn=warn)
    if announce is not None:
        announce(plan)
    trajectories: list[Trajectory] = []
    before = [0, 0]  # trials done and to do in the batches run already
    for batch in plan.batches:
        tick = None if progress is None else _offset(progress, before)
        trajectories += run_part(request, batch.cases, batch.run_dir, progress=tick)
        before[0] = before[1] = len(trajectories)
    return finish_evaluate(request, plan, trajectories)


def _offset(progress: Progress, before: list[int]) -> Progress:
    return lambda done, total: progress(before[0] + done, before[1] + total)


def check_unscored(request: EvaluateRequest, outcome: EvaluateOutcome) -> None:
    """`NothingScored` when no trial could be scored (a gate cannot pass such a run), ending
    with what to do: where the trials are and how to run them again."""
    from casemill.evaluation.scoring.errors import check_scored, what_to_check

    scores, output = outcome.scores, request.output
    if request.caller == "flow":
        hint = (
            f"{what_to_check(scores)}, then run the flow again with rerun_failed=true "
            f"to redo them; every trial is in {output / 'report.html'}"
        )
    else:
        hint = (
            f"{what_to_check(scores)}; every trial is in {output / 'results.jsonl'}, and "
            f"'casemill eval ... -o {output} --rerun-failed' runs them again"
        )
    check_scored(scores, hint)


def _log_warning(label: str, text: str) -> None:
    log.warning("%s %s", label, text)


def _str(path: Path | str | None) -> str | None:
    return None if path is None else str(path)


def _path(path: Path | str | None) -> Path | None:
    return Path(path) if path else None


def check_agent(agent: str, temperature: float | None = None) -> dict[str, Any]:
    """Fail fast on an agent spec that cannot be loaded (unknown built-in, bad module path, a
    temperature for an agent that takes none); the agent's settings, for the summary."""
    from casemill.evaluation.agents import agent_settings, load_agent

    return agent_settings(load_agent(agent, temperature=temperature))


def agent_endpoint(agent: str, temperature: float | None = None) -> str | None:
    """The endpoint an agent talks to (an `openai:MODEL` agent's base URL, without any
    credentials in it), or None for an agent that has none to tell."""
    from casemill.evaluation.agents import load_agent

    loaded = load_agent(agent, temperature=temperature)
    base_url = getattr(getattr(loaded, "endpoint", None), "base_url", None)
    return shown_url(base_url) if isinstance(base_url, str) and base_url else None


def shown_url(url: str) -> str:
    """`url` without any user name, password, query or fragment it carries (a key may ride in
    any of them: `?api-key=...`); they never reach a report."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if not parts.netloc:
        return url
    netloc = parts.netloc.rpartition("@")[2]  # the host and port as written ([::1] keeps [])
    return urlunsplit(parts._replace(netloc=netloc, query="", fragment=""))


def load_case_input(cases: str) -> Any:
    """The cases with what they came from (`CaseInput`); any invalid record fails the run."""
    from casemill.evaluation.scoring.inputs import load_eval_cases

    loaded = load_eval_cases(cases)
    if loaded.bad:
        first = loaded.bad[0]
        raise UserError(
            f"{first.file}:{first.line}: {len(loaded.bad)} invalid case records; first: "
            f"{first.reasons[0]} (run 'casemill validate {cases}')"
        )
    if not loaded.cases:
        raise UserError(f"{cases}: no cases to evaluate")
    return loaded


def load_cases_for_eval(cases: str) -> list[Case]:
    return load_case_input(cases).cases


def check_run_inputs(
    case_list: list[Case],
    *,
    trials: int = 1,
    concurrency: int = 8,
    batch_size: int = 250,
    timeout_s: float = 60.0,
    max_steps: int = 20,
    baseline: str | None = None,
    gate: str | None = None,
) -> None:
    """The flow's checks: fail before the agent runs on what would otherwise fail after it (a
    bad gate file or baseline run is only read when scoring) or inside every batch (bad
    numbers). The messages name the flow's parameters."""
    from casemill.evaluation.gate import load_gate
    from casemill.evaluation.gate_checks import check_embeddings, check_judge, check_trials
    from casemill.evaluation.report.results import load_baseline
    from casemill.evaluation.similarity import embeddings_available

    numbers = {"trials": trials, "concurrency": concurrency, "batch_size": batch_size}
    for name, value in {**numbers, "max_steps": max_steps}.items():
        if value < 1:
            raise UserError(f"parameter '{name}' is {value}; it must be at least 1")
    if timeout_s <= 0:
        raise UserError(f"parameter 'timeout_s' is {timeout_s}; it must be above 0")
    loaded = load_gate(gate) if gate else None
    if loaded is not None:
        check_trials(loaded, trials, option="trials =")
        check_judge(loaded, None, why="the evaluate flow runs no judge (`casemill eval --judge`)")
        check_embeddings(loaded, embeddings_available())
    if baseline:
        base = load_baseline(baseline, (c.id for c in case_list))
        if loaded is not None:
            check_trials(loaded, trials, baseline=base, baseline_name=f"baseline {baseline}")


def _check_gate(request: EvaluateRequest) -> Any:
    """The gate, if any, with its rules checked against what the run will measure."""
    from casemill.evaluation.gate import load_gate
    from casemill.evaluation.gate_checks import (
        check_embeddings,
        check_judge,
        check_mode,
        check_trials,
    )
    from casemill.evaluation.judge import DEFAULT_RUBRIC, load_rubric
    from casemill.evaluation.similarity import embeddings_available

    if request.gate is None:
        return None
    gate = load_gate(Path(request.gate))
    check_trials(gate, request.trials)
    check_mode(gate, request.mode)
    check_embeddings(gate, embeddings_available())
    criteria = None
    if request.judge:
        rubric = load_rubric(request.rubric) if request.rubric is not None else DEFAULT_RUBRIC
        criteria = [c.name for c in rubric]
    check_judge(gate, criteria)
    return gate


def _check_baseline_dir(request: EvaluateRequest) -> None:
    from casemill.evaluation.report.results import load_run

    if request.baseline is None:
        return
    if Path(request.baseline).resolve() == request.output.resolve():
        # the run rewrites results.jsonl and summary.json there: the baseline would be lost
        raise UserError(
            f"--baseline {request.baseline} is the run directory -o {request.output}: this run "
            "would overwrite the baseline's results; write the run to another directory"
        )
    load_run(request.baseline)  # a bad run directory is said before the cases are read


def _check_command_inputs(request: EvaluateRequest, warn: Warn) -> tuple[Any, Any, Any]:
    """`casemill eval`'s checks, before the agent runs; refused case records are set aside in
    the run folder's quarantine file (and `warn` told) and the others run."""
    from casemill.evaluation.gate_checks import check_trials
    from casemill.evaluation.report.results import load_baseline
    from casemill.evaluation.scoring.inputs import load_eval_cases, quarantine
    from casemill.evaluation.scoring.registry import ScoringConfig, load_scoring_config

    if request.mode not in ("casemill", "chapter"):
        raise UserError(f"--mode {request.mode!r}: use 'casemill' or 'chapter'")
    if not request.judge and (request.human_labels or request.rubric):  # ignored, silently
        given = "--human-labels" if request.human_labels else "--rubric"
        raise UserError(f"{given} is for the LLM judge only: add --judge")
    gate = _check_gate(request)
    _check_baseline_dir(request)
    config = load_scoring_config(request.scoring) if request.scoring else ScoringConfig()
    loaded = load_eval_cases(request.cases)
    if loaded.bad:
        where = quarantine(request.output, loaded.bad)
        refused = count(len(loaded.bad), "case record")
        warn(f"{refused} refused", f"(reasons in {where}); first: {loaded.bad[0].reasons[0]}")
    if not loaded.cases:
        raise UserError(f"{request.cases}: no valid cases to run")
    if request.baseline is not None:
        baseline = load_baseline(request.baseline, (c.id for c in loaded.cases))
        if gate is not None:
            name = f"--baseline {request.baseline}"
            check_trials(gate, request.trials, baseline=baseline, baseline_name=name)
    return loaded, config, gate


def _judge(request: EvaluateRequest, warn: Warn) -> tuple[Any, tuple[str, ...]]:
    """The judge `--judge` asks for, or None; and, when it is skipped for want of an endpoint,
    the note saying so (told to `warn` now, and kept in the summary's notes)."""
    if not request.judge:
        return None, ()
    from casemill.errors import EndpointNotConfigured
    from casemill.evaluation.judge import (
        DEFAULT_RUBRIC,
        Judge,
        load_human_labels,
        load_rubric,
        skipped_note,
    )
    from casemill.llm import LLMEndpoint

    criteria = load_rubric(request.rubric) if request.rubric is not None else DEFAULT_RUBRIC
    names = [c.name for c in criteria]
    labels = request.human_labels
    human = load_human_labels(labels, names) if labels is not None else {}
    try:
        return Judge(LLMEndpoint.from_settings(), rubric=criteria, human_labels=human), ()
    except EndpointNotConfigured as exc:
        warn("judge skipped:", str(exc))
        return None, (skipped_note(exc),)
