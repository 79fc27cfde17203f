"""The `evaluate-agent` flow: the agent under test on a corpus, scored, reported and gated.

Cases are cut into batches, one Prefect task a batch (not a task a case; a batch travels as
JSON Lines text, so Prefect does not walk every case looking for futures), each running the
library's resumable runner into its own folder under `RUN_DIR/batches/`; a killed run resumes
from what those folders hold. Scoring, reports and the gate are the library's `evaluate_run`.
The flow fails when the gate fails, and when no trial could be scored (every one ended in an
error: the agent was not reached, timed out, ...); errors of some trials are logged as a warning.
A scheduled run writes a folder of its own with `run_dir` holding `{date}` (`runs/nightly/{date}`):
into the same folder, it would resume from the last night's trajectories instead of running the
agent again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.utilities.annotations import quote

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.evaluation.trajectory import Trajectory
from casemill.flows import _artifacts as artifacts
from casemill.flows._logging import not_user_error
from casemill.flows._runtime import batches, default_task_runner, fill_dates
from casemill.text import count


class GateFailed(UserError):
    """The release gate failed; the report names the failing rules and cases."""


def load_cases_for_eval(cases: str) -> list[Case]:
    return load_case_input(cases).cases


def load_case_input(cases: str) -> Any:
    """The cases with what they came from (`CaseInput`); any invalid record fails the flow."""
    from casemill.evaluation.scoring.inputs import load_eval_cases

    loaded = load_eval_cases(cases)
    if loaded.bad:
        first = loaded.bad[0]
        raise UserError(
            f"{first.file}:{first.line}: {len(loaded.bad)} invalid case records; first: {first.reasons[0]} (run 'casemill validate {cases}')"
        )
    if not loaded.cases:
        raise UserError(f"{cases}: no cases to evaluate")
    return loaded


def check_agent(agent: str, temperature: float | None = None) -> dict[str, Any]:
    """Fail fast on an agent spec that cannot be loaded (unknown built-in, bad module path, a
    temperature for an agent that takes none); the agent's settings, for the summary."""
    from casemill.evaluation.agents import agent_settings, load_agent

    return agent_settings(load_agent(agent, temperature=temperature))


def dated_run_dir(run_dir: str) -> str:
    """`run_dir` with `{date}` (2026-11-23) and `{datetime}` (20261123T040000Z) filled in from
    the flow run's scheduled start, in UTC (the time now outside a flow run)."""
    return fill_dates(run_dir, "run_dir")


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
    """Fail before the agent runs on what would otherwise fail after it (a bad gate file or
    baseline run is only read when scoring) or inside every batch task (bad numbers)."""
    from casemill.evaluation.gate import load_gate
    from casemill.evaluation.gate_checks import check_embeddings, check_judge, check_trials
    from casemill.evaluation.report.results import load_baseline
    from casemill.evaluation.similarity import embeddings_available

    for name, value in (
        ("trials", trials),
        ("concurrency", concurrency),
        ("batch_size", batch_size),
        ("max_steps", max_steps),
    ):
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


@task(
    name="run-agent-batch",
    retries=2,
    retry_delay_seconds=[2, 10],
    retry_condition_fn=not_user_error,
    cache_policy=NO_CACHE,
)
def run_batch(
    agent: str,
    cases_jsonl: str,
    batch_dir: str,
    trials: int,
    concurrency: int,
    timeout_s: float,
    max_steps: int,
    rerun_failed: bool = False,
    temperature: float | None = None,
) -> list[Trajectory]:
    """One batch of cases, given as JSON Lines text: a string crosses to a Dask worker as is,
    and Prefect does not walk it looking for futures (it would visit every field of every case)."""
    from casemill.evaluation.agents import load_agent
    from casemill.evaluation.runner import run

    return run(
        load_agent(agent, temperature=temperature),
        [Case.model_validate_json(line) for line in cases_jsonl.splitlines()],
        Path(batch_dir),
        trials=trials,
        concurrency=concurrency,
        timeout_s=timeout_s,
        max_steps=max_steps,
        rerun_failed=rerun_failed,
    )


@task(name="score-and-report", cache_policy=NO_CACHE)
def score_run(
    run_dir: str,
    cases: list[Case],
    trajectories: list[Trajectory],
    baseline: str | None,
    gate: str | None,
    seed: int,
    case_set: Any = None,
    agent_settings: dict[str, Any] | None = None,
) -> Any:
    from casemill.evaluation.scoring.pipeline import evaluate_run

    return evaluate_run(
        Path(run_dir),
        cases,
        trajectories,
        baseline_dir=Path(baseline) if baseline else None,
        gate_path=Path(gate) if gate else None,
        seed=seed,
        case_set=case_set,
        agent_settings=agent_settings,
    )


def gate_markdown(verdict: Any, agent: str) -> str:
    """The gate's verdict as the flow's artifact: each failed rule with its slice, what failed
    (the message the CLI prints) and the cases it names."""
    lines = [f"# Gate: {'passed' if verdict.passed else 'FAILED'} ({agent})", ""]
    for f in verdict.failures:
        named = f"; {count(len(f.case_ids), 'case')}: {f.cases_shown()}" if f.case_ids else ""
        lines.append(f"- {f.rule} (slice: {f.slice}): {f.message}{named}")
    return "\n".join(lines)


def publish(outcome: Any, agent: str) -> None:
    from casemill.evaluation.scoring.caseset import describe

    summary = outcome.summary
    rows = [
        {"metric": name, "mean": round(stat.mean, 4) if stat.mean is not None else None}
        for name, stat in sorted(summary.metrics.items())
    ]
    rows.insert(0, {"metric": "task_success_rate", "mean": summary.task_success_rate})
    artifacts.table(
        f"eval-summary-{agent}",
        rows,
        f"{agent}: {count(summary.cases, 'case')} x {count(summary.trials, 'trial')}, "
        f"{count(summary.errors, 'error')}; "
        f"cases: {describe(summary.case_set)}",
    )
    verdict = outcome.verdict
    if verdict is not None:
        artifacts.markdown(f"gate-{agent}", gate_markdown(verdict, agent), "release gate verdict")
    if "report" in outcome.paths:
        artifacts.link(f"report-{agent}", outcome.paths["report"], "HTML report")


@flow(name="evaluate-agent", task_runner=default_task_runner())
def evaluate_agent(
    agent: str = "reference",
    cases: str = "corpus",
    run_dir: str = "runs/latest",
    trials: int = 1,
    concurrency: int = 8,
    batch_size: int = 250,
    timeout_s: float = 60.0,
    max_steps: int = 20,
    baseline: str | None = None,
    gate: str | None = None,
    fail_on_gate: bool = True,
    seed: int = 0,
    rerun_failed: bool = False,
    temperature: float | None = None,
) -> dict[str, Any]:
    """Run `agent` on `cases` (a corpus folder or JSONL), score, report, gate. A run into a
    `run_dir` that holds an earlier run of the same agent does only what is missing, and with
    `rerun_failed` also the trials that ended in an error (`casemill eval --rerun-failed`);
    `{date}` or `{datetime}` in `run_dir` give each (scheduled) run a folder of its own;
    `temperature` is an `openai:MODEL` agent's sampling temperature (default 0)."""
    logger = get_run_logger()
    settings = check_agent(agent, temperature)
    loaded = load_case_input(cases)
    case_list = loaded.cases
    check_run_inputs(
        case_list, trials=trials, concurrency=concurrency, batch_size=batch_size,
        timeout_s=timeout_s, max_steps=max_steps, baseline=baseline, gate=gate,
    )  # fmt: skip
    root = Path(dated_run_dir(run_dir))
    chunks = batches(case_list, batch_size)
    logger.info(
        "evaluating %s on %s x %s in %s",
        agent,
        count(len(case_list), "case"),
        count(trials, "trial"),
        count(len(chunks), "batch", "batches"),
    )
    progress = artifacts.ProgressArtifact(len(chunks), f"{agent}: batches run")
    futures = [
        run_batch.submit(
            agent,
            "\n".join(c.model_dump_json() for c in chunk),
            str(root / "batches" / f"b{i:04d}"),
            trials,
            concurrency,
            timeout_s,
            max_steps,
            rerun_failed,
            temperature,
        )
        for i, chunk in enumerate(chunks)
    ]
    by_batch: dict[int, list[Trajectory]] = {}
    index = {id(f): i for i, f in enumerate(futures)}
    for future in as_completed(futures):
        by_batch[index[id(future)]] = future.result()
        progress.advance()
    trajectories = [t for i in sorted(by_batch) for t in by_batch[i]]
    outcome = score_run(
        str(root),
        quote(case_list),
        quote(trajectories),
        baseline,
        gate,
        seed,
        loaded.case_set(),
        settings,
    )
    publish(outcome, agent)
    summary = outcome.summary
    case_note = summary.comparison.case_note if summary.comparison else ""
    if case_note:
        logger.warning("%s: %s", agent, case_note)
    logger.info(
        "%s: task success %.3f over %s (%s); report %s",
        agent,
        summary.task_success_rate or 0.0,
        count(summary.results, "result"),
        count(summary.errors, "error"),
        root / "report.html",
    )
    from casemill.evaluation.scoring.errors import (
        check_scored,
        describe_errors,
        describe_faults,
        what_to_check,
    )

    check_scored(
        outcome.scores,
        f"{what_to_check(outcome.scores)}, then run the flow again with rerun_failed=true "
        f"to redo them; every trial is in {root / 'report.html'}",
    )
    errors = describe_errors(outcome.scores)
    if errors is not None:  # some trials were scored, these were not
        logger.warning("%s: %s", agent, errors)
    faults = describe_faults(outcome.scores)
    if faults is not None:  # the agent's own mistakes, in trials that were scored
        logger.info("%s: agent faults: %s", agent, faults)
    result = {
        "agent": agent,
        "run_dir": str(root),
        "task_success_rate": summary.task_success_rate,
        "cases": summary.cases,
        "case_set": summary.case_set.model_dump(mode="json") if summary.case_set else None,
        "case_note": case_note,
        "errors": summary.errors,
        "gate_passed": None if outcome.verdict is None else outcome.verdict.passed,
    }
    if fail_on_gate and outcome.verdict is not None and not outcome.verdict.passed:
        raise GateFailed(f"gate failed for {agent}: see {root / 'report.html'}")
    return result
