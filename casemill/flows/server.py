"""A local Prefect server for `casemill serve` and the scheduling tests.

Cron schedules do not fire on Prefect's ephemeral server, so scheduled deployments need a real
one: `LocalPrefectServer` starts `prefect server start` on 127.0.0.1 as a child process, waits
until `/api/health` answers, and stops it on exit. Clients then use `api_url`.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from casemill.errors import UserError

log = logging.getLogger(__name__)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_in_use(port: int) -> bool:
    """Whether something listens on 127.0.0.1:`port` (SO_REUSEADDR: a port whose last server has
    just stopped, its sockets in TIME_WAIT, counts as free, as it does for the server)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def check_reachable(api_url: str, timeout_s: float = 10.0) -> None:
    """Fail with what to do when nothing answers at `api_url` (a server that answers, even with
    an HTTP error, is left to Prefect)."""
    try:
        with urllib.request.urlopen(api_url.rstrip("/") + "/health", timeout=timeout_s):
            pass
    except urllib.error.HTTPError:
        return
    except OSError as exc:
        reason = getattr(exc, "reason", exc)
        raise UserError(
            f"no Prefect server answers at PREFECT_API_URL={shown_url(api_url)} ({reason}): start it or correct PREFECT_API_URL, or unset PREFECT_API_URL to have 'casemill serve' start a local server"
        ) from exc


def pooled_deployments(served: list[Any]) -> list[str]:
    """Of the deployments `casemill serve` would serve (`casemill.flows.deployments`), those the server at
    PREFECT_API_URL already holds as work-pool deployments (`prefect deploy --all` of
    `prefect.yaml` gives the same names): serving would take them over from the workers and
    pause them when it stops."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    taken = []
    with get_client(sync_client=True) as client:
        for d in served:
            try:
                held = client.read_deployment_by_name(f"{d.flow_name}/{d.name}")
            except ObjectNotFound:
                continue
            if held.work_pool_name:
                taken.append(f"{d.flow_name}/{d.name} (work pool {held.work_pool_name!r})")
    return taken


def shown_url(url: str) -> str:
    """`url` without the user and password it may hold (`http://user:secret@host/api`)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


class LocalPrefectServer:
    def __init__(
        self, home: Path, port: int | None = None, ui: bool = True, startup_timeout_s: float = 120.0
    ):
        self.home = Path(home)
        self.port = port or free_port()
        self.ui = ui
        self.startup_timeout_s = startup_timeout_s
        self.process: subprocess.Popen | None = None
        self.log_path = self.home / "server.log"

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    @property
    def ui_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "PREFECT_HOME": str(self.home.resolve()),
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_API_URL": self.api_url,
        }

    def start(self) -> LocalPrefectServer:
        if port_in_use(self.port):
            # else the health check below would be answered by whatever holds the port (another
            # Prefect server, whose deployments `casemill serve` would then overwrite)
            raise UserError(
                f"port {self.port} on 127.0.0.1 is already in use: start the local Prefect server on another one (casemill serve --port PORT), or set PREFECT_API_URL to use the server already there"
            )
        self.home.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "prefect",
            "server",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
        ]
        if not self.ui:
            cmd.append("--no-ui")
        env = self.env()
        env.pop("PREFECT_API_URL")
        with open(self.log_path, "ab") as out:
            self.process = subprocess.Popen(
                cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        try:
            self._wait_until_ready()
        except BaseException:
            # Ctrl-C while it starts included: the server is in a session of its own, so the
            # terminal's SIGINT does not reach it, and no caller holds it yet to stop it
            self.stop()
            raise
        return self

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise UserError(
                    f"the Prefect server exited with code {self.process.returncode}; see {self.log_path}"
                )
            try:
                with urllib.request.urlopen(self.api_url + "/health", timeout=2) as resp:
                    if resp.status == 200:
                        log.info("Prefect server ready at %s", self.api_url)
                        return
            except OSError:
                time.sleep(0.5)
        raise UserError(
            f"the Prefect server did not answer within {self.startup_timeout_s:.0f} s; see {self.log_path}"
        )

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> LocalPrefectServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
