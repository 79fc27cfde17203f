"""Compatibility mode "chapter": the formulas of the book chapter's batch evaluation, exactly.

- phrase recall: required phrases found (lower-cased substring) / required; 1.0 when none;
- tool recall and precision: over the *sets* of tool names (every call counts, reads too);
  both 1.0 when the case expects no tool; precision 0.0 when the agent called none;
- parameter accuracy: expected calls for which some call has the same tool and parameters equal
  as whole dictionaries / expected calls; 1.0 when none is expected;
- task success: every expected call present with equal parameters, and every phrase present.

Nothing else (state, forbidden calls, matching rules) enters these numbers; use the default
mode for those.
"""

from __future__ import annotations

from collections.abc import Sequence

from casemill.case.model import ExpectedCall
from casemill.evaluation.trajectory import RecordedCall


def phrase_recall(reply: str, phrases: Sequence[str]) -> float:
    if not phrases:
        return 1.0
    low = reply.lower()
    return sum(1 for p in phrases if p.lower() in low) / len(phrases)


def tool_recall_precision(called: Sequence[str], expected: Sequence[str]) -> tuple[float, float]:
    if not expected:
        return 1.0, 1.0
    want, got = set(expected), set(called)
    hit = len(want & got)
    return hit / len(want), (hit / len(got) if got else 0.0)


def param_accuracy(calls: Sequence[RecordedCall], expected: Sequence[ExpectedCall]) -> float:
    if not expected:
        return 1.0
    matched = sum(
        1
        for want in expected
        if any(c.tool == want.tool and c.params == want.params for c in calls)
    )
    return matched / len(expected)


def chapter_metrics(
    reply: str,
    calls: Sequence[RecordedCall],
    expected: Sequence[ExpectedCall],
    phrases: Sequence[str],
) -> dict[str, float]:
    recall, precision = tool_recall_precision([c.tool for c in calls], [e.tool for e in expected])
    params = param_accuracy(calls, expected)
    phrases_found = phrase_recall(reply, phrases)
    success = params == 1.0 and phrases_found == 1.0
    return {
        "task_success": 1.0 if success else 0.0,
        "tool_recall": recall,
        "tool_precision": precision,
        "param_accuracy": params,
        "phrase_recall": phrases_found,
    }
