"""`casemill serve`: without PREFECT_API_URL it starts a local Prefect server, serves the
deployments against that server, and Ctrl-C stops both; with PREFECT_API_URL pointing nowhere
it says so."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from casemill.cli import app
from casemill.errors import UserError
from casemill.flows.server import free_port

ROOT = Path(__file__).resolve().parents[2]


def _deployment_names(api_url: str) -> list[str]:
    try:
        response = httpx.post(f"{api_url}/deployments/filter", json={}, timeout=5)
    except httpx.HTTPError:
        return []
    return [d["name"] for d in response.json()] if response.status_code == 200 else []


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.slow
def test_serve_uses_its_local_server_and_stops_on_ctrl_c(tmp_path, small_corpus):
    project = tmp_path / "project"
    project.mkdir()
    shutil.copytree(small_corpus, project / "corpus")
    shutil.copytree(ROOT / "gates", project / "gates")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / "prefect-home")
    out_path = tmp_path / "serve.log"
    out = open(out_path, "wb")  # noqa: SIM115 - closed after the child exits
    serve = subprocess.Popen(
        [sys.executable, "-m", "casemill.cli", "serve", "--only", "evaluate", "--port", str(port)],
        cwd=project,
        env=env,
        start_new_session=True,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    api_url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and "evaluate-nightly" not in _deployment_names(api_url):
            assert serve.poll() is None, out_path.read_text()[-2000:]
            time.sleep(1)
        assert "evaluate-nightly" in _deployment_names(api_url), out_path.read_text()[-2000:]
        time.sleep(3)  # the runner is polling its server now
        os.killpg(serve.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
        try:
            code = serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            code = None
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait(timeout=30)
        out.close()
    log = out_path.read_text()
    assert code is not None, f"casemill serve still running 30 s after Ctrl-C:\n{log[-3000:]}"
    # served against the server it started, not a temporary one of Prefect's own
    assert "temporary server" not in log, log[-3000:]
    deadline = time.monotonic() + 10
    while _port_open(port) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _port_open(port), "the local Prefect server outlived casemill serve"


def test_serve_says_what_to_do_when_the_server_does_not_answer(monkeypatch, tmp_path):
    api_url = f"http://127.0.0.1:{free_port()}/api"  # nothing listens there
    monkeypatch.setenv("PREFECT_API_URL", api_url)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))
    result = CliRunner().invoke(app, ["serve"])
    # a UserError: `casemill` prints its message alone and exits 2
    assert isinstance(result.exception, UserError), result.exception
    message = " ".join(str(result.exception).split())
    assert f"no Prefect server answers at PREFECT_API_URL={api_url}" in message
    assert "unset PREFECT_API_URL" in message


def test_the_server_url_is_shown_without_its_password(monkeypatch, tmp_path):
    port = free_port()  # nothing listens there
    monkeypatch.setenv("PREFECT_API_URL", f"http://ana:s3cret@127.0.0.1:{port}/api")
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))
    result = CliRunner().invoke(app, ["serve"])
    message = " ".join(str(result.exception).split())
    assert f"PREFECT_API_URL=http://127.0.0.1:{port}/api" in message
    assert "s3cret" not in message and "ana" not in message


@pytest.mark.slow
def test_serve_leaves_the_work_pool_deployments_of_a_team_server_alone(tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from casemill.flows.expand import expand_corpus
    from casemill.flows.server import LocalPrefectServer

    with LocalPrefectServer(tmp_path / "prefect-home", port=free_port(), ui=False) as server:
        with temporary_settings(updates={PREFECT_API_URL: server.api_url}):
            with get_client(sync_client=True) as client:  # what `prefect deploy --all` leaves
                client.create_work_pool(WorkPoolCreate(name="casemill", type="process"))
            expand_corpus.to_deployment(name="expand-nightly", work_pool_name="casemill").apply()
        env = {
            **os.environ,
            "PREFECT_API_URL": server.api_url,
            "PREFECT_HOME": str(tmp_path / "prefect-home"),
        }
        done = subprocess.run(
            [sys.executable, "-m", "casemill.cli", "serve", "--only", "expand"],
            cwd=tmp_path,
            env={**env, "COLUMNS": "300"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        held = httpx.post(f"{server.api_url}/deployments/filter", json={}, timeout=10).json()
    assert done.returncode == 2, done.stdout + done.stderr
    said = " ".join(done.stderr.split())
    assert "runs expand-corpus/expand-nightly (work pool 'casemill') on its workers" in said
    assert "unset PREFECT_API_URL" in said
    assert [(d["name"], d["work_pool_name"], d["paused"]) for d in held] == [
        ("expand-nightly", "casemill", False)
    ]


@pytest.mark.parametrize("only", [["bogus"], ["expand", "Evaluate"]])
def test_serve_refuses_an_unknown_only_before_starting_anything(monkeypatch, tmp_path, only):
    """`--only` names deployments; an unknown one would start a server that serves nothing and
    runs until stopped. Refused up front, naming the choices, with no server started."""
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))
    args = ["serve", "--port", str(free_port())]
    for name in only:
        args += ["--only", name]
    result = CliRunner().invoke(app, args)
    assert isinstance(result.exception, UserError), result.exception
    wrong = ", ".join(name for name in only if name not in ("expand", "mine", "evaluate"))
    assert str(result.exception) == (
        f"--only {wrong}: no such deployment; choose from expand, mine, evaluate"
    )
    assert not (tmp_path / "prefect-home").exists()  # no server was set up
