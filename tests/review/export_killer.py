"""Run `casemill review export` and kill it with SIGKILL at step N (`KILL_AT`), as a crash or
`kill -9` would. Used as a script by `test_review_export_kill.py`.

The steps are the export's writes, counted in order: each queue row written (its claims, then
its marks) and each corpus file, before and after it is written. A step past the last one lets
the export finish.
"""

from __future__ import annotations

import os
import signal
import sys

import casemill.corpus.store as corpus_store
from casemill.cli import main
from casemill.review.store import ReviewStore

KILL_AT = int(os.environ["KILL_AT"])
_steps = [0]


def _step() -> None:
    _steps[0] += 1
    if _steps[0] == KILL_AT:
        os.kill(os.getpid(), signal.SIGKILL)


def _counted(fn, after: bool = False):  # noqa: ANN001, ANN202
    def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        _step()
        result = fn(*args, **kwargs)
        if after:
            _step()
        return result

    return wrapper


ReviewStore._write = _counted(ReviewStore._write)
ReviewStore.close_if_done = _counted(ReviewStore.close_if_done, after=True)
corpus_store.atomic_write_text = _counted(corpus_store.atomic_write_text, after=True)

if __name__ == "__main__":
    sys.argv = ["casemill", "review", "export", *sys.argv[1:]]
    main()
