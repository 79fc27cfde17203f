"""The `evaluate-agent` flow: the agent under test on a corpus, scored, reported and gated.

Cases are cut into batches, one Prefect task a batch (not a task a case; a batch travels as
JSON Lines text, so Prefect does not walk every case looking for futures), each running the
library's resumable runner into its own folder under `RUN_DIR/batches/`; a killed run resumes
from what those folders hold. The checks, the batches, scoring, reports and the gate are the
evaluate stage's (`casemill.evaluation.stage`, what `casemill eval` runs).
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
from casemill.evaluation.stage import (  # noqa: F401 - check_agent ... : their old home
    EvaluateOutcome,
    EvaluatePlan,
    EvaluateRequest,
    check_agent,
    check_run_inputs,
    check_unscored,
    finish_evaluate,
    load_case_input,
    load_cases_for_eval,
    plan_evaluate,
    run_part,
)
from casemill.evaluation.trajectory import Trajectory
from casemill.flows import _artifacts as artifacts
from casemill.flows._logging import not_user_error
from casemill.flows._runtime import default_task_runner, fill_dates
from casemill.text import count


class GateFailed(UserError):
    """The release gate failed; the report names the failing rules and cases."""


def dated_run_dir(run_dir: str) -> str:
    """`run_dir` with `{date}` (2026-11-23) and `{datetime}` (20261123T040000Z) filled in from
    the flow run's scheduled start, in UTC (the time now outside a flow run)."""
    return fill_dates(run_dir, "run_dir")


@task(
    name="run-agent-batch",
    retries=2,
    retry_delay_seconds=[2, 10],
    retry_condition_fn=not_user_error,
    cache_policy=NO_CACHE,
)
def run_batch(request: EvaluateRequest, cases_jsonl: str, batch_dir: str) -> list[Trajectory]:
    """One batch of cases (`casemill.evaluation.stage.run_part`), given as JSON Lines text: a
    string crosses to a Dask worker as is, and Prefect does not walk it looking for futures (it
    would visit every field of every case)."""
    cases = [Case.model_validate_json(line) for line in cases_jsonl.splitlines()]
    return run_part(request, cases, Path(batch_dir))


@task(name="score-and-report", cache_policy=NO_CACHE)
def score_run(
    request: EvaluateRequest, plan: EvaluatePlan, trajectories: list[Trajectory]
) -> EvaluateOutcome:
    return finish_evaluate(request, plan, trajectories)


def gate_markdown(verdict: Any, agent: str) -> str:
    """The gate's verdict as the flow's artifact: each failed rule with its slice, what failed
    (the message the CLI prints) and the cases it names."""
    lines = [f"# Gate: {'passed' if verdict.passed else 'FAILED'} ({agent})", ""]
    for f in verdict.failures:
        named = f"; {count(len(f.case_ids), 'case')}: {f.cases_shown()}" if f.case_ids else ""
        lines.append(f"- {f.rule} (slice: {f.slice}): {f.message}{named}")
    return "\n".join(lines)


def summary_rows(summary: Any) -> list[dict[str, Any]]:
    """The eval-summary artifact's rows: the headline metrics in the report's order, then the
    others by name, each once, with its 95% interval and how it was found."""
    from casemill.evaluation.report.markdown import HEADLINE

    names = [n for n in HEADLINE if n in summary.metrics]
    names += sorted(n for n in summary.metrics if n not in HEADLINE)

    def rounded(value: float | None) -> float | None:
        return None if value is None else round(value, 4)

    return [
        {
            "metric": name,
            "mean": rounded(stat.mean),
            "ci_low": rounded(stat.ci_low),
            "ci_high": rounded(stat.ci_high),
            "interval": stat.method,
            "cases": stat.n,
        }
        for name, stat in ((n, summary.metrics[n]) for n in names)
    ]


def publish(outcome: Any, agent: str) -> None:
    from casemill.evaluation.scoring.caseset import describe

    summary = outcome.summary
    endpoint = f"; endpoint {summary.endpoint}" if summary.endpoint else ""
    artifacts.table(
        f"eval-summary-{agent}",
        summary_rows(summary),
        f"{agent}: {count(summary.cases, 'case')} x {count(summary.trials, 'trial')}, "
        f"{count(summary.errors, 'error')}; "
        f"cases: {describe(summary.case_set)}{endpoint}",
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
    user_model: str | None = None,
    max_customer_turns: int = 10,
    sample: int | None = None,
    limit: int | None = None,
    filters: list[str] | None = None,
) -> dict[str, Any]:
    """Run `agent` on `cases` (a corpus folder or JSONL), score, report, gate. A run into a
    `run_dir` that holds an earlier run of the same agent does only what is missing, and with
    `rerun_failed` also the trials that ended in an error (`casemill eval --rerun-failed`);
    `{date}` or `{datetime}` in `run_dir` give each (scheduled) run a folder of its own;
    `temperature` is an `openai:MODEL` agent's sampling temperature (default 0); the simulated
    customer is scripted, or played by `user_model` on the configured endpoint, for at most
    `max_customer_turns` turns an episode (`casemill eval --user-model`, `--max-customer-turns`);
    `filters`, `sample` (stratified by operator, `seed`) and `limit` choose the cases, as
    `casemill eval --filter/--sample/--limit` do."""
    request = EvaluateRequest(
        agent=agent, cases=cases, output=Path(dated_run_dir(run_dir)), trials=trials,
        concurrency=concurrency, timeout=timeout_s, max_steps=max_steps, temperature=temperature,
        baseline=baseline, gate=gate, rerun_failed=rerun_failed, seed=seed,
        batch_size=batch_size, caller="flow", user_model=user_model,
        max_customer_turns=max_customer_turns, filters=tuple(filters or ()), sample=sample,
        limit=limit,
    )  # fmt: skip
    plan = plan_evaluate(request)
    trajectories = _run_batches(request, plan)
    outcome = score_run(request, quote(plan), quote(trajectories))
    publish(outcome, agent)
    _log_outcome(outcome)
    check_unscored(request, outcome)
    if fail_on_gate and outcome.gate_failed:
        raise GateFailed(f"gate failed for {agent}: see {request.output / 'report.html'}")
    return outcome.as_dict()


def _run_batches(request: EvaluateRequest, plan: EvaluatePlan) -> list[Trajectory]:
    """A task a batch, their trajectories in batch order."""
    agent, batches = request.agent, plan.batches
    get_run_logger().info(
        "evaluating %s on %s x %s in %s",
        agent,
        count(len(plan.cases), "case"),
        count(request.trials, "trial"),
        count(len(batches), "batch", "batches"),
    )
    progress = artifacts.ProgressArtifact(len(batches), f"{agent}: batches run")
    futures = [
        run_batch.submit(request, "\n".join(c.model_dump_json() for c in b.cases), str(b.run_dir))
        for b in batches
    ]
    by_batch: dict[int, list[Trajectory]] = {}
    index = {id(f): i for i, f in enumerate(futures)}
    for future in as_completed(futures):
        by_batch[index[id(future)]] = future.result()
        progress.advance()
    return [t for i in sorted(by_batch) for t in by_batch[i]]


def _log_outcome(outcome: EvaluateOutcome) -> None:
    """The run's figures in its log: the cases the baseline lacks, the task success, the
    errors of trials that were scored and the agent's own faults."""
    from casemill.evaluation.scoring.errors import describe_errors, describe_faults, unscored

    logger, agent, summary = get_run_logger(), outcome.agent, outcome.summary
    case_note = summary.comparison.case_note if summary.comparison else ""
    if case_note:
        logger.warning("%s: %s", agent, case_note)
    logger.info(
        "%s: task success %.3f over %s (%s); report %s",
        agent,
        summary.task_success_rate or 0.0,
        count(summary.results, "result"),
        count(summary.errors, "error"),
        outcome.run_dir / "report.html",
    )
    if unscored(outcome.scores) is not None:  # the flow fails with it, said then
        return
    errors = describe_errors(outcome.scores)
    if errors is not None:  # some trials were scored, these were not
        logger.warning("%s: %s", agent, errors)
    faults = describe_faults(outcome.scores)
    if faults is not None:  # the agent's own mistakes, in trials that were scored
        logger.info("%s: agent faults: %s", agent, faults)
