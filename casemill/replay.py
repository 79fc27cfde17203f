"""The replay check: a case's expected calls, replayed on its initial environment, must succeed
and agree with the domain's policy, and its outcome must fit its calls.

Replay runs without injected faults: faults are transient and the expected calls describe what
happens once the tools answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from casemill.case.matching import forbidden_hit, value_matches
from casemill.case.model import Case, ToolCall
from casemill.domains import Domain, Problem, Sandbox, get_domain


@dataclass
class ReplayResult:
    ok: bool
    problems: list[Problem] = field(default_factory=list)
    final_state: dict[str, Any] | None = None
    comparable_state: dict[str, Any] | None = None


def outcome_problems(case: Case, domain: Domain) -> list[Problem]:
    calls = case.expected.tool_calls
    writes = [c for c in calls if c.tool in domain.write_tools]
    outcome = case.expected.outcome
    problems = []
    if outcome in ("clarify", "refuse") and writes:
        problems.append(
            Problem(
                "expected.outcome",
                f"outcome '{outcome}' expects no write call, but {[c.tool for c in writes]} are expected",
                "outcome-calls",
            )
        )
    if (
        outcome == "escalate"
        and "escalate_to_human" in domain.write_tools
        and not any(c.tool == "escalate_to_human" for c in calls)
    ):
        problems.append(
            Problem(
                "expected.outcome",
                "outcome 'escalate' needs an escalate_to_human call",
                "outcome-calls",
            )
        )
    forbidden = case.expected.forbidden_calls
    for index, call in enumerate(calls if forbidden else ()):
        as_call = ToolCall(tool=call.tool, params=call.params)
        for rule in forbidden:
            if forbidden_hit(rule, as_call, domain.write_tools):
                problems.append(
                    Problem(
                        f"expected.tool_calls[{index}]",
                        f"expected call {call.tool} is also forbidden ({rule.reason or 'no reason given'})",
                        "expected-forbidden",
                    )
                )
    return problems + phrase_problems(case) + match_problems(case)


def match_problems(case: Case) -> list[Problem]:
    """An expected parameter that does not match itself under its rule (a 'number' rule on an
    order id, a 'set' rule on a string) can match no call an agent makes."""
    problems = []
    for index, call in enumerate(case.expected.tool_calls):
        for name, rule in call.match.items():
            value = call.params.get(name)
            if name in call.params and not value_matches(value, value, rule):
                problems.append(
                    Problem(
                        f"expected.tool_calls[{index}].match.{name}",
                        f"the expected {name} {value!r} does not match itself under its "
                        f"'{rule.kind}' rule: no call can match it",
                        "match-rule",
                    )
                )
    return problems


def phrase_problems(case: Case) -> list[Problem]:
    """An excluded phrase inside a required one (both matched case-insensitively, as the scorer
    does) makes the case impossible: every reply that holds the required phrase holds it."""
    problems = []
    required = [(p, p.lower()) for p in case.expected.reply_contains]
    for index, phrase in enumerate(case.expected.reply_excludes):
        low = phrase.lower()
        clash = next((p for p, p_low in required if low and low in p_low), None)
        if clash is not None:
            problems.append(
                Problem(
                    f"expected.reply_excludes[{index}]",
                    f"excluded phrase {phrase!r} is part of the required phrase {clash!r}: "
                    "no reply can hold the required phrase without the excluded one (both match ignoring "
                    "case)",
                    "phrase-contradiction",
                )
            )
    return problems


def replay(
    case: Case,
    domain: Domain | None = None,
    *,
    states: bool = True,
    sandbox: Sandbox | None = None,
) -> ReplayResult:
    """Replay `case`'s expected calls; with `states=False` the final states are not dumped
    (`final_state` and `comparable_state` stay None), for callers that need only the problems.
    `sandbox`: a fresh sandbox of the case's environment without faults to replay in (default:
    one is made)."""
    domain = domain or get_domain(case.domain)
    problems = outcome_problems(case, domain)
    if not domain.has_simulator:
        return ReplayResult(ok=not problems, problems=problems)
    sandbox = sandbox or domain.sandbox(case.environment, faults=False)
    for index, call in enumerate(case.expected.tool_calls):
        result = sandbox.call(call.tool, call.params)
        if not result.ok:
            message = (
                result.content.get("message") if isinstance(result.content, dict) else result.error
            )
            problems.append(
                Problem(
                    f"expected.tool_calls[{index}]",
                    f"replaying {call.tool} failed ({result.error}): {message}",
                    "replay",
                )
            )
    if not states:
        return ReplayResult(ok=not problems, problems=problems)
    return ReplayResult(
        ok=not problems,
        problems=problems,
        final_state=sandbox.final_state(),
        comparable_state=sandbox.comparable_state(),
    )
