"""`casemill review ...`: the human review queue from the command line."""

from __future__ import annotations

import getpass
import json
import os
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Column, Table

from casemill.cli import app
from casemill.cli.console import console, err_console, progress_bar
from casemill.cli.help import Typer
from casemill.errors import UserError
from casemill.settings import Settings
from casemill.text import count

review_app = Typer(
    help="Review candidates: queue, terminal and web review, export.", no_args_is_help=True
)
token_app = Typer(help="Sign-in tokens for the web review.", no_args_is_help=True)
review_app.add_typer(token_app, name="token")
app.add_typer(review_app, name="review")

DB_HELP = "queue database URL (default: CASEMILL_REVIEW_DB or sqlite:///.casemill/review.db)"
REVIEWER_HELP = "your name (default: $CASEMILL_REVIEWER or login)"
FILTER_HELP = "KEY=VALUE, repeatable: status, batch, origin, operator, intent, valid"


def _store(db: str | None):  # noqa: ANN202
    from casemill.review.store import ReviewStore

    return ReviewStore.open(db or Settings().review_db)


def _filter(store, filters: list[str] | None):  # noqa: ANN001, ANN202
    """The `--filter` options, checked against the queue (`checked_filter`)."""
    from casemill.review.items import checked_filter

    return checked_filter(store, filters)


def _reviewer(name: str | None) -> str:
    return name or os.environ.get("CASEMILL_REVIEWER") or getpass.getuser()


@review_app.command("enqueue")
def enqueue(
    file: Path = typer.Argument(
        ..., exists=True, dir_okay=False, help="candidates, one case a line"
    ),
    batch: str | None = typer.Option(None, "--batch", help="batch id (default: file name + hash)"),
    parents: list[Path] = typer.Option(
        None, "--parents", help="files or folders holding parent cases (default: seeds dir)"
    ),
    corpus: Path | None = typer.Option(
        None,
        "--corpus",
        help="corpus folder the cases are for; parents are looked up in it too "
        "(default: settings corpus_dir)",
    ),
    policy: str = typer.Option(
        "human", help="human, or auto: approve every case passing every validator"
    ),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="print the counts as JSON"),
) -> None:
    """Put the candidates of FILE in the queue (bad lines go to a quarantine file)."""
    from casemill.review.stage import EnqueueRequest, run_enqueue

    request = EnqueueRequest(
        db_url=db or Settings().review_db,
        cases_path=file,
        batch_id=batch,
        parents=tuple(parents or ()),
        corpus_dir=corpus,
        policy=policy,
        actor=_reviewer(None),  # the audit says who queued the cases, as it says who exported
    )
    with progress_bar("validating and enqueueing", not as_json) as bar:
        outcome = run_enqueue(request, bar=bar)
    if as_json:
        console.print_json(json.dumps(outcome.summary()))
    else:
        console.print(_enqueued_line(outcome), highlight=False)
        for error in outcome.bad_lines[:10]:
            err_console.print(f"[yellow]skipped[/] {escape(str(error))}", highlight=False)
    if outcome.bad_lines and not outcome.result.added:
        raise typer.Exit(2)


def _enqueued_line(outcome) -> str:  # noqa: ANN001 - an EnqueueOutcome
    """What `review enqueue` prints of its counts (and of the auto policy's decisions)."""
    if not outcome.result.batch_exists:
        return _nothing_enqueued(outcome.result, len(outcome.bad_lines))
    s, auto = outcome.summary(), outcome.auto
    line = (
        f"batch [bold]{escape(s['batch'])}[/]: {s['added']} added, "
        f"{s['already_queued']} already queued, {s['failing_validation']} failing validation, "
        f"{s['bad_lines']} bad lines"
    )
    if auto:
        line += (
            f"; {s['auto_approved']} auto-approved, the other {len(auto.skipped)} wait for a person"
        )
    return line


def _nothing_enqueued(result, bad_lines: int) -> str:  # noqa: ANN001 - an EnqueueResult
    """Why a new batch got no case, and so was not made."""
    why = []
    if result.already_queued:
        where = ", ".join(result.queued_in)
        batch = "batches" if len(result.queued_in) > 1 else "batch"
        why.append(
            f"{count(len(result.already_queued), 'case')} already queued "
            f"(in {batch} {escape(where)}; see `casemill review status`)"
        )
    if bad_lines:
        why.append(f"{count(bad_lines, 'bad line')}")
    if not why:
        why.append("the file holds no case")
    return f"nothing enqueued, no batch {escape(result.batch_id)} made: " + "; ".join(why)


@review_app.command("status")
def status(
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="print the batches as JSON"),
) -> None:
    """Batches in the queue with their counts."""
    from casemill.review.agreement import agreement

    store = _store(db)
    rows = [b.as_dict() for b in store.batches()]
    for row in rows:
        kappa = agreement(store, row["batch_id"])
        row["double_reviewed"] = kappa.n
        row["kappa"] = kappa.kappa
    if as_json:
        console.print_json(json.dumps(rows))
        return
    if not rows:
        console.print(_empty_queue(store), highlight=False)
        return
    console.print(_status_table(rows))


def _empty_queue(store) -> str:  # noqa: ANN001 - a ReviewStore
    where = escape(store.engine.url.render_as_string(hide_password=True))
    return (
        f"the review queue at {where} is empty; queue candidates with "
        "`casemill review enqueue FILE`"
    )


def _status_table(rows: list[dict]) -> Table:
    """Batches as a table whose headers fit 80 columns whole: the batch id wraps (its policy,
    and whether it is closed, on a dim line below it), the counts and kappa do not."""
    table = Table(
        Column("batch", overflow="fold", ratio=1),
        *(
            Column(name, justify="right", no_wrap=True, min_width=len(name))
            for name in ("total", "pending", "approved", "rejected", "exported")
        ),
        Column("kappa", min_width=5, max_width=6),
        show_edge=False,
    )
    for r in rows:
        about = f"policy {r['policy']}" + (", closed" if r["closed"] else "")
        kappa = f"{r['kappa']:.2f} n={r['double_reviewed']}" if r["kappa"] is not None else ""
        table.add_row(
            f"{escape(r['batch_id'])}\n[dim]{about}[/]",
            *(str(r[k]) for k in ("total", "pending", "approved", "rejected", "exported")),
            kappa,
        )
    return table


@review_app.command("list")
def list_(
    filters: list[str] = typer.Option(None, "--filter", help=FILTER_HELP),
    limit: int = typer.Option(50, "--limit", min=0, help="at most this many (0: all)"),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="print the cases as JSON"),
) -> None:
    """Cases in the queue matching the filters, in queue order."""
    from casemill.review.present import item_summary

    store = _store(db)
    flt = _filter(store, filters)
    rows = [item_summary(i) for i in store.list(flt, limit=limit or None)]
    total = store.count(flt) if limit and len(rows) == limit else len(rows)
    cut = f"{len(rows)} of {total} shown; --limit 0 lists all" if total > len(rows) else ""
    if as_json:
        console.print_json(json.dumps(rows))
        if cut:  # on stderr: the JSON stays a plain list, and a script is told it is cut
            err_console.print(cut, highlight=False)
        return
    if not rows:
        empty = flt.empty and not store.batches()
        line = _empty_queue(store) if empty else f"no case in the queue matches {flt.describe()}"
        console.print(line, highlight=False)
        return
    # ids are copied whole: a case id keeps its line, a batch id wraps instead of being cut
    table = Table(
        Column("case", no_wrap=True, min_width=22),
        Column("batch", overflow="fold"),
        "status",
        "label",
        "checks",
        "reviewer",
    )
    for r in rows:
        checks = ("ok" if r["valid"] else "fails") + (" · needs label" if r["needs_label"] else "")
        label = f"{'+'.join(r['intents']) or 'no intent'} -> {r['outcome']}"
        table.add_row(r["case_id"], r["batch_id"], r["status"], label, checks, r["reviewer"] or "")
    console.print(table)
    if cut:
        console.print(cut, highlight=False)


@review_app.command("show")
def show(
    case_id: str = typer.Argument(..., help="the case's id in the queue"),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="print the case and its review as JSON"),
) -> None:
    """One case as a reviewer sees it (read only: no lease is taken)."""
    from casemill.review.present import item_summary, item_view
    from casemill.review.terminal import render

    item = _store(db).get(case_id)
    if as_json:
        out = {
            **item_summary(item),
            "findings": [f.as_dict() for f in item.findings],
            "edits": [e.model_dump(mode="json") for e in item.edits],
            "case": item.case.model_dump(mode="json"),
        }
        console.print_json(json.dumps(out))
        return
    render(item_view(item), console, position=item.status)
    if item.status != "pending":  # who decided, when and why: the status alone does not say
        console.print(_decision_line(item), highlight=False)


def _decision_line(item) -> str:  # noqa: ANN001 - a review.items.Item
    by = "the auto policy" if item.auto_approved else item.reviewer
    line = f"{item.status} by {escape(by)} at {item.decided_at}"
    if item.reason:
        line += f": {escape(item.reason)}"
    if item.edits:
        line += f" ({count(len(item.edits), 'edit')})"
    if item.exported_at:
        line += f"; exported to corpus version {item.corpus_version} at {item.exported_at}"
    return line


@review_app.command("undo")
def undo(
    case_id: str = typer.Argument(..., help="the case's id in the queue"),
    reviewer: str | None = typer.Option(None, "--reviewer", help=REVIEWER_HELP),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Take back the decision on one case: it is pending again (while its batch is open)."""
    item = _store(db).undo(case_id, _reviewer(reviewer), None)
    console.print(f"{item.case_id} is pending again (version {item.version})")


@review_app.command("next")
def next_(
    filters: list[str] = typer.Option(None, "--filter", help=FILTER_HELP),
    reviewer: str | None = typer.Option(None, "--reviewer", help=REVIEWER_HELP),
    limit: int | None = typer.Option(None, "--limit", min=1, help="stop after this many decisions"),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Review pending cases one at a time in the terminal (single keys)."""
    from casemill.review.terminal import TtyKeys, run

    store = _store(db)
    flt = _filter(store, filters)
    with TtyKeys(console) as keys:
        tally = run(store, _reviewer(reviewer), flt, console, keys.io(), limit)
    _resume_decided(store, {store.get(c).batch_id for c in tally.approved + tally.rejected})


def _decide(
    decision: str,
    filters: list[str],
    reviewer: str | None,
    reason: str | None,
    db: str | None,
    as_json: bool,
) -> None:

    if not filters:
        err_console.print(
            "give at least one --filter (for everything pending: --filter status=pending)"
        )
        raise typer.Exit(2)
    store = _store(db)
    result = store.bulk_decide(_filter(store, filters), decision, _reviewer(reviewer), reason)
    if as_json:
        console.print_json(
            json.dumps(
                {"changed": list(result.changed), "skipped": [list(s) for s in result.skipped]}
            )
        )
    else:
        console.print(f"{len(result.changed)} {decision}, {len(result.skipped)} skipped")
        for case_id, why in result.skipped[:20]:
            err_console.print(f"[yellow]skipped[/] {case_id}: {escape(str(why))}", highlight=False)
    _resume_decided(store, {store.get(c).batch_id for c in result.changed})


@review_app.command("approve")
def approve(
    filters: list[str] = typer.Option(None, "--filter", help=FILTER_HELP),
    reviewer: str | None = typer.Option(None, "--reviewer", help=REVIEWER_HELP),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="print the changed and skipped ids as JSON"),
) -> None:
    """Approve every case matching the filters: pending ones unless a status=... filter says
    otherwise (cases failing validation, needs_label guesses and leased cases are skipped)."""
    _decide("approved", filters, reviewer, None, db, as_json)


@review_app.command("reject")
def reject(
    filters: list[str] = typer.Option(None, "--filter", help=FILTER_HELP),
    reason: str = typer.Option(..., "--reason", help="why (kept in the audit log)"),
    reviewer: str | None = typer.Option(None, "--reviewer", help=REVIEWER_HELP),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="print the changed and skipped ids as JSON"),
) -> None:
    """Reject every case matching the filters: pending ones unless a status=... filter says
    otherwise (leased cases are skipped)."""
    _decide("rejected", filters, reviewer, reason, db, as_json)


@review_app.command("export")
def export(
    batch: str | None = typer.Option(None, "--batch", help="one batch (default: every batch)"),
    corpus: Path | None = typer.Option(
        None, "--corpus", help="existing corpus folder (default: settings corpus_dir)"
    ),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
    take_over: bool = typer.Option(
        False,
        "--take-over",
        help="finish the job of an export that died: take over the claims it left "
        "(cases the corpus holds are marked exported, the others written)",
    ),
    new_domain: bool = typer.Option(
        False,
        "--new-domain",
        help="let cases of a domain the corpus does not hold yet join it (refused otherwise)",
    ),
) -> None:
    """Write the approved, not yet exported cases as a new corpus version.

    An export that was killed leaves its cases claimed: undo, reject and edit are refused on
    them, and another export is refused naming it. Once sure it no longer runs, run the export
    again with --take-over: it rolls the job forward (see docs/review.md)."""
    from casemill.review.stage import ExportRequest, run_export

    request = ExportRequest(
        db_url=db or Settings().review_db,
        batch_id=batch,
        corpus_dir=corpus,
        actor=_reviewer(None),
        take_over=take_over,
        new_domain=new_domain,
    )
    with err_console.status("exporting") as status:
        result = run_export(request, progress=status.update)
    if as_json:
        console.print_json(json.dumps(result.as_dict()))
    elif result.corpus_version is None and take_over and result.already_in_corpus:
        done = len(result.already_in_corpus)
        console.print(f"{count(done, 'case')} the corpus already held marked exported")
    elif result.corpus_version is None:
        console.print("nothing new to export")
    else:
        console.print(f"corpus version {result.corpus_version}: {len(result.added)} cases added")


@review_app.command("serve")
def serve(
    host: str = typer.Option("127.0.0.1", help="interface to bind (default: this machine only)"),
    port: int = typer.Option(8765, help="port to listen on"),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    secure_cookie: bool = typer.Option(False, help="mark the session cookie Secure (behind HTTPS)"),
) -> None:
    """Serve the web review app."""
    import uvicorn

    from casemill.review.web import create_app

    store = _store(db)
    app_ = create_app(
        store,
        on_batch_decided=lambda b: _resume_quietly(store, b, "web"),
        secure_cookie=secure_cookie,
    )
    _check_free(host, port)
    console.print(
        f"review app on http://{host}:{port}/ "
        "(sign in with a token from `casemill review token create`)"
    )
    uvicorn.run(app_, host=host, port=port, log_level="warning")


def _check_free(host: str, port: int) -> None:
    """A `UserError` when `host:port` cannot be bound (before the app's address is printed as
    if it were serving there)."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise UserError(f"--host {host}: not an address of this machine ({exc.strerror})") from exc
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise UserError(
                f"cannot serve on {host}:{port} ({exc.strerror}): is another review app running "
                "there? Pick another port with --port"
            ) from exc


@review_app.command("resume")
def resume(
    batch: str = typer.Option(..., "--batch", help="the decided batch whose flow runs wait"),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Resume the flow runs waiting for a decided batch."""
    store = _store(db)
    status = store.batch_status(batch)  # NotFound for a batch never made
    if not status.decided:
        err_console.print(
            f"batch {batch} still has {count(status.pending, 'pending case')}; nothing resumed"
        )
        raise typer.Exit(1)
    from casemill.flows.review import resume_waiting

    resumed = resume_waiting(store, batch, decided_by=_reviewer(None))
    console.print(
        f"resumed {len(resumed)} waiting flow run(s)"
        + (": " + ", ".join(resumed) if resumed else "")
    )


@token_app.command("create")
def token_create(
    reviewer: str = typer.Option(..., "--reviewer", help="the reviewer's name"),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Make a sign-in token for REVIEWER (shown once; only its hash is stored)."""
    from casemill.review.auth import create_token

    token = create_token(_store(db), reviewer)
    console.print(token, soft_wrap=True)


@token_app.command("revoke")
def token_revoke(
    reviewer: str = typer.Option(..., "--reviewer", help="the reviewer's name"),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Revoke every token and session of REVIEWER."""
    from casemill.review.auth import revoke_tokens

    console.print(f"{revoke_tokens(_store(db), reviewer)} token(s) revoked")


def _resume_quietly(store, batch_id: str, who: str) -> None:  # noqa: ANN001
    """Resume flows waiting on a decided batch when a Prefect API is configured."""
    if not os.environ.get("PREFECT_API_URL"):
        return  # a waiting flow's own watcher notices the decision
    from casemill.flows.review import resume_waiting

    try:
        resume_waiting(store, batch_id, decided_by=who)
    except Exception as exc:  # noqa: BLE001 - decisions are kept either way
        err_console.print(
            f"[yellow]could not resume flows waiting on {escape(batch_id)}:[/] {escape(str(exc))}",
            highlight=False,
        )


def _resume_decided(store, batch_ids: set[str]) -> None:  # noqa: ANN001
    for batch_id in sorted(batch_ids):
        if store.batch_status(batch_id).decided:
            _resume_quietly(store, batch_id, "cli")
