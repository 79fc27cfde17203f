"""`casemill eval` on a model that calls a tool the domain does not have, reads the error and
recovers: the trial succeeds (design.md judges calls, final state and reply), and the printed
summary and `runs show` tell the agent fault apart from errors that ended trials."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from casemill.cli import app
from tests.evaluation.agents.support_cases import mug_case
from tests.evaluation.openai_eval import openai_eval_argv
from tests.support.openai_server import OpenAIServer

runner = CliRunner()


def recovering(body: dict) -> dict:
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    if done == 0:
        return {"tool_calls": [{"id": "u", "name": "issue_refund", "arguments": {}}]}
    if done == 1:
        args = {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}
        return {"tool_calls": [{"id": "r", "name": "refund_items", "arguments": args}]}
    return {"content": "I've issued a refund of 14.50 for the cracked mug."}


def test_a_recovered_unknown_tool_call_passes_and_is_reported_as_an_agent_fault(
    tmp_path: Path, monkeypatch
):
    case = mug_case()
    argv, run = openai_eval_argv(tmp_path, case)
    with OpenAIServer(recovering) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        result = runner.invoke(app, argv)
    said = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    summary = json.loads((run / "summary.json").read_text())
    assert summary["task_success_rate"] == 1.0
    assert summary["errors"] == 0 and summary["error_kinds"] == {"unknown_tool": 1}
    assert "errors:" not in said
    assert (
        "agent faults: 1 of 1 trials had an agent fault (unknown_tool 1), scored as usual; "
        f"first: case {case.id} trial 0: agent called unknown tool 'issue_refund'" in said
    )
    markdown = (run / "summary.md").read_text()
    assert "Agent faults (trials scored as usual): unknown_tool 1" in markdown
    assert "Errors:" not in markdown and "(1 result, 0 errors)" in markdown
    shown = " ".join(runner.invoke(app, ["runs", "show", str(run)]).output.split())
    assert "agent faults: 1 of 1 trials had an agent fault (unknown_tool 1)" in shown
    assert "errors:" not in shown


def test_rerun_failed_leaves_a_scored_trial_with_an_agent_fault_alone(tmp_path: Path, monkeypatch):
    """Re-running only the trials in which the agent erred would re-roll its mistakes away."""
    argv, run = openai_eval_argv(tmp_path, mug_case())
    with OpenAIServer(recovering) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        first = runner.invoke(app, argv)
        asked = len(server.requests)
        again = runner.invoke(app, [*argv, "--rerun-failed"])
        asked_again = len(server.requests) - asked
    assert first.exit_code == 0 and again.exit_code == 0, again.output
    assert asked == 3 and asked_again == 0
