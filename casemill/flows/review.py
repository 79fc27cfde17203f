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

from casemill.errors import UserError
from casemill.flows import _artifacts as artifacts
from casemill.flows._runtime import fill_dates
from casemill.review.export import ExportResult
from casemill.review.items import BatchStatus
from casemill.review.stage import (
    POLICIES,
    EnqueueRequest,
    ExportRequest,
    check_enqueue,
    enqueue_message,
    enqueue_part,
    export_message,
    nothing_to_review_message,
    run_export,
    summary_rows,
)
from casemill.review.store import ReviewStore
from casemill.settings import Settings

log = logging.getLogger(__name__)

FLOW_NAME = "review-batch"
__all__ = [  # with the stage's helpers the flow logs with (imported from here before)
    "POLICIES",
    "BatchDecided",
    "BatchTimeout",
    "enqueue_batch",
    "enqueue_message",
    "enqueue_task",
    "export_message",
    "export_task",
    "paused_runs",
    "resume_waiting",
    "review_batch",
    "run_batch_id",
    "summary_rows",
    "wait_for_batch",
]


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


def enqueue_batch(
    store: ReviewStore,
    batch_id: str,
    cases_path: str | None,
    cases: list[dict] | None,
    policy: str,
    corpus_dir: str | Path | None = None,
    seeds_dir: str | Path | None = None,
) -> dict:
    """The flow's enqueue (`casemill.review.stage.enqueue_part`): the cases with their parents,
    looked up as `casemill review enqueue` does (the same file, the seeds folder, the corpus),
    then the `auto` policy. Returns the counts."""
    return enqueue_part(
        _enqueue_request(batch_id, cases_path, cases, policy, corpus_dir, seeds_dir), store
    ).counts()


def _enqueue_request(
    batch_id: str,
    cases_path: str | None,
    cases: list[dict] | None,
    policy: str,
    corpus_dir: str | Path | None,
    seeds: str | Path | None,
    db_url: str = "",
) -> EnqueueRequest:
    """The flow's parameters as the stage's request: errors name the corpus `corpus_dir`, a
    closed batch is refused (the flow would wait on it), and the audit says "flow"."""
    return EnqueueRequest(
        db_url=db_url,
        cases_path=Path(cases_path) if cases_path is not None else None,
        cases=tuple(cases) if cases is not None else None,
        batch_id=batch_id,
        seeds_dir=Path(seeds) if seeds else None,
        corpus_dir=Path(corpus_dir) if corpus_dir else None,
        corpus_option="corpus_dir",
        refuse_closed=True,
        policy=policy,
        actor="flow",
    )


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
    request = ExportRequest(
        db_url, batch_id, Path(corpus_dir), corpus_option="corpus_dir", actor="flow"
    )
    return run_export(request).as_dict()


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
    logger = get_run_logger()
    url = db_url or Settings().review_db
    batch_id = fill_dates(batch_id, "batch_id")
    # checked before anything is enqueued or exported
    check_enqueue(_enqueue_request(batch_id, cases_path, cases, policy, corpus_dir, seeds, url))
    cases_path = str(Path(cases_path)) if cases_path else None
    counts = enqueue_task(url, batch_id, cases_path, cases, policy, corpus_dir, seeds)
    logger.info(enqueue_message(batch_id, counts))
    if not counts["batch_made"]:  # no batch to wait for: nothing to review, nothing to export
        logger.info(nothing_to_review_message(batch_id, counts))
        return ExportResult.nothing(batch_id).as_dict()
    store = ReviewStore.open(url)
    if wait:
        _wait_decided(store, batch_id, timeout_s, watch_s, logger)
    exported = export_task(url, batch_id, corpus_dir)
    artifacts.table(
        f"review-{batch_id}",
        summary_rows(store.batch_status(batch_id), exported),
        f"review batch {batch_id}: decisions and export",
    )
    logger.info(export_message(batch_id, exported))
    return exported


def _wait_decided(
    store: ReviewStore, batch_id: str, timeout_s: int, watch_s: float | None, logger: Any
) -> None:
    """Pause the run (a typed `BatchDecided` input resumes it) until no case of the batch is
    pending, re-reading the queue after every resume; `BatchTimeout` after `timeout_s`. With
    `watch_s`, a `_Watcher` polls the queue meanwhile and resumes the run itself."""
    from prefect.context import get_run_context
    from prefect.flow_runs import pause_flow_run

    run_id = get_run_context().flow_run.id
    deadline = time.monotonic() + timeout_s
    status, rounds = store.batch_status(batch_id), 0
    while status.pending:
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
