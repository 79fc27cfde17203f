"""How a run is shown on the terminal, shared by `casemill eval` and `casemill runs`: the
metric table, the extras line by line (case set, settings, pass^k, flaky cases, notes), the
comparison with a baseline, the gate's verdict."""

from __future__ import annotations

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from casemill.cli.console import console, err_console
from casemill.errors import UserError
from casemill.evaluation.report.markdown import HEADLINE
from casemill.evaluation.scoring.caseset import describe
from casemill.evaluation.scoring.errors import not_covered_line
from casemill.evaluation.scoring.model import Comparison, RunSummary
from casemill.text import count

SHOWN = HEADLINE  # the metrics the Markdown summary leads with
FLAKIEST = 5  # flaky cases named in the printed summary (passes/trials), the flakiest first
FLIPS = 30  # flipped cases named under a printed comparison


def fail_input(exc: UserError) -> typer.Exit:
    err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
    return typer.Exit(2)


def num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def summary_table(summary: RunSummary) -> Table:
    title = (
        f"{summary.agent}: task success {num(summary.task_success_rate)} over "
        f"{count(summary.cases, 'case')} x {count(summary.trials, 'trial')} "
        f"({count(summary.errors, 'error')})"
    )
    table = Table(title=Text(title), title_justify="left")  # an agent spec is not markup
    for column in ("metric", "mean", "95% CI", "cases"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for name in SHOWN:
        stat = summary.metrics.get(name)
        if stat is not None:
            ci = f"{num(stat.ci_low)} - {num(stat.ci_high)}"
            table.add_row(name, num(stat.mean), ci, str(stat.n))
    return table


def print_extras(summary: RunSummary) -> None:
    """What the run was on, pass^k, flaky cases, consistency and the summary's notes (the
    baseline's different case set as a warning), one line each."""
    console.print(f"cases: {describe(summary.case_set)}", markup=False, highlight=False)
    if summary.settings_line:
        console.print(f"agent settings: {summary.settings_line}", markup=False, highlight=False)
    if summary.not_covered:
        console.print(f"not covered: {not_covered_line(summary)}", markup=False, highlight=False)
    if summary.endpoint:
        console.print(f"endpoint: {summary.endpoint}", markup=False, highlight=False)
    if summary.pass_k:
        console.print("pass^k: " + ", ".join(f"k={k} {num(v)}" for k, v in summary.pass_k.items()))
    if summary.flaky:
        shown = ", ".join(f"{f.case_id} ({f.passes}/{f.trials})" for f in summary.flaky[:FLAKIEST])
        more = f" and {len(summary.flaky) - FLAKIEST} more" if len(summary.flaky) > FLAKIEST else ""
        console.print(f"flaky cases: {len(summary.flaky)}: {shown}{more}", markup=False)
    print_conversation(summary)
    if summary.consistency.mean is not None:
        families = summary.consistency.families
        console.print(f"consistency over {families} seed families: {num(summary.consistency.mean)}")
    case_note = summary.comparison.case_note if summary.comparison else ""
    for note in summary.notes:
        if note == case_note:
            warn(note)
        else:
            console.print(f"note: {note}", markup=False, highlight=False)


def print_conversation(summary: RunSummary) -> None:
    """The simulated customer's turns and the calls recorded tools had no result for, when any
    (means over the cases that have them)."""
    for name, what in (
        ("customer_turns", "simulated customer turns a case"),
        ("off_script_calls", "off-script calls a case (recorded tools had no result for them)"),
    ):
        stat = summary.metrics.get(name)
        if stat is not None and stat.mean:
            console.print(f"{what}: {num(stat.mean)} over {stat.n} cases", highlight=False)


def comparison_table(comp: Comparison, title: str = "") -> Table:
    """Per metric: the baseline's (A) and the current run's (B) means, the paired delta and its
    interval, a significant regression flagged."""
    title = f"{comp.paired_cases} paired cases{title}"
    table = Table(title=Text(title), title_justify="left")
    for column in ("metric", "A", "B", "B - A", "95% CI", ""):
        table.add_column(column, justify="right" if column not in ("metric", "") else "left")
    for d in comp.deltas:
        flag = "regression" if d.significant_regression else ""
        table.add_row(
            d.metric,
            num(d.baseline),
            num(d.current),
            num(d.delta),
            f"{num(d.ci_low)} - {num(d.ci_high)}",
            flag,
        )
    return table


def print_comparison(comp: Comparison, title: str = "") -> None:
    """The comparison table (`title` added to its own), the metrics not compared, the pass^k
    note and the flipped cases (the first `FLIPS`)."""
    console.print(comparison_table(comp, title))
    if comp.not_comparable:
        differ = ", ".join(comp.not_comparable)
        console.print(f"not compared (metric versions differ): {differ}", markup=False)
    if comp.pass_k_note:
        console.print(f"note: {comp.pass_k_note}", markup=False, highlight=False)
    for flip in comp.flips[:FLIPS]:
        console.print(f"  {flip.direction}  {flip.case_id}", markup=False, highlight=False)
    if len(comp.flips) > FLIPS:
        console.print(f"  ... and {len(comp.flips) - FLIPS} more flips", markup=False)


def warn(text: str) -> None:
    console.print(f"[bold yellow]warning:[/] {escape(text)}", highlight=False)


def print_gate(summary: RunSummary) -> None:
    gate = summary.gate
    if gate is None:
        return
    said = {(f.rule, f.message) for f in gate.failures}  # printed below: not twice
    notes = [r for r in gate.rules if r.note and (r.rule, r.note) not in said]
    if gate.passed:
        console.print(f"[bold green]gate passed[/] ({count(len(gate.rules), 'rule')})")
    else:
        console.print(f"[bold red]gate failed[/]: {len(gate.failures)} of {len(gate.rules)} rules")
    for r in notes:
        console.print(f"  note: {r.rule}: {r.note}", markup=False, highlight=False)
    if gate.passed:
        return
    for f in gate.failures:
        shown = f.cases_shown()
        console.print(f"  [red]{escape(f.rule)}[/]: {escape(f.message)}", highlight=False)
        if shown:
            console.print(f"    cases: {shown}", markup=False, highlight=False)
