"""The runner: one trajectory per (case, trial), nothing dropped; bounded concurrency; time
limits; resumable (kill -9 and Ctrl-C mid-run, torn last line); rerun of failures."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from casemill.evaluation.agents import EpisodeClosed, RetryPolicy
from casemill.evaluation.agents.python_agent import PythonAgent
from casemill.evaluation.run_store import TRAJECTORIES_FILE, RunStore
from casemill.evaluation.runner import run
from tests.conftest import ROOT
from tests.evaluation.agents.support_cases import many_cases, mug_case

ONCE = RetryPolicy(attempts=1)


def keys_in(run_dir: Path) -> list[tuple[str, int]]:
    lines = (run_dir / TRAJECTORIES_FILE).read_bytes().splitlines()
    return [(json.loads(x)["case_id"], json.loads(x)["trial"]) for x in lines if x.strip()]


def reply_agent(episode):
    return "ok"


def test_trials_order_duplicates_and_fingerprint_isolation(tmp_path: Path):
    cases = many_cases(3)
    out = run(
        PythonAgent(reply_agent), [cases[1], cases[0], cases[1], cases[2]], tmp_path, trials=2
    )
    assert [(t.case_id, t.trial) for t in out] == [
        (cases[1].id, 0),
        (cases[1].id, 1),
        (cases[0].id, 0),
        (cases[0].id, 1),
        (cases[1].id, 0),
        (cases[1].id, 1),
        (cases[2].id, 0),
        (cases[2].id, 1),
    ]
    assert len(keys_in(tmp_path)) == 6  # the duplicate case ran once per trial
    # another agent in the same run dir does not reuse these results
    other = run("reference", cases, tmp_path)
    assert all(t.agent == "reference" for t in other) and len(keys_in(tmp_path)) == 9


def test_rerun_does_only_what_is_missing_and_rerun_failed_redoes_errors(tmp_path: Path):
    calls: Counter[str] = Counter()

    def flaky(episode):
        calls[episode.case_id] += 1
        if calls[episode.case_id] == 1 and episode.case_id == cases[0].id:
            raise ValueError("first try fails")
        return "ok"

    cases = many_cases(3)
    agent = PythonAgent(flaky)
    first = run(agent, cases, tmp_path, retry=ONCE)
    assert [t.error_kind for t in first] == ["exception", None, None]
    again = run(agent, cases, tmp_path, retry=ONCE)
    assert sum(calls.values()) == 3 and [t.error_kind for t in again] == ["exception", None, None]
    fixed = run(agent, cases, tmp_path, retry=ONCE, rerun_failed=True)
    assert [t.error for t in fixed] == [None, None, None] and calls[cases[0].id] == 2
    assert len(keys_in(tmp_path)) == 4  # the failure and its rerun; the later one wins on load
    assert all(t.error is None for t in RunStore(tmp_path).load(agent.fingerprint).values())


def test_bounded_concurrency_with_async_agents(tmp_path: Path):
    live, peak = 0, 0

    async def slow(episode):
        nonlocal live, peak
        live += 1
        peak = max(peak, live)
        await asyncio.sleep(0.02)
        live -= 1
        return "done"

    out = run(PythonAgent(slow), many_cases(12), tmp_path, concurrency=3)
    assert peak == 3 and all(t.final_reply == "done" for t in out)


def test_hanging_sync_agent_times_out_and_cannot_write_afterwards(tmp_path: Path):
    late: list[str] = []
    done = threading.Event()

    def hangs_then_writes(episode):
        time.sleep(0.6)
        try:
            episode.call(
                "refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}
            )
        except EpisodeClosed as exc:
            late.append(str(exc))
        finally:
            done.set()
        return "too late"

    [traj] = run(PythonAgent(hangs_then_writes), [mug_case()], tmp_path, timeout_s=0.2, retry=ONCE)
    assert traj.error_kind == "timeout" and "0.2s" in traj.error
    assert traj.final_state["orders"]["W1001"]["refunds"] == [] and traj.calls == ()
    assert done.wait(5) and late and "closed" in late[0]


def test_hanging_async_agent_times_out_and_others_finish(tmp_path: Path):
    async def maybe_hang(episode):
        if episode.case_id == cases[0].id:
            await asyncio.sleep(60)
        return "fine"

    cases = many_cases(4)
    out = run(PythonAgent(maybe_hang), cases, tmp_path, timeout_s=0.3, concurrency=2, retry=ONCE)
    assert [t.error_kind for t in out] == ["timeout", None, None, None]


def test_torn_last_line_is_skipped_and_cut_before_appending(tmp_path: Path):
    cases = many_cases(3)
    run(PythonAgent(reply_agent), cases[:2], tmp_path)
    path = tmp_path / TRAJECTORIES_FILE
    whole = path.read_bytes()
    path.write_bytes(whole + whole.splitlines(keepends=True)[0][:57])  # a record cut mid-write
    assert len(RunStore(tmp_path).load()) == 2
    run(PythonAgent(reply_agent), cases, tmp_path)
    lines = path.read_bytes().splitlines()
    assert len(lines) == 3 and all(json.loads(x) for x in lines)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["kill", "interrupt"])
def test_interrupted_run_resumes_without_loss_or_duplicates(tmp_path: Path, how: str):
    """A child process runs 40 slow cases; it is killed (SIGKILL) or interrupted (SIGINT, as by
    Ctrl-C) part-way; the resumed run finishes the rest, re-running no finished case. (The
    child needs about 3 s for all 40, so a loaded machine still stops it part-way.)"""
    n, log = 40, tmp_path / "invocations.log"
    env = {**os.environ, "CASEMILL_TEST_AGENT_LOG": str(log), "CASEMILL_TEST_AGENT_DELAY": "0.3"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    run_dir = tmp_path / "run"
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.evaluation.runner.run_many", str(run_dir), str(n)],
        cwd=ROOT,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    path = run_dir / TRAJECTORIES_FILE
    deadline = time.time() + 60
    while time.time() < deadline and (not path.exists() or len(path.read_bytes().splitlines()) < 8):
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL if how == "kill" else signal.SIGINT)
    child.wait(timeout=30)
    before = {k for k in keys_in(run_dir)} if path.exists() else set()
    assert 8 <= len(before) < n, "the child should have been stopped part-way"
    os.environ["CASEMILL_TEST_AGENT_LOG"] = str(log)
    try:
        out = run(
            "python:tests.evaluation.runner.slow_agent:agent", many_cases(n), run_dir, concurrency=8
        )
    finally:
        del os.environ["CASEMILL_TEST_AGENT_LOG"]
    keys = keys_in(run_dir)
    assert len(keys) == n and len(set(keys)) == n  # nothing lost, nothing duplicated
    assert [t.error for t in out] == [None] * n
    invoked = Counter(log.read_text().split())
    assert all(invoked[case_id] == 1 for case_id, _ in before)  # finished ones were not re-run
    assert sum(invoked.values()) - n <= 4  # at most the cases in flight at the stop ran twice
