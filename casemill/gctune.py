"""Fewer garbage collections while a long batch job runs.

A run that keeps thousands of cases and results alive while it allocates many short-lived objects
(requests, messages, parsed records) pays the cyclic collector again and again to walk the
same long-lived objects: with the default thresholds about 5% of an evaluation run's time, in
pauses of up to 100 ms that stall every request in flight. `fewer_collections()` moves what is
alive on entry out of the collector's way (`gc.freeze`) and collects the young generation every
50,000 allocations instead of 700, then puts both back. Nested and concurrent uses (threads of
one process) share one tuning: the first to enter sets it, the last to leave restores it.
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
