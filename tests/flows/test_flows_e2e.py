"""Real flow runs against a local Prefect server (one test harness for the session)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from casemill.corpus import CorpusStore
from casemill.io.jsonl import read_jsonl
from tests.flows.conftest import seed_cases

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _keys(path: Path) -> Counter:
    return Counter(
        (line.value["case_id"], line.value["trial"])
        for line in read_jsonl(path)
        if line.error is None
    )


def test_full_pipeline_mines_expands_reviews_evaluates(
    prefect_harness, tmp_path, small_seeds, small_corpus, monkeypatch
):
    from casemill.flows.pipeline import full_pipeline
    from tests.support.openai_server import OpenAIServer

    before = CorpusStore(small_corpus).latest()
    with OpenAIServer(lambda body: {"content": "Which order do you mean?"}) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        result = full_pipeline(
            seeds=str(small_seeds),
            logs=[str(ROOT / "samples" / "support_logs.jsonl")],
            mine_workers=2,  # mined in worker processes: the same candidates as in one
            workdir=str(tmp_path / "work"),
            corpus_dir=str(small_corpus),
            review="auto",
            agents=["reference", "reference:refund_whole_order", "openai:m"],
            gate=str(ROOT / "gates" / "default.toml"),
            per_seed=1,
            temperature=0.6,  # for the openai: agent; the reference agents take none
            seed=7,
        )
        received = {body["temperature"] for body in server.requests}
    store = CorpusStore(small_corpus)
    after = store.latest()
    assert after.version == before.version + 1
    assert sorted(result["review"]["added"]) == sorted(after.added) and after.added
    approved = {c.id: c for c in store.cases()}
    for case_id in after.added:
        case = approved[case_id]
        assert case.review.status == "approved" and case.review.auto_approved
        assert case.provenance.origin in ("generated", "mined")
        assert "needs_label" not in case.tags.labels  # low-confidence labels wait for a person
    assert {c.provenance.origin for c in approved.values()} >= {"seed", "generated", "mined"}
    reference, faulty, model = result["evaluations"]
    assert reference["gate_passed"] is True and reference["cases"] == after.active_count
    assert faulty["gate_passed"] is False  # the corpus catches the bug
    assert received == {0.6} and len(server.requests) == after.active_count
    assert json.loads((Path(model["run_dir"]) / "summary.json").read_text())["agent_settings"] == {
        "model": "m",
        "temperature": 0.6,
    }
    # the pipeline run's own folder (a later run starts afresh): one for both agents
    (runs,) = {Path(ev["run_dir"]).parent for ev in result["evaluations"]}
    assert runs.parent == tmp_path / "work" / "runs"
    assert re.fullmatch(r"\d{8}T\d{6}Z", runs.name)
    for ev in result["evaluations"]:
        run = Path(ev["run_dir"])
        assert (run / "report.html").is_file() and (run / "summary.json").is_file()
        assert sum(_keys(run / "results.jsonl").values()) == after.active_count


def test_evaluation_batches_run_on_a_local_dask_cluster(prefect_harness, tmp_path, small_corpus):
    from casemill.flows._runtime import task_runner
    from casemill.flows.evaluate import evaluate_agent

    on_dask = evaluate_agent.with_options(task_runner=task_runner("dask", 2))
    result = on_dask(
        agent="reference",
        cases=str(small_corpus),
        run_dir=str(tmp_path / "dask"),
        batch_size=4,
        gate=None,
    )
    batches = sorted((tmp_path / "dask" / "batches").iterdir())
    assert [b.name for b in batches] == ["b0000", "b0001", "b0002"]
    keys = _keys(tmp_path / "dask" / "results.jsonl")
    assert len(keys) == 12 and set(keys.values()) == {1}
    threaded = evaluate_agent(
        agent="reference",
        cases=str(small_corpus),
        run_dir=str(tmp_path / "thread"),
        batch_size=4,
        gate=None,
    )
    assert result["task_success_rate"] == threaded["task_success_rate"] == 1.0


def test_evaluation_records_its_cases_and_warns_on_a_baseline_of_other_cases(
    prefect_harness, tmp_path, small_corpus, monkeypatch
):
    from casemill.flows.evaluate import evaluate_agent

    monkeypatch.chdir(tmp_path)
    full = evaluate_agent(agent="reference", cases="corpus", run_dir="runs/full", gate=None)
    assert full["case_set"]["sources"] == ["corpus"]
    assert full["case_set"]["corpus_version"] == 1 and full["case_set"]["count"] == 12
    assert full["case_note"] == ""
    subset = tmp_path / "subset.jsonl"
    subset.write_text("".join(c.model_dump_json() + "\n" for c in seed_cases(5)))
    part = evaluate_agent(
        agent="reference",
        cases="subset.jsonl",
        run_dir="runs/part",
        baseline="runs/full",
        gate=None,
    )
    note = (
        "case sets differ: 5 cases in common, 0 only in this run, 7 only in the baseline "
        "(this run: subset.jsonl; the baseline: corpus v0001); compared on the 5 in common"
    )
    assert part["case_note"] == note
    summary = json.loads((tmp_path / "runs" / "part" / "summary.json").read_text())
    assert summary["comparison"]["case_note"] == note and note in summary["notes"]
    few = evaluate_agent(
        agent="reference", cases="corpus", run_dir="runs/few", gate=None, sample=4, limit=3
    )
    assert few["cases"] == 3  # a sample of 4 (by operator), then the first 3 of it


KILLABLE = """
import sys
from casemill.flows.evaluate import evaluate_agent
evaluate_agent(agent="python:slow_agent:slow", cases=sys.argv[1], run_dir=sys.argv[2], batch_size=4, concurrency=1, trials=2, gate=None)
"""


def test_a_killed_evaluation_resumes_without_loss_or_duplicates(
    prefect_harness, tmp_path, small_corpus
):
    from prefect.settings import PREFECT_API_URL

    from casemill.flows.evaluate import evaluate_agent

    run_dir = tmp_path / "killed"
    env = {
        **os.environ,
        "PREFECT_API_URL": PREFECT_API_URL.value(),
        "PYTHONPATH": f"{Path(__file__).parent}{os.pathsep}{ROOT}",
    }
    child = subprocess.Popen(
        [sys.executable, "-c", KILLABLE, str(small_corpus), str(run_dir)],
        env=env,
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    done_before_kill = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        files = list(run_dir.glob("batches/*/trajectories.jsonl"))
        done_before_kill = sum(sum(_keys(f).values()) for f in files)
        if done_before_kill >= 5:
            break
        time.sleep(0.2)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    assert 5 <= done_before_kill < 24, "the run should be killed part-way"
    survivors = {k for f in run_dir.glob("batches/*/trajectories.jsonl") for k in _keys(f)}
    assert not (run_dir / "results.jsonl").exists()

    result = evaluate_agent(
        agent="python:slow_agent:slow",
        cases=str(small_corpus),
        run_dir=str(run_dir),
        batch_size=4,
        concurrency=1,
        trials=2,
        gate=None,
    )
    assert result["errors"] == 0
    per_batch = Counter()
    for f in run_dir.glob("batches/*/trajectories.jsonl"):
        per_batch.update(_keys(f))
    assert len(per_batch) == 24 and set(per_batch.values()) == {1}, "each case x trial exactly once"
    assert survivors <= set(per_batch)
    results = _keys(run_dir / "results.jsonl")
    assert len(results) == 24 and set(results.values()) == {1}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["cases"] == 12 and summary["trials"] == 2


def test_an_evaluation_in_which_no_trial_was_scored_fails(
    prefect_harness, tmp_path, small_corpus, monkeypatch
):
    """The agent's endpoint answers every request with a 500: the flow run ends Failed with the
    error kinds and the first message, not Completed with a task success of 0."""
    from casemill.evaluation.scoring.errors import NothingScored
    from casemill.flows.evaluate import evaluate_agent
    from tests.support.openai_server import OpenAIServer, Reply

    def broken(body: dict) -> Reply:
        return Reply(status=500, body={"error": {"message": "down"}}, headers={"Retry-After": "0"})

    with OpenAIServer(broken) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        state = evaluate_agent(
            agent="openai:m",
            cases=str(small_corpus),
            run_dir=str(tmp_path / "run"),
            gate=None,
            return_state=True,
        )
    assert state.is_failed()
    message = r"no trial could be scored: 12 of 12 trials ended in an error \(http_5xx 12\); first"
    with pytest.raises(NothingScored, match=message) as failed:
        state.result()
    assert "Check that the agent is reachable, then run the flow again" in str(failed.value)
    assert (tmp_path / "run" / "report.html").is_file()  # the report is still written


def test_an_evaluation_run_again_with_rerun_failed_redoes_the_trials_that_errored(
    prefect_harness, tmp_path, small_corpus, monkeypatch
):
    """The endpoint was down, then is back: the same run again keeps the errored trials (and
    fails again), with `rerun_failed` it redoes them and every trial is scored."""
    from casemill.evaluation.scoring.errors import NothingScored
    from casemill.flows.evaluate import evaluate_agent
    from tests.support.openai_server import OpenAIServer, Reply

    down = [True]

    def responder(body: dict) -> Reply | dict:
        if down[0]:
            return Reply(
                status=500, body={"error": {"message": "down"}}, headers={"Retry-After": "0"}
            )
        return {"content": "I have looked into it."}

    run_dir = str(tmp_path / "run")
    with OpenAIServer(responder) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        args = {"agent": "openai:m", "cases": str(small_corpus), "run_dir": run_dir, "gate": None}
        first = evaluate_agent(**args, return_state=True)
        with pytest.raises(NothingScored, match="rerun_failed=true"):
            first.result()
        down[0] = False
        again = evaluate_agent(**args, return_state=True)
        assert again.is_failed(), "without rerun_failed the errored trials are kept"
        result = evaluate_agent(**args, rerun_failed=True)
    assert result["errors"] == 0 and result["cases"] == 12
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["results"] == 12 and summary["errors"] == 0


def test_the_evaluate_flow_runs_an_openai_agent_at_the_temperature_given(
    prefect_harness, tmp_path, small_corpus, monkeypatch
):
    """`temperature` reaches every request of every batch and the run's summary."""
    from casemill.flows.evaluate import evaluate_agent
    from tests.support.openai_server import OpenAIServer

    with OpenAIServer(lambda body: {"content": "Which order do you mean?"}) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        evaluate_agent(
            agent="openai:m",
            cases=str(small_corpus),
            run_dir=str(tmp_path / "run"),
            batch_size=5,
            temperature=0.4,
        )
        received = [body["temperature"] for body in server.requests]
    assert received == [0.4] * 12  # 12 cases in 3 batches, one request each
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["agent_settings"] == {"model": "m", "temperature": 0.4}
