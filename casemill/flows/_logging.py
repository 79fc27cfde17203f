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

Prefect's console handler prints each log line through a Rich console with emoji codes on, so an
agent named `openai:m:` would be logged as `openaiⓂ` (and a model `gpt:x:` with a cross):
`literal_console_logs()` has every `PrefectConsoleHandler` print lines as they are. It is done
when the flows are imported, and again by a filter on the run loggers before each run log line
(Prefect sets its handlers up once a process, possibly after the import, as on a Dask worker).
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


class LiteralConsole:
    """A Rich console that prints text with emoji codes left as they are (the rest delegated)."""

    def __init__(self, console: Any):
        self.console = console

    def print(self, *objects: Any, **kwargs: Any) -> None:
        kwargs["emoji"] = False
        self.console.print(*objects, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console, name)


def literal_console_logs() -> int:
    """Have Prefect's console handlers (on the root logger and Prefect's loggers) print log
    lines literally; returns how many handlers were changed (0 when done before)."""
    from prefect.logging.handlers import PrefectConsoleHandler

    loggers = [logging.getLogger(), logging.getLogger("prefect")]
    loggers += [logging.getLogger(name) for name in RUN_LOGGERS]
    changed = 0
    for logger in loggers:
        for handler in logger.handlers:
            if isinstance(handler, PrefectConsoleHandler) and not isinstance(
                handler.console, LiteralConsole
            ):
                handler.console = LiteralConsole(handler.console)  # type: ignore[assignment]
                changed += 1
    return changed


class LiteralLogs(logging.Filter):
    """Before a run log line reaches the handlers: Prefect's console handlers print literally."""

    def filter(self, record: logging.LogRecord) -> bool:
        literal_console_logs()
        return True


def literal_logs() -> None:
    """`literal_console_logs()` now, and the `LiteralLogs` filter on Prefect's run loggers."""
    literal_console_logs()
    for name in RUN_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, LiteralLogs) for f in logger.filters):
            logger.addFilter(LiteralLogs())


def not_user_error(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect's `retry_condition_fn`: retry a failed task unless it failed on a `UserError`."""
    try:
        state.result()
    except UserError:
        return False
    except Exception:  # noqa: BLE001 - any other failure is retried as the task says
        return True
    return True
