"""`casemill.gctune.fewer_collections`: collects less while it runs, restores the collector after,
and nested or concurrent uses share one tuning."""

from __future__ import annotations

import gc
import threading

from casemill.gctune import YOUNG_THRESHOLD, fewer_collections


def test_thresholds_raised_inside_and_restored_after():
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        assert gc.get_freeze_count() > 0  # what was alive on entry is out of the collector's way
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_nested_uses_restore_only_when_the_outermost_leaves():
    before = gc.get_threshold()
    with fewer_collections():
        with fewer_collections():
            pass
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD  # the inner exit left the tuning on
    assert gc.get_threshold() == before


def test_concurrent_threads_share_one_tuning():
    before = gc.get_threshold()
    inside, release = threading.Barrier(3), threading.Event()
    seen: list[int] = []

    def worker() -> None:
        with fewer_collections():
            inside.wait()
            release.wait(5)
            seen.append(gc.get_threshold()[0])

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    inside.wait()
    release.set()
    for t in threads:
        t.join(5)
    assert seen == [YOUNG_THRESHOLD, YOUNG_THRESHOLD]
    assert gc.get_threshold() == before


def test_an_exception_inside_still_restores():
    before = gc.get_threshold()
    try:
        with fewer_collections():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before
