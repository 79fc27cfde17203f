"""Prefect set-up shared by every flow: environment defaults and the task-runner setting.

`configure_prefect_env()` only fills in what the user has not set: telemetry off (this machine
class has no internet), a longer start-up timeout for the ephemeral server (a fresh database
takes ~25 s to start), and, when `home` is given, a project-local `PREFECT_HOME`.
It must run before `prefect` is imported, which `casemill/flows/__init__.py` does.
"""

from __future__ import annotations

import functools
import hashlib
import os
from datetime import UTC
from pathlib import Path
from typing import Any

DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_LOGGING_LEVEL": "INFO",
    "PREFECT_RESULTS_PERSIST_BY_DEFAULT": "false",
}


def configure_prefect_env(home: Path | None = None) -> None:
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
    if (
        home is not None
        and "PREFECT_HOME" not in os.environ
        and "PREFECT_API_URL" not in os.environ
    ):
        home.mkdir(parents=True, exist_ok=True)
        os.environ["PREFECT_HOME"] = str(home.resolve())


def task_runner(setting: str = "thread", max_workers: int = 4) -> Any:
    """A Prefect task runner from a setting string.

    - `thread` (default): a bounded thread pool on this machine;
    - `dask`: a local Dask cluster (`max_workers` worker processes, one thread each);
    - `dask://HOST:PORT` or `tcp://HOST:PORT`: an existing Dask scheduler (a real cluster).

    On Dask, the tasks report to the flow's Prefect API, also when that is Prefect's temporary
    server (`casemill.flows._dask`): a worker never starts a server of its own.
    """
    if setting == "thread":
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner(max_workers=max_workers)
    if setting == "dask":
        from casemill.flows._dask import FlowApiDaskTaskRunner

        return FlowApiDaskTaskRunner(
            cluster_kwargs={
                "n_workers": max_workers,
                "threads_per_worker": 1,
                "processes": True,
                "dashboard_address": None,
            }
        )
    if setting.startswith(("dask://", "tcp://")):
        from casemill.flows._dask import FlowApiDaskTaskRunner

        return FlowApiDaskTaskRunner(address=setting.replace("dask://", "tcp://", 1))
    from casemill.errors import UserError

    raise UserError(f"unknown task runner {setting!r}: use 'thread', 'dask' or 'tcp://HOST:PORT'")


def batches(items: list, size: int) -> list[list]:
    """`items` cut into consecutive batches of at most `size` (one Prefect task per batch)."""
    if size < 1:
        raise ValueError("batch size must be at least 1")
    return [items[i : i + size] for i in range(0, len(items), size)]


def default_task_runner() -> Any:
    """The task runner flows are defined with: `CASEMILL_TASK_RUNNER` (thread, dask or a Dask
    scheduler address) with `CASEMILL_TASK_WORKERS` workers; override per call with
    `flow.with_options(task_runner=task_runner(...))`."""
    return task_runner(
        os.environ.get("CASEMILL_TASK_RUNNER", "thread"),
        int(os.environ.get("CASEMILL_TASK_WORKERS", "4")),
    )


# the core every stage calls: the case model, domains, validation, formats, corpus, I/O
_CORE = (
    "casemill.case",
    "casemill.domains",
    "casemill.validation",
    "casemill.formats",
    "casemill.corpus",
    "casemill.io",
)


@functools.cache
def code_fingerprint(*packages: str) -> str:
    """A hash of the source of `packages` (say `casemill.mining`) and of casemill's core: passed
    to cached tasks as an input, so that a task cached on INPUTS + TASK_SOURCE is recomputed when
    the library code it calls changes, not only when the task's own source does."""
    import importlib

    top = Path(importlib.import_module("casemill").__file__).parent
    digest = hashlib.sha256()
    paths = sorted(top.glob("*.py"))
    for name in (*_CORE, *packages):
        root = Path(importlib.import_module(name).__file__).parent
        paths.extend(sorted(root.rglob("*.py")))
    for path in paths:
        digest.update(str(path.relative_to(top)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def fill_dates(template: str, name: str, start: Any = None) -> str:
    """`template` with `{date}` (2026-11-23) and `{datetime}` (20261123T040000Z) filled in from
    `start`, by default the flow run's scheduled start (the time now outside a flow run), which
    a retry of the run keeps, in UTC; `name` is the parameter it came from, for the error."""
    if "{" not in template:
        return template
    if start is None:
        from prefect.runtime import flow_run

        start = flow_run.scheduled_start_time
    start = start.astimezone(UTC)
    try:
        return template.format(
            date=start.strftime("%Y-%m-%d"), datetime=start.strftime("%Y%m%dT%H%M%SZ")
        )
    except (KeyError, IndexError, ValueError) as exc:
        from casemill.errors import UserError

        raise UserError(
            f"{name} {template!r}: only {{date}} and {{datetime}} can be filled in ({exc!r})"
        ) from exc
