"""The Dask task runner: tasks on the workers report to the flow's Prefect API, also when the flow
runs on Prefect's temporary server, and no worker starts a server of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from casemill.flows._runtime import task_runner

# runs the evaluate flow on Prefect's temporary server (no PREFECT_API_URL), on Dask (the
# runner `CASEMILL_TASK_RUNNER` names) then on threads, and prints what the flow's server holds
SCRIPT = """
import json, sys
from casemill.flows._runtime import task_runner
from casemill.flows.evaluate import evaluate_agent

def task_runs_on_server(flow_run_id):
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, LogFilter, LogFilterTaskRunId

    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id={"any_": [flow_run_id]}))
        batches = [r for r in runs if r.name.startswith("run-agent-batch")]
        ids = [r.id for r in batches]
        logs = client.read_logs(log_filter=LogFilter(task_run_id=LogFilterTaskRunId(any_=ids)))
        return {
            "batches": sorted(r.state_type.value for r in batches),
            "logged_by": len({log.task_run_id for log in logs}),
        }

if __name__ == "__main__":
    cases, out = sys.argv[1], sys.argv[2]
    args = dict(agent="reference", cases=cases, batch_size=4, gate=None)
    state = evaluate_agent(run_dir=out + "/dask", return_state=True, **args)
    on_dask = state.result()
    threads = evaluate_agent.with_options(task_runner=task_runner("thread"))
    on_threads = threads(run_dir=out + "/thread", **args)
    print("OUTCOME " + json.dumps({
        "runner": type(evaluate_agent.task_runner).__name__,
        "dask": on_dask,
        "thread": on_threads,
        "server": task_runs_on_server(state.state_details.flow_run_id),
    }))
"""


def _results(run_dir: Path) -> list[dict]:
    """The run's result records without their wall-clock latency (the one field that differs
    from run to run)."""
    records = []
    for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record["metrics"].pop("latency_s")
        records.append(record)
    return records


def test_dask_runners_keep_their_settings_across_duplicates():
    from casemill.flows._dask import FlowApiDaskTaskRunner

    local = task_runner("dask", 2)
    assert isinstance(local, FlowApiDaskTaskRunner)
    copy = local.duplicate()
    assert type(copy) is FlowApiDaskTaskRunner and copy == local
    assert copy.cluster_kwargs["n_workers"] == 2 and copy.cluster_kwargs["processes"] is True
    remote = task_runner("dask://127.0.0.1:8786").duplicate()
    assert type(remote) is FlowApiDaskTaskRunner and remote.address == "tcp://127.0.0.1:8786"


def test_nothing_to_hand_the_workers_outside_a_flow_run_or_with_a_server_set():
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from casemill.flows._dask import flow_api_url, settings_for_workers

    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        assert flow_api_url() is None and settings_for_workers() is None
    with temporary_settings(updates={PREFECT_API_URL: "http://prefect.example:4200/api"}):
        assert flow_api_url() is None and settings_for_workers() is None


def test_local_workers_fork_from_a_preloaded_server_unless_configured_otherwise():
    import dask

    from casemill.flows._dask import START_METHOD, forked_workers

    assert dask.config.get(START_METHOD) == "spawn"
    with forked_workers(["json", "json"]):
        assert dask.config.get(START_METHOD) == "forkserver"
    assert dask.config.get(START_METHOD) == "spawn"
    with dask.config.set({START_METHOD: "fork"}), forked_workers(["json"]):
        assert dask.config.get(START_METHOD) == "fork"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_evaluate_flow_on_two_dask_workers_reports_to_the_flows_temporary_server(
    tmp_path, small_corpus
):
    """A real run as a user starts it: no `PREFECT_API_URL`, so the flow starts Prefect's
    temporary server, and `CASEMILL_TASK_RUNNER=dask` with two worker processes. The batches run
    on the workers, their task runs and logs are on the flow's server, exactly one temporary
    server started (the flow's), and the results are the thread runner's."""
    script = tmp_path / "run_on_dask.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env |= {
        "PREFECT_HOME": str(tmp_path / "prefect-home"),
        "CASEMILL_TASK_RUNNER": "dask",
        "CASEMILL_TASK_WORKERS": "2",
    }
    done = subprocess.run(
        [sys.executable, str(script), str(small_corpus), str(tmp_path / "runs")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    outcome = json.loads(output.split("OUTCOME ", 1)[1].splitlines()[0])
    assert output.count("Starting temporary server") == 1, output[-4000:]
    # 12 cases in batches of 4: three task runs made on the workers, all on the flow's server
    assert outcome["server"] == {"batches": ["COMPLETED"] * 3, "logged_by": 3}
    assert output.count("Register worker addr") == 2  # by the scheduler, in the flow process
    assert outcome["runner"] == "FlowApiDaskTaskRunner"
    batches = sorted(p.name for p in (tmp_path / "runs" / "dask" / "batches").iterdir())
    assert batches == ["b0000", "b0001", "b0002"]
    dask, thread = outcome["dask"], outcome["thread"]
    assert dask.pop("run_dir").endswith("dask") and thread.pop("run_dir").endswith("thread")
    assert dask == thread and dask["cases"] == 12 and dask["task_success_rate"] == 1.0
    assert _results(tmp_path / "runs" / "dask") == _results(tmp_path / "runs" / "thread")
