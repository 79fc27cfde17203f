"""`casemill runs list / show / compare`: the evaluated runs under a folder, one run's summary,
and a run against a baseline run. Exit codes: 0 ok, 2 bad input."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from casemill.cli import app
from casemill.cli.console import console, err_console
from casemill.cli.help import Typer
from casemill.cli.run_view import (
    fail_input,
    num,
    print_comparison,
    print_extras,
    print_gate,
    summary_table,
    warn,
)
from casemill.errors import UserError
from casemill.evaluation.scoring.caseset import corpus_name, describe, difference_note
from casemill.evaluation.scoring.model import CaseSet
from casemill.text import count

runs_app = Typer(help="Evaluated runs: list, show, compare.", no_args_is_help=True)
app.add_typer(runs_app, name="runs")


def _run_dirs(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted({p.parent for p in root.rglob("summary.json")})


@runs_app.command("list")
def runs_list(
    root: Path = typer.Option(Path("runs"), "--root", help="folder holding run directories"),
    as_json: bool = typer.Option(False, "--json", help="print the runs as JSON"),
) -> None:
    """List evaluated runs under a folder (default runs/)."""
    from casemill.evaluation.report.results import read_summary

    if not root.is_dir() and root != Path("runs"):  # a mistyped --root lists nothing, silently
        raise UserError(f"--root {root}: no such folder")
    rows = []
    for path in _run_dirs(root):
        try:
            s = read_summary(path / "summary.json")
        except UserError as exc:
            err_console.print(f"[yellow]skipped[/] {escape(str(exc))}", highlight=False)
            continue
        gate = None if s.gate is None else s.gate.passed
        rows.append(
            {
                "run": str(path),
                "agent": s.agent,
                "agent_settings": s.agent_settings,
                "mode": s.mode,
                "cases": s.cases,
                "case_set": None if s.case_set is None else s.case_set.model_dump(mode="json"),
                "trials": s.trials,
                "errors": s.errors,
                "task_success_rate": s.task_success_rate,
                "gate_passed": gate,
            }
        )
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        console.print(f"no evaluated runs under {root}", markup=False)
        return
    table = Table(title=f"runs under {root}", title_justify="left")
    columns = ("run", "agent", "cases", "case set", "trials", "errors", "task success", "gate")
    for column in columns:
        table.add_column(column, overflow="fold")
    for r in rows:
        gate = "-" if r["gate_passed"] is None else ("pass" if r["gate_passed"] else "FAIL")
        table.add_row(
            str(Path(r["run"]).relative_to(root)),
            r["agent"],
            str(r["cases"]),
            _case_set_cell(r["case_set"]),
            str(r["trials"]),
            str(r["errors"]),
            num(r["task_success_rate"]),
            gate,
        )
    console.print(table)


def _case_set_cell(recorded: dict | None) -> str:
    """'corpus v0002 3f2a9c1b' or 'subset.jsonl 3f2a9c1b': which cases, at a glance."""
    if recorded is None:
        return "not recorded"
    cases = CaseSet.model_validate(recorded)
    return f"{corpus_name(cases)} {cases.digest[:8]}"


@runs_app.command("show")
def runs_show(
    run_dir: Path = typer.Argument(..., help="a run directory"),
    as_json: bool = typer.Option(False, "--json", help="print the run's summary as JSON"),
) -> None:
    """Show a run's summary (metrics, gate, weakest slices)."""
    from casemill.evaluation.report.results import RESULTS, read_summary
    from casemill.evaluation.scoring.errors import counted, counted_faults, split_kinds

    try:
        summary = read_summary(run_dir / "summary.json")
    except UserError as exc:
        raise fail_input(exc) from exc
    if as_json:
        typer.echo(json.dumps(summary.to_json_dict(), indent=2))
        return
    console.print(summary_table(summary))
    print_extras(summary)
    errors, faults = split_kinds(summary.error_kinds)
    where = f"each one is in {run_dir / RESULTS}"
    if errors:
        said = counted(errors, summary.results)
        console.print(f"[yellow]errors:[/] {escape(said)}; {escape(where)}", highlight=False)
    if faults:
        said = counted_faults(faults, summary.results)
        console.print(f"agent faults: {said}; {where}", markup=False, highlight=False)
    print_gate(summary)
    weakest = sorted(
        (r for r in summary.slices if r.task_success.mean is not None),
        key=lambda r: (r.task_success.mean, r.dimension, r.value),
    )[:8]
    for row in weakest:
        console.print(
            f"  {row.dimension}={row.value}: {num(row.task_success.mean)} ({count(row.cases, 'case')})",
            markup=False,
            highlight=False,
        )


@runs_app.command("compare")
def runs_compare(
    run_dirs: list[Path] = typer.Argument(
        ..., help="run directories: the first is the baseline (A), each other compared with it"
    ),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="write the viewer of all the runs (cases by runs) here"
    ),
    seed: int = typer.Option(0, "--seed", help="bootstrap seed"),
    as_json: bool = typer.Option(False, "--json", help="print the comparison as JSON"),
) -> None:
    """Compare runs with the first (A): paired per-metric deltas with 95% CIs and flipped
    cases; with -o, a page of every case by run, the flips highlighted."""
    from casemill.evaluation.report.results import load_run

    if len(run_dirs) < 2:
        raise fail_input(UserError("runs compare needs at least two run directories (A B [C...])"))
    try:
        loaded = [load_run(d) for d in run_dirs]
    except UserError as exc:
        raise fail_input(exc) from exc
    base, a = loaded[0], run_dirs[0]
    found = []
    for b, cur in zip(run_dirs[1:], loaded[1:], strict=True):
        if len(run_dirs) > 2 and not as_json:
            console.print(f"\nA: {a}, B: {b}", markup=False, highlight=False)
        found.append(_compare_two(a, b, base, cur, seed, as_json))
    if as_json:
        typer.echo(json.dumps(found[0] if len(found) == 1 else found, indent=2))
    if output is not None:
        _write_compare(run_dirs, output, as_json)


def _write_compare(run_dirs: list[Path], output: Path, quiet: bool) -> None:
    from casemill.evaluation.report.html import write_compare

    try:
        path = write_compare(run_dirs, output)
    except UserError as exc:
        raise fail_input(exc) from exc
    if not quiet:
        console.print(f"viewer of {len(run_dirs)} runs: {path}", markup=False, highlight=False)


def _compare_two(a: Path, b: Path, base, cur, seed: int, as_json: bool) -> dict:
    """Run B against run A: printed, or (`as_json`) returned as the JSON to print."""
    from casemill.evaluation.scoring.compare import compare
    from casemill.evaluation.scoring.pipeline import settings_differ

    comp = compare(base.summary, cur.summary, seed=seed)
    if comp.paired_cases == 0:
        raise fail_input(UserError(f"{a} and {b} share no case: nothing to compare"))
    differ = settings_differ(base.summary.agent_settings, cur.summary.agent_settings)
    if as_json:
        settings = {
            "current_agent": cur.summary.agent,
            "baseline_agent_settings": base.summary.agent_settings,
            "current_agent_settings": cur.summary.agent_settings,
            "agent_settings_differ": differ,
        }
        return comp.model_dump(mode="json") | settings
    console.print(f"A: {describe(base.summary.case_set)}", markup=False, highlight=False)
    console.print(f"B: {describe(cur.summary.case_set)}", markup=False, highlight=False)
    if differ:
        said = [
            f"{n}: {r.summary.settings_line or 'none recorded'}"
            for n, r in (("A", base), ("B", cur))
        ]
        warn(f"the agents' settings differ ({'; '.join(said)})")
    if comp.case_note:
        counts = (comp.paired_cases, comp.only_in_current, comp.only_in_baseline)
        sets = (comp.current_case_set, comp.baseline_case_set)
        warn(difference_note(*counts, *sets, names=("B", "A")))
    print_comparison(comp)
    return {}
