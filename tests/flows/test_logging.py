"""Prefect's run logs show a `UserError` once, as its message, without a traceback; any other
exception keeps its traceback. Real flow runs on the session's Prefect test server."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect import flow, task

from casemill.errors import UserError
from casemill.flows._logging import RUN_LOGGERS, not_user_error

pytestmark = pytest.mark.slow


class Records(logging.Handler):
    """What Prefect's run loggers hand to their handlers (after the loggers' filters)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def failures(self) -> list[logging.LogRecord]:
        """The records of an exception ending a run (not the final-state lines after them)."""
        heads = ("Task run failed with exception", "Encountered exception during execution")
        return [r for r in self.records if r.getMessage().startswith(heads)]


@pytest.fixture
def run_logs() -> Iterator[Records]:
    handler = Records()
    for name in RUN_LOGGERS:
        logging.getLogger(name).addHandler(handler)
    yield handler
    for name in RUN_LOGGERS:
        logging.getLogger(name).removeHandler(handler)


@task
def refuse(kind: type[Exception]) -> None:
    raise kind("bad input: give a file that exists")


@flow
def calls_the_task(kind: type[Exception]) -> None:
    refuse(kind)


@flow
def calls_a_subflow(kind: type[Exception]) -> None:
    calls_the_task(kind)


def _failed_on(state, kind: type[Exception]) -> None:
    assert state.is_failed()
    with pytest.raises(kind, match="bad input"):
        state.result()


def test_a_user_error_is_logged_once_without_traceback_other_errors_keep_theirs(
    prefect_harness, run_logs
):
    _failed_on(calls_a_subflow(UserError, return_state=True), UserError)
    [record] = run_logs.failures()  # by the task; not again by the subflow, nor by the flow
    assert record.name == "prefect.task_runs" and record.levelno == logging.ERROR
    assert "UserError('bad input: give a file that exists')" in record.getMessage()
    assert record.exc_info is None and record.exc_text is None
    run_logs.records.clear()
    _failed_on(calls_a_subflow(ValueError, return_state=True), ValueError)
    logged = run_logs.failures()
    # a bug: the task, the subflow and the flow each log it, each with the traceback
    assert [r.name for r in logged] == ["prefect.task_runs", *["prefect.flow_runs"] * 2]
    assert all(isinstance(r.exc_info[1], ValueError) for r in logged)


def test_a_failed_subflow_fails_the_pipeline_and_says_so_once(
    prefect_harness, run_logs, tmp_path: Path
):
    from casemill.flows.pipeline import full_pipeline

    missing = tmp_path / "nowhere.jsonl"
    state = full_pipeline(logs=[str(missing)], workdir=str(tmp_path / "work"), return_state=True)
    assert state.is_failed()
    with pytest.raises(UserError, match="no log file at"):
        state.result()
    [record] = run_logs.failures()
    assert record.exc_info is None and "no log file at" in record.getMessage()
    assert "no log file at" in state.message  # the pipeline's final state names the error


ATTEMPTS: list[str] = []


@task(retries=2, retry_delay_seconds=0, retry_condition_fn=not_user_error)
def refuse_with_retries(kind: type[Exception]) -> None:
    ATTEMPTS.append(kind.__name__)
    raise kind("bad input: give a file that exists")


@flow
def calls_the_retried_task(kind: type[Exception]) -> None:
    refuse_with_retries(kind)


def test_a_user_error_is_not_retried_other_errors_are(prefect_harness, run_logs):
    from casemill.flows.evaluate import run_batch
    from casemill.flows.expand import write_outputs
    from casemill.flows.mine import merge_and_write, mine_file_task, mine_stream_part_task

    retried_tasks = (run_batch, write_outputs, merge_and_write, mine_file_task)
    for retried in (*retried_tasks, mine_stream_part_task):
        assert retried.retries > 0 and retried.retry_condition_fn is not_user_error
    ATTEMPTS.clear()
    _failed_on(calls_the_retried_task(UserError, return_state=True), UserError)
    assert ATTEMPTS == ["UserError"]  # bad input is said once, not three times
    assert len(run_logs.failures()) == 1
    _failed_on(calls_the_retried_task(ValueError, return_state=True), ValueError)
    assert ATTEMPTS == ["UserError", "ValueError", "ValueError", "ValueError"]


def test_the_evaluate_flow_logs_counts_singular_for_one(prefect_harness, run_logs, tmp_path):
    """One case, one trial, one batch, one result read so in the run's log, not '1 trials'."""
    from casemill.flows.evaluate import evaluate_agent
    from casemill.io.jsonl import atomic_write_jsonl
    from tests.flows.conftest import seed_cases

    cases = tmp_path / "one.jsonl"
    atomic_write_jsonl(cases, [seed_cases(1)[0].model_dump(mode="json")])
    evaluate_agent(agent="reference", cases=str(cases), run_dir=str(tmp_path / "run"))
    said = [r.getMessage() for r in run_logs.records]
    assert "evaluating reference on 1 case x 1 trial in 1 batch" in said
    assert any(" over 1 result (0 errors); report " in m for m in said), said


def test_the_expand_flow_logs_counts_singular_for_one(prefect_harness, run_logs, tmp_path):
    from casemill.flows.expand import expand_corpus
    from casemill.io.jsonl import atomic_write_jsonl
    from tests.flows.conftest import seed_cases

    seeds = tmp_path / "seeds.jsonl"
    atomic_write_jsonl(seeds, [seed_cases(1)[0].model_dump(mode="json")])
    out = tmp_path / "out.jsonl"
    expand_corpus(seeds=str(seeds), out=str(out), corpus_dir=None, chains=["keyboard_typo"])
    said = [r.getMessage() for r in run_logs.records]
    assert "expanding 1 seed in 1 batch (1 chain, 1 known case)" in said, said
    assert any(m.endswith(f"written to {out}") for m in said), said


def test_agent_names_with_emoji_codes_are_logged_as_they_are(
    prefect_harness, tmp_path, monkeypatch
):
    """Prefect's console prints log lines through Rich, which shows `:m:` as an emoji: the
    evaluate flow's lines about `openai:m:` must read `openai:m:` on the console."""
    import io

    from prefect.logging.handlers import PrefectConsoleHandler

    from casemill.flows.evaluate import evaluate_agent
    from casemill.io.jsonl import atomic_write_jsonl
    from tests.flows.conftest import seed_cases
    from tests.support.openai_server import OpenAIServer

    cases = tmp_path / "one.jsonl"
    atomic_write_jsonl(cases, [seed_cases(1)[0].model_dump(mode="json")])
    stream = io.StringIO()
    console = PrefectConsoleHandler(stream=stream)  # as Prefect's logging.yml makes it
    logging.getLogger().addHandler(console)
    try:
        with OpenAIServer(lambda body: {"content": "Which order do you mean?"}) as server:
            monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
            evaluate_agent(agent="openai:m:", cases=str(cases), run_dir=str(tmp_path / "run"))
    finally:
        logging.getLogger().removeHandler(console)
    printed = stream.getvalue()
    assert "evaluating openai:m: on 1 case x 1 trial in 1 batch" in printed
    assert "openai:m:: task success" in printed and "\u24c2" not in printed  # no Ⓜ
