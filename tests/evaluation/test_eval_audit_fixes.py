"""What a user audit of `casemill eval` found, fixed:

- a domain pack that does not load stops the run before any agent runs (exit 2, the package and
  its entry point named, as `casemill validate` does), instead of failing every case at scoring
  and blaming the agent;
- a judge skipped for want of an endpoint is among the summary's notes (summary.json,
  summary.md, report.html), as a skipped embedding similarity is;
- a refused connection is a `connection` error whatever `--timeout` is (an adapter does not
  wait for a retry past the case's time limit), and an agent that is down is not retried on
  every case (the runner's circuit breaker records the trials not started as not run).

The broken pack is a `.dist-info` folder on `sys.path` (as in tests/domains/test_registry.py):
nothing is installed into the environment."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill import plugins
from casemill.cli import app
from casemill.errors import UserError
from casemill.evaluation.agents import AgentError, AgentReply, Episode, RetryPolicy
from casemill.evaluation.agents.http_agent import HTTPAgent
from casemill.evaluation.runner import run
from casemill.evaluation.scoring.inputs import load_eval_cases
from tests.evaluation.agents.support_cases import mug_case
from tests.evaluation.scoring.casebuild import cancel_case, clarify_case, refund_case

runner = CliRunner()
ONCE = RetryPolicy(attempts=1)
ENTRY_POINT = "my_agent.bookingz:BookingsDomain"  # a module that does not exist


def _eval(*args: str):
    return runner.invoke(app, ["eval", *args])


def _flat(text: str) -> str:
    return " ".join(text.split())


def _write_cases(path: Path, domain: str | None = None) -> Path:
    lines = []
    for case in (refund_case(), cancel_case(), clarify_case()):
        record = json.loads(case.model_dump_json())
        if domain is not None:
            record["domain"] = domain
            record.pop("id", None)  # the id is the content's: a new domain, a new id
        lines.append(json.dumps(record) + "\n")
    path.write_text("".join(lines))
    return path


@pytest.fixture
def cases_file(tmp_path: Path) -> Path:
    return _write_cases(tmp_path / "cases.jsonl")


@pytest.fixture
def broken_pack(tmp_path, monkeypatch):
    """A distribution `bookings-broken-pack` declaring domain `bookings` at a module that is not
    there, on sys.path for this test only."""
    site = tmp_path / "site"
    info = site / "bookings_broken_pack-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: bookings-broken-pack\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(f"[casemill.domains]\nbookings = {ENTRY_POINT}\n")
    monkeypatch.syspath_prepend(str(site))
    plugins.refresh()
    yield
    plugins.refresh()
    plugins.unregister("domain", "bookings")
    sys.modules.pop("my_agent", None)


# -- 1. a domain pack that does not load -------------------------------------------------------
def test_eval_stops_before_the_agent_when_a_domain_pack_does_not_load(tmp_path, broken_pack):
    cases = _write_cases(tmp_path / "bookings.jsonl", domain="bookings")
    run_dir = tmp_path / "run"
    result = _eval("--agent", "reference", "--cases", str(cases), "-o", str(run_dir))
    said = _flat(result.output)
    assert result.exit_code == 2, result.output
    assert (
        f"error: {cases}: 3 cases of domain 'bookings' cannot be run: domain 'bookings' from "
        f"package 'bookings-broken-pack' (casemill.domains entry point bookings = {ENTRY_POINT}): "
        "cannot import module 'my_agent.bookingz' (No module named 'my_agent'); is it on "
        "PYTHONPATH?"
    ) in said
    assert "Traceback" not in result.output and "scoring case" not in result.output
    assert "no trial could be scored" not in said and "agent's errors" not in said
    assert not (run_dir / "trajectories.jsonl").exists()  # no agent was run


def test_eval_names_an_unknown_domain_before_the_agent_runs(tmp_path):
    cases = _write_cases(tmp_path / "hotel.jsonl", domain="hotel")
    run_dir = tmp_path / "run"
    result = _eval("--agent", "reference", "--cases", str(cases), "-o", str(run_dir))
    assert result.exit_code == 2, result.output
    assert "3 cases of domain 'hotel' cannot be run: unknown domain 'hotel'; known:" in _flat(
        result.output
    )
    assert not (run_dir / "trajectories.jsonl").exists()


def test_load_eval_cases_refuses_a_domain_that_does_not_load(tmp_path, broken_pack):
    """The evaluate flow reads its cases through `load_eval_cases`: it stops the same way."""
    cases = _write_cases(tmp_path / "bookings.jsonl", domain="bookings")
    with pytest.raises(UserError, match="package 'bookings-broken-pack'"):
        load_eval_cases(cases)
    assert len(load_eval_cases(_write_cases(tmp_path / "support.jsonl")).cases) == 3


# -- 2. a skipped judge ------------------------------------------------------------------------
def test_a_skipped_judge_is_among_the_notes_of_every_report(tmp_path, cases_file, no_llm_endpoint):
    run_dir = tmp_path / "run"
    result = _eval(
        "--agent", "reference", "--cases", str(cases_file), "-o", str(run_dir), "--judge"
    )
    assert result.exit_code == 0, result.output
    notes = json.loads((run_dir / "summary.json").read_text())["notes"]
    skipped = [n for n in notes if n.startswith("judge skipped: ")]
    assert len(skipped) == 1 and "CASEMILL_LLM_BASE_URL" in skipped[0]
    assert f"- {skipped[0]}" in (run_dir / "summary.md").read_text()
    html = (run_dir / "report.html").read_text()
    assert '<p class="note">judge skipped: no OpenAI-compatible endpoint is configured' in html
    assert f"note: {skipped[0]}" in _flat(result.stdout)
    shown = runner.invoke(app, ["runs", "show", str(run_dir)])
    assert "note: judge skipped: " in _flat(shown.output)


def test_without_judge_no_judge_note(tmp_path, cases_file, no_llm_endpoint):
    run_dir = tmp_path / "run"
    result = _eval("--agent", "reference", "--cases", str(cases_file), "-o", str(run_dir))
    assert result.exit_code == 0, result.output
    notes = json.loads((run_dir / "summary.json").read_text())["notes"]
    assert not any(n.startswith("judge") for n in notes)


# -- 3. a closed port, a dead agent ------------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # released: nothing listens there


def test_a_closed_port_under_a_short_time_limit_is_a_connection_error(tmp_path, cases_file):
    url = f"http://127.0.0.1:{_closed_port()}/agent"
    run_dir = tmp_path / "run"
    argv = ["--cases", str(cases_file), "-o", str(run_dir), "--concurrency", "1"]
    result = _eval("--agent", url, *argv, "--timeout", "1", "--json")
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["error_kinds"] == {"connection": 3}
    err = _flat(result.stderr)
    assert "ended in an error (connection 3)" in err and "time limit ends within" in err
    assert "Check that the agent is reachable" in err
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    errors = {r["case_id"]: r["error"] for r in records}
    first = refund_case().id  # the first case run: the others wait for it (concurrency 1)
    assert errors[first].startswith("connection failed: ")
    assert "Connection refused" in errors[first] and "no reply within" not in errors[first]
    for case_id, error in errors.items():
        if case_id != first:
            assert error.startswith(
                "not run: the agent seems to be down: no trial has reached it (1 trial could not "
                "connect, retries included); last error: connection failed: "
            ), error


def test_an_adapter_does_not_wait_for_a_retry_past_the_time_limit(tmp_path):
    """The back-off (5 s) outlasts the time limit (0.5 s): the refused connection is raised as
    it is, where the runner used to cut the wait off and record a time-out."""
    agent = HTTPAgent(
        f"http://127.0.0.1:{_closed_port()}/agent", retry=RetryPolicy(base_s=5.0, jitter=0)
    )
    [traj] = run(agent, [mug_case()], tmp_path, timeout_s=0.5, retry=ONCE)
    assert traj.error_kind == "connection"
    assert traj.error.startswith("connection failed: ")
    assert traj.error.endswith("(not retried: the case's time limit ends within the 5.0s wait)")


def test_episode_outlasts_only_with_a_deadline():
    episode = Episode(case_id="c", messages=[], tools=[], sandbox=None)  # type: ignore[arg-type]
    assert not episode.outlasts(1e9)  # outside the runner: no time limit
    episode.deadline = 0.0  # long past
    assert episode.outlasts(0.0)


class ScriptedAgent:
    """Answers or refuses the connection, by how many times it was asked."""

    name = "scripted"
    fingerprint = "scripted-1"

    def __init__(self, answers: list[bool]):
        self.answers = answers
        self.asked = 0

    async def run(self, episode: Episode) -> AgentReply:
        self.asked += 1
        if self.answers[min(self.asked, len(self.answers)) - 1]:
            return AgentReply("ok")
        raise AgentError("connection", "connection failed: [Errno 111] Connection refused")


def _cases(n: int):
    return [mug_case().model_copy(update={"id": f"c_{i:03d}"}) for i in range(n)]


def test_an_agent_never_reached_is_asked_once_and_the_rest_are_not_run(tmp_path):
    agent = ScriptedAgent([False])
    out = run(agent, _cases(5), tmp_path, concurrency=1, retry=ONCE)
    assert agent.asked == 1
    assert [t.error_kind for t in out] == ["connection"] * 5
    assert all(t.error.startswith("not run: the agent seems to be down") for t in out[1:])
    # the trials not run are errors: --rerun-failed runs them when the agent is up
    again = ScriptedAgent([True])
    out = run(again, _cases(5), tmp_path, concurrency=1, retry=ONCE, rerun_failed=True)
    assert again.asked == 5 and all(t.error is None for t in out)


def test_an_agent_that_went_down_is_given_three_trials_in_a_row(tmp_path):
    agent = ScriptedAgent([True, False, True, False, False, False])
    out = run(agent, _cases(9), tmp_path, concurrency=1, retry=ONCE)
    assert agent.asked == 6  # a trial that reached it in between starts the count again
    assert [t.error is None for t in out[:3]] == [True, False, True]
    assert all(t.error.startswith("connection failed") for t in out[3:6])
    assert all(
        t.error.startswith(
            "not run: the agent seems to be down: the last 3 trials could not connect"
        )
        for t in out[6:]
    )


def test_the_breaker_can_be_turned_off(tmp_path):
    agent = ScriptedAgent([False])
    out = run(agent, _cases(4), tmp_path, concurrency=1, retry=ONCE, unreachable_after=0)
    assert agent.asked == 4 and all(t.error.startswith("connection failed") for t in out)
