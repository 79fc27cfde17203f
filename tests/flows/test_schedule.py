"""A cron deployment served against a local Prefect server fires and completes a run."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from casemill.flows.server import LocalPrefectServer

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _completed_runs(api_url: str) -> list[dict]:
    body = {"flow_runs": {"state": {"type": {"any_": ["COMPLETED", "FAILED", "CRASHED"]}}}}
    response = httpx.post(f"{api_url}/flow_runs/filter", json=body, timeout=10)
    response.raise_for_status()
    return response.json()


def test_served_cron_deployment_fires_and_completes(tmp_path, small_corpus):
    project = tmp_path / "project"
    project.mkdir()
    shutil.copytree(small_corpus, project / "corpus")
    shutil.copytree(ROOT / "gates", project / "gates")
    with LocalPrefectServer(tmp_path / "prefect-home", ui=False) as server:
        env = {
            **os.environ,
            "PREFECT_API_URL": server.api_url,
            "PREFECT_HOME": str(tmp_path / "prefect-home"),
            "CASEMILL_CRON_EVALUATE": "* * * * *",
            "PREFECT_RUNNER_POLL_FREQUENCY": "2",
        }
        log = open(tmp_path / "serve.log", "wb")  # noqa: SIM115 - closed after the child exits
        serve = subprocess.Popen(
            [sys.executable, "-m", "casemill.cli", "serve", "--only", "evaluate"],
            cwd=project,
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            runs: list[dict] = []
            deadline = time.monotonic() + 200
            while time.monotonic() < deadline and not runs:
                assert serve.poll() is None, (tmp_path / "serve.log").read_text()[-2000:]
                runs = _completed_runs(server.api_url)
                time.sleep(2)
        finally:
            os.killpg(serve.pid, signal.SIGTERM)
            serve.wait(timeout=30)
            log.close()
    assert runs, "no scheduled run finished within 200 s"
    run = runs[0]
    assert run["state"]["type"] == "COMPLETED", run["state"]
    assert run["deployment_id"] is not None
    # a folder of the run's own, named by its scheduled day (UTC), not the last night's folder
    nights = [p.name for p in (project / "runs" / "nightly").iterdir()]
    assert len(nights) == 1 and re.fullmatch(r"\d{4}-\d{2}-\d{2}", nights[0]), nights
    assert nights[0] == run["expected_start_time"][:10]
    assert (project / "runs" / "nightly" / nights[0] / "report.html").is_file()
