"""`casemill eval`: run an agent on cases, score, report, gate (`casemill runs` in runs.py).
Exit codes: 0 ok, 1 the gate failed or no trial could be scored, 2 bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from casemill.cli import app
from casemill.cli.console import console, err_console, progress_bar
from casemill.cli.run_view import (
    fail_input,
    print_comparison,
    print_extras,
    print_gate,
    summary_table,
)
from casemill.errors import UserError
from casemill.evaluation.stage import (
    EvaluateOutcome,
    EvaluatePlan,
    EvaluateRequest,
    check_unscored,
    run_evaluate,
)
from casemill.text import count

# the options of `casemill eval` (their declarations would fill the command's function)
_AGENT = typer.Option(
    ..., "--agent", help="reference, reference:NAME, python:..., http(s)://..., openai:MODEL"
)
_CASES = typer.Option(..., "--cases", help="a .jsonl file, a folder of them, or a corpus folder")
_MAX_STEPS = typer.Option(
    20, "--max-steps", min=1, help="agent steps a case may take before it is stopped"
)
_TEMPERATURE = typer.Option(
    None,
    "--temperature",
    min=0.0,
    max=2.0,
    help="sampling temperature of an openai:MODEL agent (default 0); with --trials K, "
    "pass^k at the deployed temperature",
)
_BASELINE = typer.Option(
    None, "--baseline", help="an earlier run directory (compared on the cases both ran)"
)
_GATE = typer.Option(None, "--gate", help="gate TOML file (see gates/default.toml)")
_RERUN = typer.Option(False, "--rerun-failed", help="redo trials that ended in an error")
_MODE = typer.Option(
    "casemill",
    "--mode",
    help="casemill, or chapter (the formulas of the book chapter the chapter format comes "
    "from; docs/reports.md)",
)
_JUDGE = typer.Option(False, "--judge", help="add LLM-judge verdicts (needs an endpoint)")
_HUMAN_LABELS = typer.Option(
    None, "--human-labels", help="JSONL of human verdicts, for the judge's agreement"
)
_RUBRIC = typer.Option(
    None, "--rubric", help="TOML rubric for the judge: criterion tables with name and question"
)
_USER_MODEL = typer.Option(
    None,
    "--user-model",
    help="play the customer with this model on the configured OpenAI-compatible endpoint "
    "(default: the scripted customer, offline)",
)
_CUSTOMER_TURNS = typer.Option(
    10,
    "--max-customer-turns",
    min=0,
    help="turns the simulated customer may add to an episode, unless a case says otherwise "
    "(0: one agent turn a case)",
)
_LIMIT = typer.Option(
    None, "--limit", min=1, help="run the first N cases only (after --filter and --sample)"
)
_SAMPLE = typer.Option(
    None, "--sample", min=1, help="run a sample of N cases, stratified by operator (--seed)"
)
_FILTER = typer.Option(
    None,
    "--filter",
    help="KEY=VALUE[,VALUE...] with KEY tag, operator, intent, id (a prefix), origin or "
    "domain; repeat to narrow further",
)
_SCORING = typer.Option(
    None, "--scoring", help="TOML scoring config: weights of 'overall', prices per token"
)


@app.command("eval")
def eval_command(
    agent: str = _AGENT,
    cases: Path = _CASES,
    output: Path = typer.Option(..., "-o", "--output", help="run directory (resumable)"),
    trials: int = typer.Option(1, "--trials", min=1, help="trials per case (pass^k)"),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="cases run at once"),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="seconds per case"),
    max_steps: int = _MAX_STEPS,
    temperature: float | None = _TEMPERATURE,
    baseline: Path | None = _BASELINE,
    gate: Path | None = _GATE,
    rerun_failed: bool = _RERUN,
    mode: str = _MODE,
    judge: bool = _JUDGE,
    human_labels: Path | None = _HUMAN_LABELS,
    rubric: Path | None = _RUBRIC,
    scoring: Path | None = _SCORING,
    limit: int | None = _LIMIT,
    sample: int | None = _SAMPLE,
    filters: list[str] | None = _FILTER,
    seed: int = typer.Option(0, "--seed", help="seed of the bootstrap and of --sample"),
    user_model: str | None = _USER_MODEL,
    max_customer_turns: int = _CUSTOMER_TURNS,
    as_json: bool = typer.Option(False, "--json", help="print summary.json instead of a table"),
) -> None:
    """Run an agent on cases, score every trial, write the reports, and check the gate.
    A first run on a paid model: --sample 20 (or --limit, --filter) runs a few cases."""
    request = EvaluateRequest(
        agent=agent, cases=cases, output=output, trials=trials, concurrency=concurrency,
        timeout=timeout, max_steps=max_steps, temperature=temperature, baseline=baseline, gate=gate,
        rerun_failed=rerun_failed, mode=mode, judge=judge, human_labels=human_labels, rubric=rubric,
        scoring=scoring, seed=seed, filters=tuple(filters or ()), sample=sample, limit=limit,
        user_model=user_model, max_customer_turns=max_customer_turns,
    )  # fmt: skip
    try:
        with progress_bar("running", not as_json) as progress:
            announce = None if as_json else _announce
            outcome = run_evaluate(request, progress=progress, warn=_warn, announce=announce)
    except UserError as exc:
        raise fail_input(exc) from exc
    except KeyboardInterrupt:
        _say_interrupted(output)
        raise typer.Exit(130) from None
    if as_json:
        typer.echo(json.dumps(outcome.summary.to_json_dict(), indent=2))
    else:
        _print_outcome(outcome, baseline)
    _fail_unscored(request, outcome)
    if outcome.gate_failed:
        raise typer.Exit(1)


def _announce(plan: EvaluatePlan) -> None:
    """What is about to run, before the agent is called: the endpoint and model it talks to,
    and how many cases (how they were chosen)."""
    settings = plan.agent_settings
    said = f"{count(len(plan.cases), 'case')}"
    if plan.endpoint:
        said += f"; endpoint {plan.endpoint}"
    if settings.get("model"):
        said += f", model {settings['model']}"
    err_console.print(f"running on {said}", markup=False, highlight=False)
    for note in plan.notes:
        if note.startswith("cases run: "):
            err_console.print(note, markup=False, highlight=False)


def _print_outcome(outcome: EvaluateOutcome, baseline: Path | None) -> None:
    """The summary table, the comparison with the baseline, the errors, the gate, the reports."""
    summary, output = outcome.summary, outcome.run_dir
    console.print(summary_table(summary))
    print_extras(summary)
    if summary.comparison is not None:  # --baseline
        print_comparison(summary.comparison, f" (A: the baseline {baseline}, B: this run)")
    _print_errors(outcome.scores)
    print_gate(summary)
    reports = f"reports: {output / 'report.html'}, {output / 'summary.md'}"
    console.print(reports, markup=False, highlight=False)


def _warn(label: str, text: str) -> None:
    err_console.print(f"[yellow]{label}[/] {escape(text)}", highlight=False)


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


def _fail_unscored(request: EvaluateRequest, outcome: EvaluateOutcome) -> None:
    """Exit 1 with the errors when no trial could be scored (a gate cannot pass such a run)."""
    from casemill.evaluation.scoring.errors import NothingScored

    try:
        check_unscored(request, outcome)
    except NothingScored as exc:
        err_console.print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        raise typer.Exit(1) from exc
