"""The terminal view of a run's gate: each rule's note once, counts in words."""

from __future__ import annotations

from casemill.cli.console import console
from casemill.cli.run_view import print_gate
from casemill.evaluation.scoring.model import GateFailure, GateVerdict, RuleResult, RunSummary

SMALL = "75 cases in the slice, fewer than min_cases=100"


def _printed(verdict: GateVerdict) -> list[str]:
    with console.capture() as captured:
        print_gate(RunSummary(gate=verdict))
    return captured.get().splitlines()


def test_a_failed_rule_s_message_is_printed_once_not_also_as_its_note():
    failure = GateFailure(
        rule="r1", slice="all", metric="m", value=None, threshold=None, message=SMALL
    )
    verdict = GateVerdict(
        passed=False,
        failures=(failure,),
        rules=(
            RuleResult(rule="r1", passed=False, note=SMALL),
            RuleResult(rule="r2", passed=True, note="skipped: no baseline run given"),
        ),
    )
    assert _printed(verdict) == [
        "gate failed: 1 of 2 rules",
        "  note: r2: skipped: no baseline run given",
        f"  r1: {SMALL}",
    ]


def test_a_passed_gate_of_one_rule_says_rule():
    verdict = GateVerdict(passed=True, rules=(RuleResult(rule="r1", passed=True, value=1.0),))
    assert _printed(verdict) == ["gate passed (1 rule)"]
