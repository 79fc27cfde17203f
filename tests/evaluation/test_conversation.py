"""Multi-turn episodes end to end: an `openai:` agent and a customer played by a model, both
behind a local OpenAI-compatible server (told apart by the model they are asked for); the
customer-turn maximum; a failing simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from casemill.cli import app
from casemill.evaluation.customer import ScriptedCustomer
from casemill.evaluation.report.viewer import read_viewer_data
from casemill.evaluation.runner import run
from tests.evaluation.scoring.casebuild import refund_case
from tests.support.openai_server import OpenAIServer, Reply

runner = CliRunner()
QUESTIONS = (
    "What is your email?",
    "Which item was cracked?",
    "Do you want the money on your card?",
)


def _agent(body: dict[str, Any]) -> dict[str, Any]:
    """Asks three questions, one a turn, then refunds and says so."""
    messages = body["messages"]
    users = sum(1 for m in messages if m["role"] == "user")
    if any(m["role"] == "tool" for m in messages):
        return {"content": "Done: a refund of $14.50 for the mug is on its way."}
    if users <= len(QUESTIONS):
        return {"content": QUESTIONS[users - 1]}
    call = {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}
    return {"tool_calls": [{"id": "c1", "name": "refund_items", "arguments": call}]}


def _user(body: dict[str, Any]) -> dict[str, Any]:
    """The simulated customer: answers each question, stops once the refund is done."""
    last = body["messages"][-1]["content"]
    if last.startswith("Done"):
        return {"content": "Thanks! ###STOP###"}
    return {"content": f"Answer to: {last}"}


def _both(body: dict[str, Any]) -> Any:
    return _user(body) if body["model"] == "customer" else _agent(body)


def test_a_model_plays_the_customer_for_three_turns(tmp_path: Path, monkeypatch):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(refund_case().model_dump_json() + "\n")
    with OpenAIServer(_both) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        out = tmp_path / "run"
        argv = ["eval", "--agent", "openai:agent", "--user-model", "customer"]
        result = runner.invoke(app, [*argv, "--cases", str(cases), "-o", str(out)])
        user_requests = [b for b in server.requests if b["model"] == "customer"]
    assert result.exit_code == 0, result.output
    trajectory = json.loads((out / "trajectories.jsonl").read_text())
    simulated = [m["content"] for m in trajectory["messages"] if m.get("simulated")]
    assert simulated == [f"Answer to: {q}" for q in QUESTIONS]
    assert trajectory["customer_turns"] == 3
    assert trajectory["customer_ended"] == "the simulated customer stopped: Thanks!"
    # the customer sees the conversation from its side: the agent's replies as `user` turns
    first = user_requests[0]["messages"]
    assert first[0]["role"] == "system" and "Refund it please" in first[0]["content"]
    assert first[-1] == {"role": "user", "content": QUESTIONS[0]}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["task_success_rate"] == 1.0
    assert summary["agent_settings"]["customer"] == "llm:customer"
    assert len(summary["agent_settings"]["customer_prompt_hash"]) >= 8
    # the report's viewer holds the transcript, the simulated turns marked
    _, details = read_viewer_data((out / "report.html").read_text())
    shown = json.dumps(details)
    assert '"simulated": true' in shown and "Answer to: Which item was cracked?" in shown


def test_the_customer_turn_maximum_ends_an_agent_that_keeps_asking(tmp_path: Path):
    class Asker:
        name, fingerprint = "asker", "asker-1"

        async def run(self, episode):
            from casemill.evaluation.agents import AgentReply

            return AgentReply(f"Shall I go ahead? (asked {episode.turn + 1} times)")

    (trajectory,) = run(
        Asker(), [refund_case()], tmp_path, customer=ScriptedCustomer(), max_customer_turns=3
    )
    assert trajectory.customer_turns == 3 and trajectory.hit_turn_limit
    assert trajectory.customer_ended == "the customer-turn maximum (3) was reached"
    assert not trajectory.completed
    assert trajectory.final_reply == "Shall I go ahead? (asked 4 times)"


def test_a_failing_simulator_ends_the_trial_as_user_simulator_never_a_pass(
    tmp_path: Path, monkeypatch
):
    def answer(body: dict[str, Any]) -> Any:
        if body["model"] == "customer":
            return Reply(status=400, body={"error": {"message": "bad request"}})
        return {"content": "What is your email?"}

    cases = tmp_path / "cases.jsonl"
    cases.write_text(refund_case().model_dump_json() + "\n")
    with OpenAIServer(answer) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        out = tmp_path / "run"
        argv = ["eval", "--agent", "openai:agent", "--user-model", "customer", "--json"]
        result = runner.invoke(app, [*argv, "--cases", str(cases), "-o", str(out)])
    trajectory = json.loads((out / "trajectories.jsonl").read_text())
    assert trajectory["error_kind"] == "user_simulator"
    assert "the user simulator failed" in trajectory["error"]
    assert result.exit_code == 1  # no trial could be scored


def test_without_an_endpoint_the_llm_customer_says_so_and_nothing_runs(tmp_path, monkeypatch):
    for name in ("CASEMILL_LLM_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    cases = tmp_path / "cases.jsonl"
    cases.write_text(refund_case().model_dump_json() + "\n")
    argv = ["eval", "--agent", "reference", "--user-model", "m", "--cases", str(cases)]
    result = runner.invoke(app, [*argv, "-o", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "no OpenAI-compatible endpoint is configured" in " ".join(result.output.split())
    assert not (tmp_path / "run" / "trajectories.jsonl").exists()


def test_a_run_folder_rerun_with_another_customer_runs_the_cases_again(tmp_path: Path):
    from casemill.evaluation.customer import NoCustomer

    class Asker:
        name, fingerprint = "asker", "asker-1"

        async def run(self, episode):
            from casemill.evaluation.agents import AgentReply

            return AgentReply("Shall I go ahead?" if episode.turn == 0 else "Done.")

    (first,) = run(Asker(), [refund_case()], tmp_path)
    (again,) = run(Asker(), [refund_case()], tmp_path, customer=NoCustomer())
    assert (first.customer_turns, again.customer_turns) == (1, 0)
    assert first.agent_fingerprint == "asker-1" != again.agent_fingerprint


def test_the_initial_state_is_a_copy_of_what_the_sandbox_hands_out():
    from casemill.evaluation.agents import new_episode

    episode = new_episode(refund_case())
    live = episode.sandbox.comparable_state()
    assert episode.initial_state == live and episode.initial_state is not live
