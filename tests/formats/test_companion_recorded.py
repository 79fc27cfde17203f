"""A companion sample the support pack cannot take whole (its order has a total but no line
items) is imported to run on recorded tools, not quarantined, and an agent can pass it."""

from __future__ import annotations

import json
from pathlib import Path

from casemill.evaluation.runner import run
from casemill.evaluation.scoring import score
from casemill.formats.companion import import_companion

SAMPLE = {
    "sample_id": "refund_0",
    "input": [{"role": "customer", "content": "My order A100 arrived broken, refund me please."}],
    "expected_function_call": {
        "name": "issue_refund",
        "arguments": {"order_id": "A100", "amount": 40.0},
    },
    "order": {"order_id": "A100", "status": "delivered", "total": 40.0},
}


def test_an_order_without_line_items_runs_on_recorded_tools(tmp_path: Path):
    source = tmp_path / "companion.jsonl"
    source.write_text(json.dumps(SAMPLE) + "\n")
    result = import_companion(source)
    assert not result.quarantined
    (case,) = result.cases
    assert case.domain == "generic:ecommerce"
    assert "recorded-tools" in case.tags.labels
    assert case.provenance.label_confidence == "low"
    assert "order.items: expected a non-empty list of line items" in case.provenance.notes
    assert case.environment.state["records"] == {"order": {"A100": SAMPLE["order"]}}

    def agent(episode):
        order = episode.call("get_order", {"order_id": "A100"}).content
        episode.call("issue_refund", {"order_id": "A100", "amount": order["total"]})
        return "Refunded 40.00."

    from casemill.evaluation.agents.python_agent import PythonAgent

    (trajectory,) = run(PythonAgent(agent, "python:test:agent"), [case], tmp_path / "run")
    scored = score(case, trajectory)
    assert scored.task_success and scored.labels["state_check"] == "calls"
    assert scored.metrics["off_script_calls"] == 0.0
