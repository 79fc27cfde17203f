"""A run's trial errors, described, and the run in which nothing could be scored."""

from __future__ import annotations

import pytest

from casemill.evaluation.scoring.errors import (
    NothingScored,
    check_scored,
    describe_errors,
    describe_faults,
    unscored,
    what_to_check,
)
from casemill.evaluation.scoring.model import CaseScore


def _score(case_id: str, kind: str | None, error: str | None = None) -> CaseScore:
    message = error or (f"{kind} happened" if kind else None)
    return CaseScore(case_id=case_id, error=message, error_kind=kind)


def test_every_trial_errored_is_unscored_with_counts_and_the_first_message():
    scores = [_score("a", "timeout"), _score("b", "connection"), _score("c", "connection")]
    assert unscored(scores) == (
        "no trial could be scored: 3 of 3 trials ended in an error (connection 2, timeout 1); "
        "first: case a trial 0: timeout happened"
    )
    with pytest.raises(NothingScored, match=r"first: case a trial 0: timeout happened\. Fix it$"):
        check_scored(scores, "Fix it")


def test_agent_faults_and_clean_trials_are_scored():
    faults = [_score("a", "unknown_tool"), _score("b", "connection")]
    assert unscored(faults) is None  # the agent ran and misbehaved: its trial is scored
    assert unscored([_score("a", None), _score("b", "timeout")]) is None
    assert unscored([]) is None
    check_scored(faults, "unused")  # does not raise


def test_errors_are_described_clipped_on_one_line():
    long = "line one\nline two " + "x" * 400
    described = describe_errors([_score("a", None), _score("b", "exception", long)])
    assert described is not None
    assert described.startswith("1 of 2 trials ended in an error (exception 1); first: case b")
    assert "\n" not in described and described.endswith("...")
    assert describe_errors([_score("a", None)]) is None


def test_the_hint_sends_to_the_network_only_when_every_error_is_a_transport_one():
    unreached = [_score("a", "timeout"), _score("b", "connection"), _score("c", "http_5xx")]
    assert what_to_check(unreached) == "Check that the agent is reachable"
    raised = [_score("a", "timeout"), _score("b", "exception")]
    assert what_to_check(raised) == "Check the agent's errors"


def test_agent_faults_are_said_apart_from_the_errors_that_ended_trials():
    scores = [_score("a", "unknown_tool"), _score("b", "timeout"), _score("c", None)]
    assert describe_errors(scores) == (
        "1 of 3 trials ended in an error (timeout 1); first: case b trial 0: timeout happened"
    )
    assert describe_faults(scores) == (
        "1 of 3 trials had an agent fault (unknown_tool 1), scored as usual; "
        "first: case a trial 0: unknown_tool happened"
    )
    assert describe_errors(scores[:1]) is None and describe_faults(scores[1:]) is None
