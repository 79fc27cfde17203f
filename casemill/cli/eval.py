"""`casemill eval`: run an agent on cases, score, report, gate (`casemill runs` in runs.py).
Exit codes: 0 ok, 1 the gate failed or no trial could be scored, 2 bad input."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from casemill.cli import app
from casemill.cli.console import console, err_console
from casemill.cli.run_view import (
    fail_input,
    print_comparison,
    print_extras,
    print_gate,
    summary_table,
)
from casemill.errors import UserError
from casemill.text import count


def _progress_bar(enabled: bool) -> tuple[Progress | None, Any]:
    if not enabled:
        return None, False
    bar = Progress(
        TextColumn("running"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    )
    task = bar.add_task("run", total=None)

    def report(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return bar, report


@app.command("eval")
def eval_command(
    agent: str = typer.Option(
        ..., "--agent", help="reference, reference:NAME, python:..., http(s)://..., openai:MODEL"
    ),
    cases: Path = typer.Option(
        ..., "--cases", help="a .jsonl file, a folder of them, or a corpus folder"
    ),
    output: Path = typer.Option(..., "-o", "--output", help="run directory (resumable)"),
    trials: int = typer.Option(1, "--trials", min=1, help="trials per case (pass^k)"),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="cases run at once"),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="seconds per case"),
    max_steps: int = typer.Option(
        20, "--max-steps", min=1, help="agent steps a case may take before it is stopped"
    ),
    temperature: float | None = typer.Option(
        None,
        "--temperature",
        min=0.0,
        max=2.0,
        help="sampling temperature of an openai:MODEL agent (default 0); with --trials K, "
        "pass^k at the deployed temperature",
    ),
    baseline: Path | None = typer.Option(
        None, "--baseline", help="an earlier run directory (compared on the cases both ran)"
    ),
    gate: Path | None = typer.Option(
        None, "--gate", help="gate TOML file (see gates/default.toml)"
    ),
    rerun_failed: bool = typer.Option(
        False, "--rerun-failed", help="redo trials that ended in an error"
    ),
    mode: str = typer.Option(
        "casemill", "--mode", help="casemill, or chapter (the book chapter's formulas)"
    ),
    judge: bool = typer.Option(False, "--judge", help="add LLM-judge verdicts (needs an endpoint)"),
    human_labels: Path | None = typer.Option(
        None, "--human-labels", help="JSONL of human verdicts, for the judge's agreement"
    ),
    rubric: Path | None = typer.Option(
        None, "--rubric", help="TOML rubric for the judge: criterion tables with name and question"
    ),
    scoring: Path | None = typer.Option(
        None, "--scoring", help="TOML scoring config: weights of 'overall', prices per token"
    ),
    seed: int = typer.Option(0, "--seed", help="bootstrap seed"),
    as_json: bool = typer.Option(False, "--json", help="print summary.json instead of a table"),
) -> None:
    """Run an agent on cases, score every trial, write the reports, and check the gate."""
    opts = EvalOptions(
        agent=agent, cases=cases, output=output, trials=trials, concurrency=concurrency,
        timeout=timeout, max_steps=max_steps, temperature=temperature, baseline=baseline, gate=gate,
        rerun_failed=rerun_failed, mode=mode, judge=judge, human_labels=human_labels, rubric=rubric,
        scoring=scoring, seed=seed, progress=not as_json,
    )  # fmt: skip
    try:
        outcome = _eval(opts)
    except UserError as exc:
        raise fail_input(exc) from exc
    except KeyboardInterrupt:
        _say_interrupted(output)
        raise typer.Exit(130) from None
    summary = outcome.summary
    if as_json:
        typer.echo(json.dumps(summary.to_json_dict(), indent=2))
    else:
        console.print(summary_table(summary))
        print_extras(summary)
        if summary.comparison is not None:  # --baseline
            print_comparison(summary.comparison, f" (A: the baseline {baseline}, B: this run)")
        _print_errors(outcome.scores)
        print_gate(summary)
        reports = f"reports: {output / 'report.html'}, {output / 'summary.md'}"
        console.print(reports, markup=False, highlight=False)
    _fail_unscored(outcome.scores, output)
    if outcome.verdict is not None and not outcome.verdict.passed:
        raise typer.Exit(1)


def _say_interrupted(output: Path) -> None:
    from casemill.evaluation.run_store import RunStore

    try:
        saved = f"{len(RunStore(output).load()):,} trajectories are"
    except Exception:  # noqa: BLE001 - what is saved is told as well as can be
        saved = "the trajectories finished so far are"
    err_console.print(
        f"[yellow]interrupted:[/] {saved} saved in {escape(str(output))}; run the same command "
        "again to go on from there (finished trials are not run again)",
        highlight=False,
    )


def _print_errors(scores: Any) -> None:
    from casemill.evaluation.scoring.errors import describe_errors, describe_faults, unscored

    described = describe_errors(scores)
    if described is not None and unscored(scores) is None:  # the whole run failing is said last
        console.print(f"[yellow]errors:[/] {escape(described)}", highlight=False)
    faults = describe_faults(scores)
    if faults is not None:
        console.print(f"agent faults: {faults}", markup=False, highlight=False)


def _fail_unscored(scores: Any, output: Path) -> None:
    """Exit 1 with the errors when no trial could be scored (a gate cannot pass such a run)."""
    from casemill.evaluation.scoring.errors import NothingScored, check_scored, what_to_check

    hint = (
        f"{what_to_check(scores)}; every trial is in {output / 'results.jsonl'}, and "
        f"'casemill eval ... -o {output} --rerun-failed' runs them again"
    )
    try:
        check_scored(scores, hint)
    except NothingScored as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(1) from exc


@dataclass(frozen=True)
class EvalOptions:
    agent: str
    cases: Path
    output: Path
    trials: int = 1
    concurrency: int = 8
    timeout: float = 60.0
    max_steps: int = 20
    temperature: float | None = None
    baseline: Path | None = None
    gate: Path | None = None
    rerun_failed: bool = False
    mode: str = "casemill"
    judge: bool = False
    human_labels: Path | None = None
    rubric: Path | None = None
    scoring: Path | None = None
    seed: int = 0
    progress: bool = True


def _check_gate(opts: EvalOptions) -> Any:
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

    if opts.gate is None:
        return None
    gate = load_gate(opts.gate)
    check_trials(gate, opts.trials)
    check_mode(gate, opts.mode)
    check_embeddings(gate, embeddings_available())
    criteria = None
    if opts.judge:
        rubric = load_rubric(opts.rubric) if opts.rubric is not None else DEFAULT_RUBRIC
        criteria = [c.name for c in rubric]
    check_judge(gate, criteria)
    return gate


def _check_inputs(opts: EvalOptions) -> tuple[Any, Any, Any]:
    """Everything that can be wrong with the input, checked before the agent runs."""
    from casemill.evaluation.gate_checks import check_trials
    from casemill.evaluation.report.results import load_baseline, load_run
    from casemill.evaluation.scoring.inputs import load_eval_cases, quarantine
    from casemill.evaluation.scoring.registry import ScoringConfig, load_scoring_config

    if opts.mode not in ("casemill", "chapter"):
        raise UserError(f"--mode {opts.mode!r}: use 'casemill' or 'chapter'")
    if not opts.judge and (opts.human_labels or opts.rubric):  # ignored, silently
        given = "--human-labels" if opts.human_labels else "--rubric"
        raise UserError(f"{given} is for the LLM judge only: add --judge")
    gate = _check_gate(opts)
    if opts.baseline is not None:
        if opts.baseline.resolve() == opts.output.resolve():
            # the run rewrites results.jsonl and summary.json there: the baseline would be lost
            raise UserError(
                f"--baseline {opts.baseline} is the run directory -o {opts.output}: this run "
                "would overwrite the baseline's results; write the run to another directory"
            )
        load_run(opts.baseline)  # a bad run directory is said before the cases are read
    config = load_scoring_config(opts.scoring) if opts.scoring else ScoringConfig()
    loaded = load_eval_cases(opts.cases)
    if loaded.bad:
        where = quarantine(opts.output, loaded.bad)
        first = escape(loaded.bad[0].reasons[0])
        refused = count(len(loaded.bad), "case record")
        message = f"[yellow]{refused} refused[/] (reasons in {where}); first: {first}"
        err_console.print(message, highlight=False)
    if not loaded.cases:
        raise UserError(f"{opts.cases}: no valid cases to run")
    if opts.baseline is not None:
        baseline = load_baseline(opts.baseline, (c.id for c in loaded.cases))
        if gate is not None:
            name = f"--baseline {opts.baseline}"
            check_trials(gate, opts.trials, baseline=baseline, baseline_name=name)
    return loaded, config, gate


def _eval(opts: EvalOptions) -> Any:
    from casemill.evaluation.agents import agent_settings, load_agent
    from casemill.evaluation.gate_checks import check_judge
    from casemill.evaluation.runner import run
    from casemill.evaluation.scoring.pipeline import evaluate_run

    loaded, config, gate = _check_inputs(opts)
    agent = load_agent(opts.agent, temperature=opts.temperature)
    judge, skipped = _judge(opts.judge, opts.human_labels, opts.rubric)
    if gate is not None and judge is None:  # --judge, but no endpoint to ask
        check_judge(gate, None, why="the judge is skipped (above); configure its endpoint")
    bar, report = _progress_bar(opts.progress)
    if bar is not None:
        bar.start()
    try:
        trajectories = run(
            agent, loaded.cases, opts.output, trials=opts.trials,
            concurrency=opts.concurrency, timeout_s=opts.timeout, max_steps=opts.max_steps,
            rerun_failed=opts.rerun_failed, progress=report,
        )  # fmt: skip
    finally:
        if bar is not None:
            bar.stop()
    return evaluate_run(
        opts.output, loaded.cases, trajectories, baseline_dir=opts.baseline,
        gate_path=opts.gate, judge=judge, mode=opts.mode, config=config, seed=opts.seed,  # type: ignore[arg-type]
        case_set=loaded.case_set(), agent_settings=agent_settings(agent), notes=skipped,
    )  # fmt: skip


def _judge(wanted: bool, labels: Path | None, rubric: Path | None) -> tuple[Any, tuple[str, ...]]:
    """The judge `--judge` asks for, or None; and, when it is skipped for want of an endpoint,
    the note saying so (said now, and kept in the summary's notes with the run's reports)."""
    if not wanted:
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

    criteria = load_rubric(rubric) if rubric is not None else DEFAULT_RUBRIC
    names = [c.name for c in criteria]
    human = load_human_labels(labels, names) if labels is not None else {}
    try:
        return Judge(LLMEndpoint.from_settings(), rubric=criteria, human_labels=human), ()
    except EndpointNotConfigured as exc:
        err_console.print(f"[yellow]judge skipped:[/] {escape(str(exc))}", highlight=False)
        return None, (skipped_note(exc),)
