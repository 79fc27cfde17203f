from __future__ import annotations

import pytest

from casemill.errors import UserError
from casemill.flows._runtime import batches, configure_prefect_env, task_runner


def test_batches_cut_in_order_without_loss():
    assert batches(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert batches([], 3) == []
    with pytest.raises(ValueError):
        batches([1], 0)


def test_task_runner_settings():
    from prefect.task_runners import ThreadPoolTaskRunner
    from prefect_dask import DaskTaskRunner

    thread = task_runner("thread", 3)
    assert isinstance(thread, ThreadPoolTaskRunner) and thread._max_workers == 3
    local = task_runner("dask", 2)
    assert isinstance(local, DaskTaskRunner) and local.cluster_kwargs["n_workers"] == 2
    remote = task_runner("dask://10.1.2.3:8786")
    assert isinstance(remote, DaskTaskRunner) and remote.address == "tcp://10.1.2.3:8786"
    with pytest.raises(UserError, match="unknown task runner 'ray'"):
        task_runner("ray")


def test_configure_prefect_env_keeps_what_the_user_set(monkeypatch, tmp_path):
    monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "true")
    monkeypatch.delenv("PREFECT_HOME", raising=False)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    configure_prefect_env(home=tmp_path / "home")
    import os

    assert os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] == "true"
    assert os.environ["PREFECT_HOME"] == str((tmp_path / "home").resolve())


def test_configure_prefect_env_leaves_a_configured_server_alone(monkeypatch, tmp_path):
    monkeypatch.delenv("PREFECT_HOME", raising=False)
    monkeypatch.setenv("PREFECT_API_URL", "http://prefect.example:4200/api")
    configure_prefect_env(home=tmp_path / "home")
    import os

    assert "PREFECT_HOME" not in os.environ
