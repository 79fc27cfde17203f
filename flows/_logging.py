"""Prefect's run logs, told what a `UserError` is: a message for the person who started the run.

Prefect logs the exception that ends a task run (`Task run failed with exception: ...`) and the
one that ends a flow run (`Encountered exception during execution: ...`), each with its
traceback (`exc_info`); an exception raised in a task, or in a subflow, ends the enclosing flow
run too, so the same error is logged again by every run it passes through. For a `UserError`
(bad input, said with what to do) the traceback only buries the message: `quiet_user_errors()`
adds a standard `logging.Filter` to Prefect's run loggers (`prefect.flow_runs`,
`prefect.task_runs`, where Prefect's `logging.yml` lets a project add filters) that keeps the
first record of a `UserError` without its traceback and drops the records of the same exception
logged again by an enclosing run (its final state still names it). Any other exception keeps its
traceback every time. The runs end `Failed` as before: only what is logged changes.

Tasks with retries take `retry_condition_fn=not_user_error`: bad input does not fix itself, so
a `UserError` is not retried (each retry would log it again, and wait).
"""

from __future__ import annotations

import logging
from typing import Any

from casemill.errors import UserError

RUN_LOGGERS = ("prefect.flow_runs", "prefect.task_runs")
_LOGGED = "_casemill_logged"  # set on a UserError once a run logger has shown it


class QuietUserErrors(logging.Filter):
    """A `UserError`'s record without its traceback, once per exception object."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, UserError):
            return True
        if getattr(exc, _LOGGED, False):
            return False
        setattr(exc, _LOGGED, True)
        record.exc_info = None
        record.exc_text = None
        return True


def quiet_user_errors() -> None:
    """Add `QuietUserErrors` to Prefect's run loggers (once; Prefect's own logging set-up keeps
    a logger's filters)."""
    for name in RUN_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, QuietUserErrors) for f in logger.filters):
            logger.addFilter(QuietUserErrors())


def not_user_error(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect's `retry_condition_fn`: retry a failed task unless it failed on a `UserError`."""
    try:
        state.result()
    except UserError:
        return False
    except Exception:  # noqa: BLE001 - any other failure is retried as the task says
        return True
    return True
