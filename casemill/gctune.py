"""Fewer garbage collections while a long batch job runs: the one place Casemill tunes the
collector.

A run that keeps thousands of cases and results alive while it allocates many short-lived objects
(requests, messages, parsed records) pays the cyclic collector again and again to walk the
same long-lived objects: with the default thresholds about 5% of an evaluation run's time, in
pauses of up to 100 ms that stall every request in flight. `fewer_collections()` moves what is
alive on entry out of the collector's way (`gc.freeze`) and collects the young generation every
50,000 allocations instead of 700, then puts both back. Nested and concurrent uses (threads of
one process) share one tuning: the first to enter sets it, the last to leave restores it. The
runner (`casemill.evaluation.runner.run`) and mining (`casemill.mining.pipeline`, `casemill.mining.output`) run inside it.

`bulk_allocation()` is the variant for a load that builds its long-lived objects as it goes (the
validator reading a corpus): it raises the same threshold and, through `checkpoint(count)`,
freezes what was built so far every `FREEZE_EVERY` records.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 50_000

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] | None = None


def tune() -> tuple[int, int, int]:
    """Freeze what is alive and collect less often; returns the thresholds it replaced."""
    saved = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, 20, 20)
    return saved


@contextmanager
def fewer_collections() -> Iterator[None]:
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = tune()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                gc.unfreeze()
                _saved = None


FREEZE_EVERY = 10_000  # records between garbage-collector freezes during a bulk load


@contextmanager
def bulk_allocation() -> Iterator[None]:
    """Fewer garbage-collector passes while many long-lived objects are built (the cases kept):
    with the default thresholds the collector rescans the growing heap over and over. Inside,
    `checkpoint()` also freezes what was built so far (when nothing else froze objects), so
    later passes skip it. Everything is restored on exit."""
    old = gc.get_threshold()
    owns_freeze = gc.get_freeze_count() == 0
    _BULK.append(owns_freeze)
    gc.set_threshold(max(old[0], YOUNG_THRESHOLD), old[1], old[2])
    try:
        yield
    finally:
        _BULK.pop()
        gc.set_threshold(*old)
        if owns_freeze and not _BULK:
            gc.unfreeze()


_BULK: list[bool] = []


def checkpoint(count: int) -> None:
    """Called as records accumulate: inside `bulk_allocation`, freeze every FREEZE_EVERY."""
    if _BULK and _BULK[0] and count % FREEZE_EVERY == 0:
        gc.freeze()
