"""The evaluate flow's wall time on the thread runner vs on a local Dask cluster, same work.

Both run the `evaluate-agent` flow with the reference agent on the bundled corpus (`corpus/`),
cut into batches (`--batch-size`, one task a batch), on `--workers` threads or Dask worker
processes, on Prefect's temporary server (no `PREFECT_API_URL`, as a first run on a laptop).
Two measures, runs alternating (threads, Dask, threads, ...), each runner's median kept:

- as a user runs it (judged, target Dask <= 1.5x threads): each run in a fresh process, the
  flow's wall time with the temporary server's start (warm Prefect home; a first run, not
  counted, creates its database). Each Dask run must start exactly one temporary server (its
  workers report to the flow's, they start none) and leave its batches' task runs on it.
- Dask's fixed cost (printed, no target): both runners in one process whose server a warm-up
  flow has started, so the difference is the cluster's start-up, the workers' imports and the
  cluster's shutdown.

    uv run python bench/threads_vs_dask.py                 # 75 cases, batches of 25, 2 workers
    uv run python bench/threads_vs_dask.py --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import description, figure  # noqa: E402

TARGET = 1.5  # Dask's wall time at most this many times the threads' (issue 23)
RUNNERS = ("thread", "dask")
SERVER_STARTED = "Starting temporary server"
CHILD = "CHILD "


def evaluate(runner: str, workers: int, run_dir: Path, batch_size: int) -> dict[str, Any]:
    """One run of the evaluate flow on `runner`: its wall time in seconds, task success rate
    and how many of its batch task runs the flow's server holds, completed."""
    from casemill.flows._runtime import task_runner
    from casemill.flows.evaluate import evaluate_agent

    on = evaluate_agent.with_options(task_runner=task_runner(runner, workers))
    started = time.perf_counter()
    state = on(
        agent="reference",
        cases=str(ROOT / "corpus"),
        run_dir=str(run_dir),
        batch_size=batch_size,
        gate=None,
        return_state=True,
    )
    seconds = time.perf_counter() - started
    result = state.result()
    return {
        "seconds": seconds,
        "task_success_rate": result["task_success_rate"],
        "expected": -(-result["cases"] // batch_size),
        "on_server": batches_on_server(state.state_details.flow_run_id),
    }


def batches_on_server(flow_run_id: Any) -> int:
    """How many `run-agent-batch` task runs of the flow run the flow's server holds, completed."""
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter

    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id={"any_": [flow_run_id]}))
    return sum(
        1
        for r in runs
        if r.name.startswith("run-agent-batch") and r.state_type.value == "COMPLETED"
    )


def in_fresh_process(runner: str, args: argparse.Namespace, run_dir: Path, home: Path) -> dict:
    """`evaluate` in a fresh process on its own temporary server, as a user runs the flow; with
    how many temporary servers its output says were started (by it and by its Dask workers)."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(home)
    cmd = [sys.executable, __file__, "--child", runner, "--run-dir", str(run_dir)]
    cmd += ["--workers", str(args.workers), "--batch-size", str(args.batch_size)]
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    output = done.stdout + done.stderr
    if done.returncode != 0 or CHILD not in output:
        raise SystemExit(f"{runner} run failed:\n{output[-3000:]}")
    outcome = json.loads(output.split(CHILD, 1)[1].splitlines()[0])
    return outcome | {"servers": output.count(SERVER_STARTED)}


def warm_up() -> float:
    """Start Prefect's temporary server with a flow that does nothing; its start-up time."""
    from prefect import flow

    @flow(name="warm-up")
    def nothing() -> int:
        return 1

    started = time.perf_counter()
    nothing()
    return time.perf_counter() - started


def fixed_cost(args: argparse.Namespace, base: Path) -> dict[str, float]:
    """Median wall time of each runner in this process, the temporary server already up."""
    os.environ["PREFECT_HOME"] = str(base / "in-process")
    from casemill.flows._runtime import configure_prefect_env

    configure_prefect_env()
    print(f"temporary server start-up (warm-up flow): {warm_up():.1f} s (not counted)")
    times: dict[str, list[float]] = {r: [] for r in RUNNERS}
    for i in range(args.repeats):
        for runner in RUNNERS:
            run = evaluate(runner, args.workers, base / f"in-process-{runner}{i}", args.batch_size)
            times[runner].append(run["seconds"])
            print(f"  server up, {runner}: {run['seconds']:.1f} s")
    return {r: statistics.median(t) for r, t in times.items()}


def as_user_runs_it(args: argparse.Namespace, base: Path) -> dict[str, list[dict]]:
    """Each runner's runs in fresh processes, after one run (not counted) creates the database."""
    home = base / "fresh-process-home"
    first = in_fresh_process("thread", args, base / "first", home)
    print(f"first run, creating the database: {first['seconds']:.1f} s (not counted)")
    runs: dict[str, list[dict]] = {r: [] for r in RUNNERS}
    for i in range(args.repeats):
        for runner in RUNNERS:
            run = in_fresh_process(runner, args, base / f"{runner}{i}", home)
            runs[runner].append(run)
            print(
                f"  fresh process, {runner}: {run['seconds']:.1f} s, task success "
                f"{run['task_success_rate']}, {run['servers']} temporary server(s) started, "
                f"{run['on_server']} of {run['expected']} batch task runs on the flow's server"
            )
    return runs


def report(runs: dict[str, list[dict]], fixed: dict[str, float]) -> None:
    thread_s, dask_s = (statistics.median(r["seconds"] for r in runs[n]) for n in RUNNERS)
    ratio = dask_s / thread_s
    rates = {n: {r["task_success_rate"] for r in runs[n]} for n in RUNNERS}
    good = sum(r["servers"] == 1 and r["on_server"] == r["expected"] for r in runs["dask"])
    print(f"as a user runs it: threads {thread_s:.1f} s, Dask {dask_s:.1f} s ({ratio:.2f}x)")
    print(f"same task success rate on both runners: {rates['thread'] == rates['dask']}")
    extra = fixed["dask"] - fixed["thread"]
    print(
        f"server already up: threads {fixed['thread']:.1f} s, Dask {fixed['dask']:.1f} s "
        f"(Dask's fixed cost {extra:.1f} s: cluster start-up, worker imports, shutdown)"
    )
    figure("evaluate flow, threads (fresh process, median)", round(thread_s, 1), "—", "s")
    figure("evaluate flow, Dask (fresh process, median)", round(dask_s, 1), "—", "s")
    figure("Dask / threads wall time", round(ratio, 2), f"<= {TARGET}", "x", ratio <= TARGET)
    figure(
        "Dask runs with one temporary server and their task runs on it",
        good,
        f"{len(runs['dask'])} (all)",
        "",
        good == len(runs["dask"]) and rates["thread"] == rates["dask"],
    )
    figure("Dask's fixed cost (server already up)", round(extra, 1), "—", "s")


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--workers", type=int, default=2, help="threads / Dask worker processes")
    parser.add_argument("--batch-size", type=int, default=25, help="cases a task (75 cases)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each runner, each way")
    parser.add_argument("--child", choices=RUNNERS, help=argparse.SUPPRESS)
    parser.add_argument("--run-dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run = evaluate(args.child, args.workers, args.run_dir, args.batch_size)
        print(CHILD + json.dumps(run), flush=True)
        return
    os.environ.pop("PREFECT_API_URL", None)
    base = Path(tempfile.mkdtemp(prefix="casemill-dask-"))
    runs = as_user_runs_it(args, base)
    report(runs, fixed_cost(args, base))
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
