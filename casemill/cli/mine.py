"""`casemill mine`: production support logs in, candidate cases out, personal data redacted."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table

from casemill.cli import app
from casemill.cli.console import console, err_console
from casemill.errors import UserError
from casemill.text import count

FORMAT_HELP = "log format: openai-jsonl (a conversation a line, or a model call a line), transcript, csv or otel"
# logs this big or bigger are mined on every core unless --workers says otherwise: starting the
# workers costs about a second, which smaller logs would not win back
AUTO_WORKERS_MB = 32


def chosen_workers(asked: int | None, total_bytes: int) -> int:
    """The worker processes to mine with: as asked (0: one per core), or by default one per
    core for logs of `AUTO_WORKERS_MB` or more and one (this process) for smaller ones."""
    cores = os.cpu_count() or 1
    if asked is None:
        return cores if total_bytes >= AUTO_WORKERS_MB * 2**20 else 1
    return asked or cores


def _interruptible(out: Path, mine: Any, *args: Any, progress: Any, **kwargs: Any) -> Any:
    """`mine(...)`, with Ctrl-C said plainly: every output is written whole at the end, so an
    interrupted run leaves none (exit 130, as a shell expects).

    Python drops an exception raised in a weakref callback or `__del__` ("Exception ignored"),
    and the KeyboardInterrupt of a Ctrl-C that lands in one would be lost, mining going on to
    the end: the interrupt is also remembered, and raised again at the next progress report."""
    interrupted = threading.Event()

    def on_interrupt(signum: int, frame: Any) -> None:
        interrupted.set()
        raise KeyboardInterrupt

    def reported(*args: int) -> None:
        if interrupted.is_set():
            raise KeyboardInterrupt
        progress(*args)

    main = threading.current_thread() is threading.main_thread()  # signals: main thread only
    previous = signal.signal(signal.SIGINT, on_interrupt) if main else None
    try:
        return mine(*args, progress=reported, **kwargs)
    except KeyboardInterrupt:
        err_console.print(
            f"[yellow]interrupted:[/] nothing written to {escape(str(out))} (outputs are "
            "written whole when mining ends); run the command again to mine these logs",
            highlight=False,
        )
        raise typer.Exit(130) from None
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)


LOGS = typer.Argument(..., help="log files (gzip read transparently)")
FORMAT = typer.Option(..., "--format", "-f", help=FORMAT_HELP)
OUT = typer.Option(..., "--out", "-o", help="candidates JSONL to write")
NO_REDACT = typer.Option(False, "--no-redact", help="keep personal data (never for real logs)")
KEEP_RAW = typer.Option(
    None, "--keep-raw", help="also write the raw values redaction replaced to this separate file"
)
NAMES_MODEL = typer.Option(
    None,
    "--names-model",
    help="named-entity layer: an installed spaCy pipeline package (pip install "
    "'casemill[ner]' and the model's package) that finds names in text nothing announces",
)
QUARANTINE = typer.Option(None, "--quarantine", help="bad records (default: OUT.quarantine.jsonl)")
CORPUS = typer.Option(None, "--corpus", help="deduplicate against this corpus folder")
CSV_MAPPING = typer.Option(None, "--csv-mapping", help="JSON file mapping CSV columns (format csv)")
TOOLS = typer.Option(
    None,
    "--tools",
    help="JSON file of the agent's tool specs (OpenAI tools list) for logs that carry none",
)
DOMAIN = typer.Option(
    None,
    "--domain-label",
    help="name of generic:<name> cases (default: the first telling word of the file's folder, else of its name: tau-bench-airline-logs/... gives airline)",
)
PACK = typer.Option(
    None,
    "--domain",
    help="mine into this domain pack: airline (the state each case needs rebuilt from the "
    "log's reads; a case it cannot be rebuilt for stays on recorded tools, saying why), or "
    "generic:LABEL",
)
SEED = typer.Option(0, help="seed of the surrogates")
MAX_TURNS = typer.Option(500, min=1, help="messages kept of one conversation")
WORKERS = typer.Option(
    None,
    "--workers",
    "-w",
    min=0,
    show_default=False,
    help="processes that redact and derive cases, same output as one (0: one per core; "
    f"default: one per core for logs of {AUTO_WORKERS_MB} MB or more, else 1)",
)
AS_JSON = typer.Option(False, "--json", help="print the summary as JSON")


@app.command("mine")
def mine_command(
    logs: list[Path] = LOGS,
    fmt: str = FORMAT,
    out: Path = OUT,
    no_redact: bool = NO_REDACT,
    keep_raw: Path | None = KEEP_RAW,
    quarantine: Path | None = QUARANTINE,
    corpus: Path | None = CORPUS,
    csv_mapping: Path | None = CSV_MAPPING,
    tools: Path | None = TOOLS,
    domain: str | None = DOMAIN,
    pack: str | None = PACK,
    seed: int = SEED,
    names_model: str | None = NAMES_MODEL,
    max_turns: int = MAX_TURNS,
    workers: int | None = WORKERS,
    as_json: bool = AS_JSON,
) -> None:
    """Mine support logs into candidate cases (review status pending). Exit 1 when any record
    was quarantined (the good ones are written), 0 otherwise, as `casemill import` does."""
    from functools import partial

    from casemill.mining.stage import MineRequest, run_mine

    request = MineRequest(
        logs=tuple(logs),
        fmt=fmt,
        out=out,
        quarantine=quarantine,
        keep_raw=keep_raw,
        corpus=corpus,
        csv_mapping=csv_mapping,
        tools=tools,
        redact=not no_redact,
        seed=seed,
        names_model=names_model,
        max_turns=max_turns,
        domain_label=domain,
        domain=pack,
        workers=partial(chosen_workers, workers),
    )
    bar = _Bar(as_json)
    try:
        outcome = _interruptible(out, run_mine, request, progress=bar.advance)
    finally:
        bar.stop()
    _present(outcome, as_json)


def _present(outcome, as_json: bool) -> None:
    """The summary (a table, or JSON); exit 2 when not one conversation could be read but
    records were quarantined (most often logs of another format), else 1 when some were
    quarantined (as `casemill import`: a script sees records were set aside); a warning when
    the logs hold no record at all."""
    if as_json:
        console.print_json(json.dumps(outcome.as_json()))
    else:
        _print_summary(outcome.summary, outcome.out)
        if outcome.workers > 1:
            console.print(f"mined in {outcome.workers} worker processes (--workers 1: in one)")
    if outcome.nothing_found:
        err_console.print("[yellow]warning:[/] no conversation found in the logs", highlight=False)
    problem = outcome.unread_problem()
    if problem:
        raise UserError(problem)
    if outcome.quarantined:
        raise typer.Exit(1)


class _Bar:
    """The bytes of the logs read, on stderr (none with --json), shown from the first bytes
    read (an input refused before shows no bar) and gone when mining ends."""

    def __init__(self, as_json: bool) -> None:
        self.progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=err_console,
            disable=as_json,
            transient=True,
        )
        self.task = self.progress.add_task("mining", total=None)

    def advance(self, n: int, total: int) -> None:
        if not self.progress.live.is_started:
            self.progress.start()
        self.progress.update(self.task, advance=n, total=total)

    def stop(self) -> None:
        if self.progress.live.is_started:
            self.progress.stop()


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def _print_summary(summary, out: Path) -> None:
    joined = summary.model_calls_joined
    calls = f" (joined from {count(joined, 'model call')})" if joined else ""
    console.print(
        f"[bold]{count(summary.conversations_read, 'conversation')}[/]{calls} read from "
        f"{count(len(summary.files), 'file')}, {_size(summary.bytes_read)}; "
        f"{count(summary.cases_total, 'candidate case')} written to {escape(str(out))}"
    )
    table = Table(show_header=True, header_style="bold", box=None)
    table.add_column("what")
    table.add_column("counts")
    rows = [
        ("cases by kind", summary.cases),
        ("by confidence", summary.confidence),
        ("by domain", summary.domains),
        ("duplicates dropped", summary.duplicates),
        ("redactions" if summary.redacted else "redactions (off)", summary.redactions),
        ("quarantined", summary.quarantined),
    ]
    for name, counts in rows:
        table.add_row(name, ", ".join(f"{k} {v:,}" for k, v in counts.items()) or "-")
    console.print(table)
    if summary.uncued_names:
        console.print(f"names in text that nothing announces: {summary.uncued_names}")
    if summary.capped_conversations:
        console.print(f"{summary.capped_conversations} conversation(s) capped at the turn limit")
    if summary.capped_decision_points:
        console.print(
            f"{summary.capped_decision_points} decision point(s) past the per-conversation "
            "limit not mined"
        )
