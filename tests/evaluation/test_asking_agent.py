"""An LLM agent that asks before it acts is scored as well as one that does not.

Behind a local OpenAI-compatible server, a scripted model plays the reference agent's moves on
each bundled seed (worked out offline, on the case's own sandbox), one tool call a request. The
asking variant, before each write, answers "Shall I go ahead?" instead and makes the write only
after the customer's yes. With the scripted customer both score the same; without a customer
(`--max-customer-turns 0`, one agent turn a case, as before the simulator) the asking one fails
every case that needs a write.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from casemill.case.model import Case
from casemill.cli import app
from casemill.domains import get_domain
from casemill.evaluation.agents import case_messages, new_episode
from casemill.evaluation.reference.agent import ReferenceAgent
from tests.support.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "seeds" / "support.jsonl"
ASK = "I can do that for you. Shall I go ahead?"
runner = CliRunner()


@dataclass(frozen=True)
class Moves:
    said: tuple[str, ...]  # the case's own user messages
    own: int  # the case's own tool results (a conversation that shows earlier calls)
    calls: list[tuple[str, dict[str, Any]]]
    results: list[Any]
    reply: str

    def fits(self, users: list[str], results: list[Any]) -> bool:
        new = results[self.own :]
        return tuple(users[: len(self.said)]) == self.said and new == self.results[: len(new)]


def reference_moves(case: Case) -> Moves:
    """What the reference agent does on `case`: its calls, their results, its reply."""
    episode = new_episode(case)
    reply = ReferenceAgent().respond(episode)
    messages = case_messages(case)
    said = tuple(m["content"] for m in messages if m["role"] == "user")
    own = sum(1 for m in messages if m["role"] == "tool")
    calls = [(c.tool, dict(c.params)) for c in episode.calls]
    return Moves(said, own, calls, [c.result for c in episode.calls], reply.text or "")


class ScriptedModel:
    """Answers a chat request with the next move of the case the request is about (the one
    whose user messages and tool results so far the request shows: seeds that share a
    conversation differ in what the tools return); `asks`: a write waits for a yes."""

    def __init__(self, cases: list[Case], asks: bool):
        self.asks = asks
        self.cases = [reference_moves(case) for case in cases]
        self.writes = get_domain("support").write_tools

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        users = [m["content"] for m in messages if m["role"] == "user"]
        results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        moves = next(m for m in self.cases if m.fits(users, results))
        made = len(results) - moves.own
        if made == len(moves.calls):
            return {"content": moves.reply}
        tool, params = moves.calls[made]
        if self.asks and tool in self.writes:
            writes_made = sum(1 for t, _ in moves.calls[:made] if t in self.writes)
            if _yeses(messages) <= writes_made:
                return {"content": ASK}
        return {"tool_calls": [{"id": f"call_{made}", "name": tool, "arguments": params}]}


def _yeses(messages: list[dict[str, Any]]) -> int:
    asked = False
    count = 0
    for m in messages:
        if m["role"] == "assistant" and m.get("content") == ASK:
            asked = True
        elif m["role"] == "user" and asked:
            count += m["content"].lower().startswith("yes")
            asked = False
    return count


def _evaluate(tmp_path: Path, monkeypatch, asks: bool, name: str, *extra: str) -> dict:
    cases = [Case.model_validate_json(line) for line in SEEDS.read_text().splitlines() if line]
    model = ScriptedModel(cases, asks)
    with OpenAIServer(model) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        run = tmp_path / name
        argv = ["eval", "--agent", "openai:scripted", "--cases", str(SEEDS), "-o", str(run)]
        result = runner.invoke(app, [*argv, "--json", *extra])
    assert result.exit_code in (0, 1), result.output
    return json.loads((run / "summary.json").read_text())


@pytest.mark.slow  # three runs of the 89 seeds over HTTP (about 20 s)
def test_asking_before_every_write_scores_as_never_asking(tmp_path, monkeypatch):
    never = _evaluate(tmp_path, monkeypatch, False, "never")
    asking = _evaluate(tmp_path, monkeypatch, True, "asking")
    one_turn = _evaluate(tmp_path, monkeypatch, True, "one-turn", "--max-customer-turns", "0")
    print(
        "task success: never asks",
        never["task_success_rate"],
        "asks, scripted customer",
        asking["task_success_rate"],
        "asks, no customer",
        one_turn["task_success_rate"],
    )
    assert never["cases"] == asking["cases"] == 89
    assert never["task_success_rate"] == asking["task_success_rate"] == 1.0
    assert one_turn["task_success_rate"] < 0.6
    assert asking["metrics"]["customer_turns"]["mean"] > 0.5
    assert never["metrics"]["customer_turns"]["mean"] < 0.05
