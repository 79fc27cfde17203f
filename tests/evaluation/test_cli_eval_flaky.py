"""`casemill eval --trials K` and `runs show` name the flaky cases (passes/trials), flakiest
first, not only their count."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from casemill.cli import app
from tests.evaluation.agents.support_cases import mug_case
from tests.evaluation.openai_eval import openai_eval_argv
from tests.support.openai_server import OpenAIServer

runner = CliRunner()


def test_the_flaky_cases_are_named_with_their_passes(tmp_path: Path, monkeypatch):
    """Every other request gets the refund done; the other is a reply without it: with
    2 trials the mug case passes once of 2."""
    asked = []

    def alternating(body: dict) -> dict:
        tools = [m for m in body["messages"] if m["role"] == "tool"]
        if not tools:
            asked.append(1)
            if len(asked) % 2 == 0:
                return {"content": "Sorry, I cannot refund that."}
            args = {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}
            return {"tool_calls": [{"id": "r", "name": "refund_items", "arguments": args}]}
        return {"content": "I've refunded 14.50 for the cracked mug."}

    case = mug_case()
    argv, run = openai_eval_argv(tmp_path, case)
    with OpenAIServer(alternating) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        result = runner.invoke(app, [*argv, "--trials", "2", "--concurrency", "1"])
    assert result.exit_code == 0, result.output
    assert json.loads((run / "summary.json").read_text())["pass_k"] == {"1": 0.5, "2": 0.0}
    said = f"flaky cases: 1: {case.id} (1/2)"
    assert said in " ".join(result.output.split())
    shown = runner.invoke(app, ["runs", "show", str(run)])
    assert said in " ".join(shown.output.split())
