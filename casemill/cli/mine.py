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

    def reported(n: int) -> None:
        if interrupted.is_set():
            raise KeyboardInterrupt
        progress(n)

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


@app.command("mine")
def mine_command(
    logs: list[Path] = typer.Argument(..., help="log files (gzip read transparently)"),
    fmt: str = typer.Option(..., "--format", "-f", help=FORMAT_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="candidates JSONL to write"),
    no_redact: bool = typer.Option(
        False, "--no-redact", help="keep personal data (never for real logs)"
    ),
    keep_raw: Path | None = typer.Option(
        None,
        "--keep-raw",
        help="also write the raw values redaction replaced to this separate file",
    ),
    quarantine: Path | None = typer.Option(
        None, "--quarantine", help="bad records (default: OUT.quarantine.jsonl)"
    ),
    corpus: Path | None = typer.Option(
        None, "--corpus", help="deduplicate against this corpus folder"
    ),
    csv_mapping: Path | None = typer.Option(
        None, "--csv-mapping", help="JSON file mapping CSV columns (format csv)"
    ),
    tools: Path | None = typer.Option(
        None,
        "--tools",
        help="JSON file of the agent's tool specs (OpenAI tools list) for logs that carry none",
    ),
    domain: str | None = typer.Option(
        None,
        "--domain-label",
        help="name of generic:<name> cases (default: the first telling word of the file's folder, else of its name: tau-bench-airline-logs/... gives airline)",
    ),
    seed: int = typer.Option(0, help="seed of the surrogates"),
    max_turns: int = typer.Option(500, min=1, help="messages kept of one conversation"),
    workers: int | None = typer.Option(
        None,
        "--workers",
        "-w",
        min=0,
        show_default=False,
        help="processes that redact and derive cases, same output as one (0: one per core; "
        f"default: one per core for logs of {AUTO_WORKERS_MB} MB or more, else 1)",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
) -> None:
    """Mine support logs into candidate cases (review status pending)."""
    from casemill.mining.output import mine_to_files, quarantine_path
    from casemill.mining.parsers import FORMATS
    from casemill.mining.pipeline import MineOptions
    from casemill.mining.reading import file_size
    from casemill.mining.toolspec import load_tools_file

    if fmt not in FORMATS:
        raise UserError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    folders = [str(p) for p in logs if p.is_dir()]
    if folders:
        raise UserError(f"a folder, not a log file: {', '.join(folders)} (name its files)")
    missing = [str(p) for p in logs if not p.is_file()]
    if missing:
        raise UserError(f"no such log file: {', '.join(missing)}")
    if no_redact and keep_raw:
        raise UserError("--keep-raw only makes sense with redaction on; drop --no-redact")
    if csv_mapping and fmt != "csv":  # it would be ignored, silently
        raise UserError(f"--csv-mapping applies to --format csv only, not --format {fmt}")
    mapping = _csv_mapping(csv_mapping) if csv_mapping else None
    specs = load_tools_file(tools) if tools else None
    total = sum(file_size(p) for p in logs)
    existing = _corpus(corpus) if corpus else []
    options = MineOptions(
        redact=not no_redact,
        seed=seed,
        max_turns=max_turns,
        domain_label=domain,
        csv_mapping=mapping,
        tools=specs,
        workers=chosen_workers(workers, total),
    )
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        disable=as_json,
        transient=True,
    ) as bar:
        task = bar.add_task("mining", total=total)
        summary = _interruptible(
            out,
            mine_to_files,
            logs,
            fmt,
            out,
            quarantine=quarantine,
            keep_raw=keep_raw,
            options=options,
            existing=existing,
            progress=lambda n: bar.advance(task, n),
        )
    extra = {"out": str(out), "workers": options.workers}
    if as_json:
        console.print_json(json.dumps({**summary.model_dump(mode="json"), **extra}))
    else:
        _print_summary(summary, out)
        if options.workers > 1:
            console.print(f"mined in {options.workers} worker processes (--workers 1: in one)")
    _nothing_read(summary, fmt, quarantine or quarantine_path(out))


def _nothing_read(summary, fmt: str, quarantine: Path) -> None:
    """Exit 2 when not one conversation could be read but records were quarantined (most often
    logs of another format); a warning when the logs hold no record at all."""
    if summary.conversations_read:
        return
    if not summary.quarantined:
        err_console.print("[yellow]warning:[/] no conversation found in the logs", highlight=False)
        return
    n = sum(summary.quarantined.values())
    reasons = ", ".join(f"{k} {v:,}" for k, v in summary.quarantined.items())
    raise UserError(
        f"no conversation could be read: all {n:,} record(s) were quarantined ({reasons}; "
        f"see {quarantine}); are the logs in --format {fmt}?"
    )


def _csv_mapping(path: Path):
    from pydantic import ValidationError

    from casemill.mining.parsers.csv_tickets import CsvMapping

    try:
        return CsvMapping.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:  # the first problem, by field, without pydantic's links
        err = exc.errors(include_url=False)[0]
        at = f"field '{'.'.join(str(p) for p in err['loc'])}': " if err["loc"] else ""
        why = err["msg"].removeprefix("Value error, ")
        raise UserError(f"{path}: not a valid CSV column mapping: {at}{why}") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: not a valid CSV column mapping: {exc}") from exc


def _corpus(path: Path):
    from casemill.corpus import existing_store

    return existing_store(path).cases()


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
    if summary.capped_conversations:
        console.print(f"{summary.capped_conversations} conversation(s) capped at the turn limit")
    if summary.capped_decision_points:
        console.print(
            f"{summary.capped_decision_points} decision point(s) past the per-conversation "
            "limit not mined"
        )
