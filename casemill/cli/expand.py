"""Generator commands: `casemill expand` and `casemill ops list`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from casemill.cli import app
from casemill.cli.console import console, err_console
from casemill.cli.help import Typer
from casemill.errors import UserError
from casemill.generators import all_operators
from casemill.generators.stage import ExpandRequest, run_expand
from casemill.text import count

ops_app = Typer(help="The generator operators.", no_args_is_help=True)
app.add_typer(ops_app, name="ops")


@ops_app.command("list")
def ops_list(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List operators: kind, name, version, label rule, whether an LLM is needed."""
    specs = [s.describe() for s in all_operators()]
    if as_json:
        console.print_json(json.dumps(specs))
        return
    table = Table("kind", "name", "version", "llm", "label rule", show_lines=False)
    for s in specs:
        table.add_row(
            s["kind"], s["name"], s["version"], "yes" if s["needs_llm"] else "", s["label_rule"]
        )
    console.print(table)


def _quotas(values: list[str]) -> dict[str, int]:
    out = {}
    for value in values:
        kind, _, number = value.partition("=")
        if not number.strip().isdigit():
            raise UserError(f"--quota {value!r}: expected KIND=N, e.g. --quota noise=500")
        out[kind.strip()] = int(number)
    return out


def _print_summary(summary: dict, out: Path, rejects: Path) -> None:
    """The summary on the console; paths and messages (an endpoint's error text among them)
    are escaped, as a '[/v1/chat]' in them would be read as Rich markup."""
    out, rejects = escape(str(out)), escape(str(rejects))
    console.print(
        f"[bold]{count(summary['accepted'], 'candidate')}[/] written to {out} "
        f"({summary['generated']:,} generated from {count(summary['seeds'], 'seed')}, "
        f"{count(summary['near_duplicates'], 'near-duplicate')} removed, "
        f"{count(summary['not_applicable'], 'attempt')} not applicable)"
    )
    skipped = summary["seeds_skipped"]
    if skipped:
        err_console.print(
            f"[yellow]{count(skipped, 'seed')} failed validation and "
            f"{'was' if skipped == 1 else 'were'} skipped[/] (reasons in {rejects})",
            highlight=False,
        )
    rejected = summary["rejected_by_reason"]
    if rejected:
        console.print(
            f"rejected ({rejects}): " + ", ".join(f"{k} {v}" for k, v in rejected.items())
        )
    if summary["coverage"]:  # with no candidate, an empty table would be a column of letters
        intents = sorted({i for row in summary["coverage"].values() for i in row})
        table = Table("kind", *intents, title="coverage: operator kind x intent")
        for kind, row in summary["coverage"].items():
            table.add_row(kind, *(str(row.get(i, 0)) for i in intents))
        console.print(table)
    d = summary["diversity"]
    console.print(
        f"distinct-1 {d['candidates_distinct_1']} (seeds {d['seeds_distinct_1']}), "
        f"distinct-2 {d['candidates_distinct_2']} (seeds {d['seeds_distinct_2']}), "
        f"{d['new_bigrams']} bigrams not in the seeds"
    )
    for message in summary["messages"]:
        err_console.print(f"[yellow]note:[/] {escape(message)}", highlight=False)


@app.command("expand")
def expand_cmd(
    seeds: Path = typer.Option(
        ...,
        "--seeds",
        help="seed file, folder of .jsonl files, or corpus folder (its active cases)",
    ),
    out: Path = typer.Option(..., "-o", "--out", help="candidates file (.jsonl)"),
    operators: str = typer.Option("", help="comma-separated chains, e.g. swap_order_id+slang"),
    per_seed: int = typer.Option(2, min=1, help="attempts of each chain on each seed"),
    seed: int = typer.Option(0, help="random seed: same seed, byte-identical output"),
    quota: list[str] = typer.Option(
        [],
        help="KIND=N or KIND:INTENT=N: keep at most N candidates of a kind (and intent), "
        "counted as the coverage table counts them: a candidate counts for every kind in its "
        "chain and every intent it has",
    ),
    corpus: Path | None = typer.Option(None, help="corpus folder to deduplicate against"),
    dedup_threshold: float = typer.Option(
        0.9, help="near-duplicate Jaccard threshold, above 0 and at most 1 (1: identical text only)"
    ),
    llm: bool = typer.Option(
        False,
        "--llm",
        help="also run the LLM-backed operators (one named in --operators runs without it)",
    ),
    strict: bool = typer.Option(False, help="reject candidates with lint warnings"),
) -> None:
    """Expand seeds into validated, deduplicated candidates (review pending).

    Beside `-o NAME.jsonl` it writes NAME.rejects.jsonl (skipped seeds with file, line and
    field; rejected attempts with the reason) and NAME.summary.json (counts, coverage,
    diversity)."""
    request = ExpandRequest(
        seeds=seeds, out=out, corpus=corpus,
        chains=tuple(c.strip() for c in operators.split(",") if c.strip()),
        per_seed=per_seed, seed=seed, quotas=_quotas(quota), dedup_threshold=dedup_threshold,
        llm=llm, strict=strict,
    )  # fmt: skip
    with _progress_bar() as progress:
        outcome = run_expand(request, progress=progress, warn=_warn)
    _print_summary(outcome.summary, outcome.paths["candidates"], outcome.paths["rejects"])


@contextmanager
def _progress_bar() -> Iterator[Callable[[int, int], None]]:
    """A bar of the seeds expanded, on stderr, gone when done; yields its `progress(done,
    total)` callback."""
    columns = (TextColumn("expanding"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task("seeds", total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def _warn(label: str, text: str) -> None:
    err_console.print(f"[yellow]{label}[/] {escape(text)}", highlight=False)
