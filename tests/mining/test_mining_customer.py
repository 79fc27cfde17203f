"""What mined generic cases carry for recorded tools and the simulated customer: the calls
with their results, the logged customer turns a conversation-level case replays, and no
customer turns for a decision point."""

from __future__ import annotations

from casemill.mining.pipeline import MineOptions, mine


def test_mined_airline_cases_carry_calls_and_the_customer(shared_data):
    log = shared_data / "tau-bench-airline-logs" / "support_logs.jsonl"
    result = mine([log], "openai-jsonl", options=MineOptions())
    by_kind: dict[str, list] = {}
    for case in result.cases:
        by_kind.setdefault(case.tags.labels[1], []).append(case)
    conversations, points = by_kind["conversation"], by_kind["decision_point"]
    assert len(conversations) == 100 and len(points) == 84
    assert all(c.customer is not None and c.customer.max_turns == 0 for c in points)
    scripted = [c for c in conversations if c.customer is not None and c.customer.script]
    assert len(scripted) >= 95
    assert not any("###STOP###" in line for c in scripted for line in c.customer.script)
    assert all(len(c.customer.script) + 2 <= (c.customer.max_turns or 10) for c in scripted)
    first = conversations[0]
    calls = first.environment.state["calls"]
    writes = [c for c in calls if c["tool"] == "book_reservation"]
    assert writes and all({"tool", "params", "result", "ok", "turn"} <= set(c) for c in calls)
    assert {(w["tool"], w["ok"]) for w in writes} >= {("book_reservation", True)}


def test_logged_calculate_calls_are_answered_on_recorded_tools(shared_data):
    from casemill.domains.recorded import RecordedSandbox

    log = shared_data / "tau-bench-airline-logs" / "support_logs.jsonl"
    result = mine([log], "openai-jsonl", options=MineOptions())
    found = [
        (case, entry)
        for case in result.cases
        for entry in case.environment.state.get("calls", [])
        if entry["tool"] == "calculate" and entry["ok"]
    ]
    assert found
    case, entry = found[0]
    answer = RecordedSandbox(case).call("calculate", entry["params"])
    assert answer.ok and answer.content == entry["result"]
