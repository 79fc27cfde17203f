"""Compatibility mode "chapter": golden values computed by hand from the chapter's formulas
(chapter_golden.json beside this file), and where it differs from the default mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casemill.evaluation.scoring import score
from tests.evaluation.scoring.casebuild import clarify_case, refund_case, trajectory

GOLDEN = json.loads((Path(__file__).parent / "chapter_golden.json").read_text())
BUILDERS = {"refund": refund_case, "clarify": clarify_case}


@pytest.mark.parametrize("golden", GOLDEN, ids=[g["name"] for g in GOLDEN])
def test_chapter_formulas_match_golden_values(golden):
    case = BUILDERS[golden["case"]]()
    t = trajectory(case, [(tool, params) for tool, params in golden["calls"]], golden["reply"])
    s = score(case, t, mode="chapter")
    assert s.mode == "chapter"
    for name, want in golden["metrics"].items():
        assert s.metrics[name] == pytest.approx(want), name
    assert s.task_success is (golden["metrics"]["task_success"] == 1.0)


def test_modes_disagree_where_the_matching_rules_and_forbidden_calls_matter():
    refund = refund_case()
    t = trajectory(
        refund,
        [("refund_items", {"order_id": "#W1001", "item_ids": ["I1"], "reason": "damaged"})],
        "Refund of 14.50 issued.",
    )
    assert score(refund, t, mode="chapter").task_success is False
    assert score(refund, t).task_success is True  # id rule: '#W1001' is W1001
    clarify = clarify_case()
    t = trajectory(
        clarify, [("cancel_order", {"order_id": "W1002"})], "Which order? I cancelled W1002 anyway."
    )
    assert score(clarify, t, mode="chapter").task_success is True
    assert score(clarify, t).task_success is False  # any write is forbidden when asking is right


def test_chapter_summary_records_chapter_metric_versions():
    from casemill.evaluation.scoring import summarize

    case = refund_case()
    s = score(case, trajectory(case, [], "no"), mode="chapter")
    summary = summarize([case], [s])
    assert summary.mode == "chapter"
    assert summary.metric_versions["tool_recall"] == "chapter-1"
    assert summary.metric_versions["latency_s"] == "1"


def test_the_chapter_mode_gives_exactly_the_metrics_the_registry_says():
    """The gate refuses rules on other metrics in this mode, from the registry's lists."""
    from casemill.evaluation.scoring.registry import CHAPTER_METRICS, OPERATIONAL_METRICS

    case = refund_case()
    s = score(case, trajectory(case, [], "no"), mode="chapter")
    assert set(s.metrics) == {*CHAPTER_METRICS, *OPERATIONAL_METRICS}
