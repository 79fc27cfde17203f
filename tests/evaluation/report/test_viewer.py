"""The viewer's data: one row a case with its status, operator, intents, tags and failed gate
rules; details per trial (transcript with simulated turns marked, calls, state diff); several
runs merged into a matrix with the flips first."""

from __future__ import annotations

from casemill.evaluation.report.html import write_compare
from casemill.evaluation.report.viewer import (
    compare_viewer_data,
    load_viewer_data,
    message_view,
    read_viewer_data,
)
from tests.evaluation.report.viewer_runs import PAYLOAD, cases, evaluate


def test_a_run_gives_a_row_a_case_with_what_the_filters_need(tmp_path):
    run = evaluate(tmp_path, "a", clarify_writes=True)
    index, details = load_viewer_data(run)
    refund, clarify, _, variant = cases()
    rows = {r["id"]: r for r in index["cases"]}
    assert len(rows) == 4 == len(details)
    assert rows[clarify.id]["r"] == [
        {"s": "fail", "p": 0, "t": 1, "k": [], "f": ["forbidden_call"]}
    ]
    assert rows[clarify.id]["tags"][:2] == ["adversarial", "medium"]
    assert rows[clarify.id]["in"] == ["refund"] and rows[clarify.id]["rules"] == index["rules"]
    assert rows[variant.id]["op"] == "typos" and rows[refund.id]["op"] == "(none)"
    assert index["cases"][0]["id"] == clarify.id  # failing cases first
    trial = details[0]["runs"][0][0]
    assert [m.get("simulated", False) for m in trial["messages"]] == [False] * 4 + [True, False]
    assert trial["messages"][1]["tool_calls"] == ['cancel_order({"order_id": "W1002"})']
    assert trial["messages"][-2]["content"].endswith(PAYLOAD)
    assert ["orders.W1002.status", '"pending"', '"cancelled"'] in trial["diff"]
    assert details[0]["case"]["forbidden"] == ["never: any write (ask first)"]


def test_any_message_shape_is_shown_with_nothing_hidden():
    shown = message_view({"role": "assistant", "content": [{"type": "text"}], "name": "bot"})
    assert shown == {
        "role": "assistant",
        "content": '[{"type": "text"}]',
        "extra": '{"name": "bot"}',
    }
    call = {"tool_calls": [{"name": "get_order", "arguments": {"order_id": "W1"}}]}
    assert message_view(call)["tool_calls"] == ['get_order({"order_id": "W1"})']


def test_runs_merge_into_a_matrix_with_the_flips_first(tmp_path):
    runs = [
        evaluate(tmp_path, "a", clarify_writes=False),
        evaluate(tmp_path, "b", clarify_writes=True),
        evaluate(tmp_path, "c", clarify_writes=True, refund_ok=False),
    ]
    index, details = compare_viewer_data([(str(r), *load_viewer_data(r)) for r in runs])
    refund, clarify, cancel, _ = cases()
    assert [r["name"] for r in index["runs"]] == [str(r) for r in runs]
    flips = [r["id"] for r in index["cases"] if r["flip"]]
    assert sorted(flips) == sorted([refund.id, clarify.id])
    assert [r["id"] for r in index["cases"][:2]] == flips
    row = next(r for r in index["cases"] if r["id"] == clarify.id)
    assert [c["s"] for c in row["r"]] == ["pass", "fail", "fail"]
    detail = details[[r["id"] for r in index["cases"]].index(clarify.id)]
    assert [t[0]["ok"] for t in detail["runs"]] == [True, False, False]
    page = write_compare(runs, tmp_path / "compare.html").read_text()
    again, _ = read_viewer_data(page)
    assert again == index
    assert "3 runs compared" in page and "4 cases, 2 flips" in page
