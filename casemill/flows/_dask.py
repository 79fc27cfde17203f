"""A Dask task runner whose workers report to the flow's own Prefect API.

A task submitted to Dask runs on a worker process with the Prefect settings the flow sends
along with it (`prefect.context.serialize_context`). When the flow runs on Prefect's temporary
(ephemeral) server, those settings name no `PREFECT_API_URL`, so each worker's first Prefect
call started a temporary server of its own (a fresh database, ~25 s, 4x the flow's wall time),
and the flow's server never saw the task runs. `FlowApiDaskTaskRunner` hands the workers the
URL of the server the flow talks to, in the settings sent with each task: the workers' task
runs, their states and their logs land on the flow's server, and no worker starts one. With
`PREFECT_API_URL` set, the settings already carry it and the runner is `DaskTaskRunner`'s own.

A local cluster's workers are forked from one process that imported Prefect and the flow's
module once (multiprocessing's forkserver) instead of each starting a fresh interpreter that
imports them again (spawn, Dask's default): see `forked_workers`.

Kept apart from `_runtime` because importing `prefect_dask` imports `distributed` (~1 s): only a
flow set to run on Dask pays for it.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
from collections.abc import Iterable
from typing import Any

import dask
from prefect.context import FlowRunContext, SettingsContext, get_settings_context
from prefect.settings import PREFECT_API_URL, Settings
from prefect_dask import DaskTaskRunner

logger = logging.getLogger(__name__)

START_METHOD = "distributed.worker.multiprocessing-method"
# what every task on a worker imports: loaded once in the fork server, not once a worker
PRELOAD = ("distributed", "prefect", "prefect_dask", "casemill.flows._dask")


def flow_api_url() -> str | None:
    """The API URL of the temporary server the current flow run talks to; None when
    `PREFECT_API_URL` is set (the workers get it with the settings Prefect sends along) or
    outside a flow run (a Dask worker entering the flow's task runner again)."""
    if PREFECT_API_URL.value():
        return None
    context = FlowRunContext.get()
    if context is None or context.client is None:
        return None
    return str(context.client.api_url)


def settings_for_workers() -> Settings | None:
    """The current settings with `PREFECT_API_URL` naming the flow's temporary server; None
    when there is nothing to add (see `flow_api_url`)."""
    url = flow_api_url()
    if url is None:
        return None
    logger.debug("Dask workers will report to the flow's temporary server at %s", url)
    return get_settings_context().settings.copy_with_update(updates={PREFECT_API_URL: url})


def forked_workers(modules: Iterable[str]) -> contextlib.AbstractContextManager:
    """Dask's configuration under which a local cluster forks its worker processes from a
    server process that imported `modules` once (multiprocessing's forkserver), rather than
    spawning fresh interpreters that each import Prefect and Casemill again (Dask's default):
    on 2 cores, 2 workers ready to run an evaluation batch in ~7 s instead of ~20 s, and
    shutting down in 0.1 s instead of ~3 s. Left as it is where the start method was
    configured (not `spawn`) or the platform has no forkserver. The modules apply when the
    fork server starts, the first time in a process."""
    if dask.config.get(START_METHOD) != "spawn":
        return contextlib.nullcontext()
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return contextlib.nullcontext()
    from distributed.utils import get_mp_context

    config = dask.config.set({START_METHOD: "forkserver"})  # in force until the caller's with
    get_mp_context().set_forkserver_preload(list(dict.fromkeys(modules)))
    return config


class FlowApiDaskTaskRunner(DaskTaskRunner):
    """`prefect_dask.DaskTaskRunner` whose tasks run on the workers against the flow's Prefect
    API, even when that is a temporary server (see the module's docstring).

    >>> from casemill.flows._dask import FlowApiDaskTaskRunner
    >>> runner = FlowApiDaskTaskRunner(cluster_kwargs={"n_workers": 2, "processes": True})
    >>> runner.duplicate().cluster_kwargs["n_workers"]
    2
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._worker_settings: Settings | None = None
        self._resolved = False  # worked out on the first submission

    def __exit__(self, *args: Any) -> None:
        self._worker_settings, self._resolved = None, False
        super().__exit__(*args)

    def submit(self, task: Any, parameters: Any, wait_for: Any = None, dependencies: Any = None):
        """Submit as `DaskTaskRunner` does, with the settings that name the flow's server in
        force while the task's context is captured for the worker. They are worked out on the
        first submission: the runner is entered before the flow run's context exists."""
        if not self._resolved:
            self._worker_settings, self._resolved = settings_for_workers(), True
        if self._client is None and self._cluster is None and not self.address:
            with forked_workers([*PRELOAD, getattr(task.fn, "__module__", "prefect")]):
                self.client  # noqa: B018 (starts the local cluster, under that configuration)
        if self._worker_settings is None:
            return super().submit(task, parameters, wait_for, dependencies)
        profile = get_settings_context().profile
        with SettingsContext(profile=profile, settings=self._worker_settings):
            return super().submit(task, parameters, wait_for, dependencies)
