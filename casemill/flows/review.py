"""Waiting for reviewers in a flow.

`review_batch` enqueues a batch, waits until every case of it is decided, then exports the
approved ones as a new corpus version. It waits with Prefect's `pause_flow_run` and a typed
`BatchDecided` input: the web app and `casemill review resume` find the paused run (PAUSED state,
`batch_id` in its parameters) and resume it when the batch's last item is decided. A watcher
thread in the flow polls the queue as well and resumes its own run, so a decision made while no
resumer could reach the Prefect API (or in the instant before the pause) never strands the flow.
Without Prefect, `wait_for_batch` polls the queue.

The store is the truth: after every resume the flow re-reads the batch and waits again while
anything is still pending.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.exceptions import FlowPauseTimeout
from prefect.input import RunInput

from casemill.corpus import CorpusStore, writable_corpus
from casemill.errors import UserError
from casemill.flows import _artifacts as artifacts
from casemill.flows._runtime import fill_dates
from casemill.review.errors import NotFound
from casemill.review.export import ExportResult, export_batch
from casemill.review.intake import enqueue_file, find_parents
from casemill.review.items import BatchStatus
from casemill.review.store import ReviewStore
from casemill.settings import Settings
from casemill.text import count

log = logging.getLogger(__name__)

FLOW_NAME = "review-batch"
POLICIES = ("human", "auto")


class BatchDecided(RunInput):
    """What resumes a waiting review flow: the batch is decided."""

    batch_id: str
    approved: int = 0
    rejected: int = 0
    decided_by: str = ""


class BatchTimeout(UserError):
    """The batch was not decided in time."""


def wait_for_batch(
    store: ReviewStore,
    batch_id: str,
    timeout_s: float,
    poll_s: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> BatchStatus:
    """Poll the queue until no case of `batch_id` is pending; raises `BatchTimeout` after
    `timeout_s`, and `NotFound` for a batch the queue does not have (an enqueue whose cases
    were all queued in other batches makes none: see `EnqueueResult.batch_exists`)."""
    deadline = clock() + timeout_s
    while True:
        status = store.batch_status(batch_id)
        if not status.pending:
            return status
        if clock() >= deadline:
            raise _timeout(status, timeout_s)
        sleep(poll_s)


def _timeout(status: BatchStatus, timeout_s: float) -> BatchTimeout:
    return BatchTimeout(
        f"batch {status.batch_id} not decided within {timeout_s:g} s: {status.pending} of "
        f"{status.total} still pending; review them with `casemill review next --filter "
        f"batch={status.batch_id}`"
    )


def paused_runs(batch_id: str) -> list[Any]:
    """Paused `review-batch` runs waiting for `batch_id` (needs a reachable Prefect API)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowFilter,
        FlowFilterName,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            flow_filter=FlowFilter(name=FlowFilterName(any_=[FLOW_NAME])),
            flow_run_filter=FlowRunFilter(
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED]))
            ),
        )
    return [r for r in runs if run_batch_id(r) == batch_id]


def run_batch_id(run: Any) -> str | None:
    """The batch a `review-batch` run waits for: its `batch_id` parameter, with `{date}` and
    `{datetime}` filled in from its scheduled start as the run itself did."""
    batch_id = (run.parameters or {}).get("batch_id")
    if not isinstance(batch_id, str) or "{" not in batch_id:
        return batch_id
    try:
        return fill_dates(batch_id, "batch_id", run.expected_start_time)
    except UserError:
        return None


def resume_waiting(store: ReviewStore, batch_id: str, decided_by: str = "") -> list[str]:
    """Resume every flow run paused on `batch_id` if the batch is decided; the resumed run ids."""
    from prefect.flow_runs import resume_flow_run

    status = store.batch_status(batch_id)
    if not status.decided:
        return []
    payload = BatchDecided(
        batch_id=batch_id, approved=status.approved, rejected=status.rejected, decided_by=decided_by
    ).model_dump(mode="json")
    resumed = []
    for run in paused_runs(batch_id):
        resume_flow_run(run.id, run_input=payload)
        resumed.append(str(run.id))
        log.info("batch %s decided: resumed flow run %s", batch_id, run.id)
    return resumed


class _Watcher:
    """Polls the queue while the flow is paused and resumes the run once the batch is decided."""

    def __init__(self, store: ReviewStore, batch_id: str, run_id: Any, every_s: float):
        self.store, self.batch_id, self.run_id, self.every_s = store, batch_id, run_id, every_s
        self._stop = threading.Event()
        ctx = contextvars.copy_context()  # carries Prefect's settings (API URL) into the thread
        self._thread = threading.Thread(target=ctx.run, args=(self._loop,), daemon=True)

    def __enter__(self) -> _Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        from prefect.flow_runs import resume_flow_run

        while not self._stop.wait(self.every_s):
            try:
                status = self.store.batch_status(self.batch_id)
                if status.decided:
                    payload = BatchDecided(
                        batch_id=self.batch_id,
                        approved=status.approved,
                        rejected=status.rejected,
                        decided_by="watcher",
                    )
                    resume_flow_run(self.run_id, run_input=payload.model_dump(mode="json"))
                    return
            except Exception:  # noqa: BLE001 - not paused yet, or already resumed: poll again
                log.debug("watcher: resume of %s not possible yet", self.run_id, exc_info=True)


def summary_rows(status: BatchStatus, exported: dict) -> list[dict[str, str]]:
    """The review flow's summary artifact: the batch's decisions and what the export added."""
    return [
        {"figure": "total", "value": str(status.total)},
        {"figure": "approved", "value": str(status.approved)},
        {"figure": "rejected", "value": str(status.rejected)},
        {"figure": "pending", "value": str(status.pending)},
        {"figure": "exported", "value": str(len(exported.get("added", ())))},
        {"figure": "corpus_version", "value": str(exported.get("corpus_version") or "unchanged")},
    ]


def check_open(store: ReviewStore, batch_id: str) -> None:
    """Refuse a batch that was closed (decided and exported; its decisions are final): the new
    cases would join it pending, no reviewer could decide them, and the flow would wait for
    them until its timeout."""
    try:
        closed = store.batch_status(batch_id).closed
    except NotFound:  # a new batch
        return
    if closed:
        raise UserError(
            f"review batch {batch_id!r} is closed (decided and exported): new cases cannot join "
            "it. Give each run a batch of its own: batch_id 'review-{datetime}' (or '{date}') "
            "is filled in with the run's scheduled start"
        )


def enqueue_message(batch_id: str, counts: dict) -> str:
    """What the flow logs of its enqueue, in words (it logged the counts' dict repr)."""
    parts = [
        f"{counts['added']} queued",
        f"{counts['already_queued']} already queued",
        f"{counts['invalid']} failing validation",
        f"{counts['quarantined']} bad lines quarantined",
    ]
    if counts.get("auto_approved"):
        parts.append(f"{counts['auto_approved']} approved by the auto policy")
    return f"batch {batch_id}: " + ", ".join(parts)


def export_message(batch_id: str, exported: dict) -> str:
    """What the flow logs of its export: the cases added and the new version, or that the
    corpus is unchanged (not 'corpus version None')."""
    added, already = len(exported.get("added", ())), len(exported.get("already_in_corpus", ()))
    if added:
        version = exported["corpus_version"]
        return (
            f"batch {batch_id} exported: {count(added, 'case')} added to corpus version {version}"
        )
    return (
        f"batch {batch_id}: no approved case to add ({already} already in the corpus); "
        "the corpus is unchanged"
    )


def parent_lookup(
    corpus_dir: str | Path | None, seeds: str | Path | None
) -> tuple[list[Path], CorpusStore | None]:
    """Where the flow looks up the parents of the cases it enqueues, as `casemill review enqueue`
    does: the seeds (a file or folder; default the configured seeds folder), when they exist,
    and the corpus. Without them a reviewer sees no parent and no operator diff for the cases
    the nightly expansion made of the seeds."""
    seeds_path = Path(seeds) if seeds else Settings().seeds_dir
    sources = [seeds_path] if seeds_path.exists() else []
    corpus = CorpusStore(corpus_dir) if corpus_dir and Path(corpus_dir).is_dir() else None
    return sources, corpus


def enqueue_batch(
    store: ReviewStore,
    batch_id: str,
    cases_path: str | None,
    cases: list[dict] | None,
    policy: str,
    corpus_dir: str | Path | None = None,
    seeds_dir: str | Path | None = None,
) -> dict:
    """Enqueue the flow's cases with their parents, looked up as `casemill review enqueue`
    does (the same file, the seeds folder, the corpus), so that reviewers see what each
    operator changed; then apply the `auto` policy. Returns the counts."""
    from casemill.case.model import Case

    sources, corpus = parent_lookup(corpus_dir, seeds_dir)
    if cases_path:
        result, loaded = enqueue_file(
            store, cases_path, batch_id, sources, corpus, policy=policy, actor="flow"
        )
        bad = len(loaded.errors)
    else:
        models = [Case.model_validate(c) for c in cases or []]
        parents = find_parents(models, sources, corpus)
        result = store.enqueue(models, batch_id, parents=parents, policy=policy, actor="flow")
        bad = 0
    auto = store.auto_decide(batch_id) if policy == "auto" else None
    return {
        "added": len(result.added),
        "already_queued": len(result.already_queued),
        "invalid": len(result.invalid),
        "quarantined": bad,
        "auto_approved": len(auto.changed) if auto else 0,
        "batch_made": result.batch_exists,
    }


@task(name="review-enqueue")
def enqueue_task(
    db_url: str,
    batch_id: str,
    cases_path: str | None,
    cases: list[dict] | None,
    policy: str,
    corpus_dir: str | None = None,
    seeds: str | None = None,
) -> dict:
    store = ReviewStore.open(db_url)
    return enqueue_batch(store, batch_id, cases_path, cases, policy, corpus_dir, seeds)


@task(name="review-export")
def export_task(db_url: str, batch_id: str, corpus_dir: str) -> dict:
    result = export_batch(ReviewStore.open(db_url), CorpusStore(corpus_dir), batch_id, actor="flow")
    return result.as_dict()


@flow(name=FLOW_NAME, log_prints=False)
def review_batch(
    batch_id: str,
    cases_path: str | None = None,
    cases: list[dict] | None = None,
    corpus_dir: str = "corpus",
    policy: str = "human",
    timeout_s: int = 86_400,
    db_url: str | None = None,
    watch_s: float | None = 5.0,
    wait: bool = True,
    seeds: str | None = None,
) -> dict:
    """Enqueue a batch, wait until it is decided (pause with a typed input), export the
    approved cases as a new corpus version. Returns the export summary. `{date}` and
    `{datetime}` in `batch_id` are filled in with the run's scheduled start (UTC), so a
    deployment gives each run a batch of its own; a closed batch is refused. The cases' parents are
    looked up in the batch, in `seeds` (default: `CASEMILL_SEEDS_DIR`, else `seeds`) and in the
    corpus, so reviewers see what each operator changed.

    With `wait=False` (for unattended runs, usually with `policy="auto"`) the flow does not
    wait: it exports what is approved now and leaves the rest pending for reviewers (a later
    `casemill review export --batch ID` adds them)."""
    from prefect.context import get_run_context
    from prefect.flow_runs import pause_flow_run

    logger = get_run_logger()
    if policy not in POLICIES:
        raise UserError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    if (cases_path is None) == (cases is None):
        raise UserError("give exactly one of cases_path or cases")
    if cases_path is not None and not Path(cases_path).is_file():
        raise UserError(f"cases_path {cases_path}: no such file of candidate cases")
    writable_corpus(corpus_dir, "corpus_dir")  # before anything is enqueued or exported
    settings = Settings()
    url = db_url or settings.review_db
    batch_id = fill_dates(batch_id, "batch_id")
    check_open(ReviewStore.open(url), batch_id)
    counts = enqueue_task(
        url,
        batch_id,
        str(Path(cases_path)) if cases_path else None,
        cases,
        policy,
        corpus_dir,
        seeds or str(settings.seeds_dir),
    )
    logger.info(enqueue_message(batch_id, counts))
    store = ReviewStore.open(url)
    if not counts["batch_made"]:  # no batch to wait for: nothing to review, nothing to export
        logger.info(
            "batch %s: nothing to review, so no batch made (%d cases already queued in other "
            "batches, which export them, %d bad lines); not waiting",
            batch_id,
            counts["already_queued"],
            counts["quarantined"],
        )
        return ExportResult(batch_id, None, (), (), False).as_dict()
    run_id = get_run_context().flow_run.id
    deadline = time.monotonic() + timeout_s
    status, rounds = store.batch_status(batch_id), 0
    while wait and status.pending:
        remaining = int(deadline - time.monotonic())
        if remaining <= 0:
            raise _timeout(status, timeout_s)
        logger.info(
            "waiting for reviewers: batch %s has %d of %d pending",
            batch_id,
            status.pending,
            status.total,
        )
        watcher = (
            _Watcher(store, batch_id, run_id, watch_s) if watch_s else contextlib.nullcontext()
        )
        got, timed_out = None, False
        with watcher:
            try:
                got = pause_flow_run(
                    wait_for_input=BatchDecided,
                    timeout=remaining,
                    poll_interval=1,
                    key=artifacts.artifact_key(f"review-{batch_id}-{rounds}"),  # a-z, 0-9, -
                )
            except FlowPauseTimeout:
                timed_out = True  # the queue decides: a batch decided at the last moment goes on
        logger.info("resumed with %s", got.model_dump(mode="json") if got is not None else None)
        rounds += 1
        status = store.batch_status(batch_id)
        if timed_out and status.pending:
            raise _timeout(status, timeout_s)
    exported = export_task(url, batch_id, corpus_dir)
    artifacts.table(
        f"review-{batch_id}",
        summary_rows(store.batch_status(batch_id), exported),
        f"review batch {batch_id}: decisions and export",
    )
    logger.info(export_message(batch_id, exported))
    return exported
