"""Mining on several processes, with the same output as one.

Redaction and case derivation (`pipeline.work`, most of mining's time) depend on nothing but the
conversation at hand, so worker processes do them, a batch of parsed records at a time. This
process keeps what has to see the records in order: parsing (a parser's state can span lines:
transcripts, OpenTelemetry spans grouped by trace), deduplication (a case is a duplicate of one
before it) and the counts, which `pipeline.account` does for each batch in input order. The
candidates, quarantine and summary are therefore byte for byte those of a run in one process.

A worker hands each case back as a `PackedCase` (its JSON and its dedup keys), which is several
times cheaper to send than the model. Memory stays flat: at most `AHEAD` batches a worker are in
flight. Workers start from a fork server that has imported mining already, so none inherits
this process's threads (a progress bar, Prefect's task runner).
"""

from __future__ import annotations

import multiprocessing
import signal
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor

from casemill.case.model import Case
from casemill.dedup import case_text
from casemill.gctune import tune
from casemill.mining.dedup import KeepAll, MinedDeduper, signature
from casemill.mining.derive.cases import DeriveOptions
from casemill.mining.model import Conversation, PackedCase, Quarantined
from casemill.mining.pipeline import Item, MineOptions, Tally, Worked, account, counted_as, work

BATCH = 64  # records a task: enough to make sending them cheap, few enough to keep order close
AHEAD = 4  # batches a worker in flight

_options: MineOptions | None = None  # the run's options, set once in each worker


def pack(case: Case) -> PackedCase:
    kind, confidence = counted_as(case)
    return PackedCase(
        json=case.__pydantic_serializer__.to_json(case),
        id=case.id,
        signature=signature(case),
        text=case_text(case),
        kind=kind,
        confidence=confidence,
        domain=case.domain,
    )


def _start(options: MineOptions) -> None:
    global _options
    _options = options
    tune()  # a worker lives for one run: the collector tuned for the whole of it
    # Ctrl-C reaches every process of the terminal's group: the main process stops the run
    # (cancelling what is queued, removing the unfinished files); workers do not each raise
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _mine_batch(derive: DeriveOptions, items: list[Conversation | Quarantined]) -> list[Worked]:
    assert _options is not None, "worker started without the run's options"
    done = []
    for item in items:
        worked = work(item, _options, derive)
        worked.cases = [pack(case) for case in worked.cases]
        done.append(worked)
    return done


def _context() -> multiprocessing.context.BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["casemill.mining.parallel"])
        return ctx
    return multiprocessing.get_context("spawn")


def _batches(
    records: Iterable[tuple[DeriveOptions, Conversation | Quarantined]],
) -> Iterator[tuple[DeriveOptions, list[Conversation | Quarantined]]]:
    """Consecutive records of one file (one set of derivation options), `BATCH` at a time."""
    current: DeriveOptions | None = None
    batch: list[Conversation | Quarantined] = []
    for derive, item in records:
        if batch and (derive is not current or len(batch) >= BATCH):
            yield current, batch  # type: ignore[misc]
            batch = []
        current = derive
        batch.append(item)
    if batch:
        yield current, batch  # type: ignore[misc]


def mine_in_workers(
    records: Iterable[tuple[DeriveOptions, Conversation | Quarantined]],
    options: MineOptions,
    tally: Tally,
    deduper: MinedDeduper | KeepAll,
) -> Iterator[Item]:
    """`pipeline.iter_mine`'s items for `records`, mined by `options.workers` processes."""
    workers = options.workers
    pool = ProcessPoolExecutor(
        workers, mp_context=_context(), initializer=_start, initargs=(options,)
    )
    inflight: deque[Future[list[Worked]]] = deque()

    def settle(keep: int) -> Iterator[Item]:  # the oldest batches, in order, until `keep` are left
        while len(inflight) > keep:
            for worked in inflight.popleft().result():
                yield from account(worked, tally, deduper)

    try:
        for derive, batch in _batches(records):
            inflight.append(pool.submit(_mine_batch, derive, batch))
            yield from settle(workers * AHEAD - 1)
        yield from settle(0)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
