"""What scoring needs from a case's meaning, computed once per case id: expected tool sets,
lower-cased phrases, and the expected final state from replaying the expected calls.

A case id is a content hash of the case's meaning, so a context cached under it never goes
stale; tags are not part of the id and are read from the case itself on every call.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

from casemill.case.model import Case, ExpectedCall, ForbiddenCall
from casemill.domains import get_domain, recorded
from casemill.replay import replay

log = logging.getLogger(__name__)

SEMANTIC_LABEL = "semantic-phrases"
MAX_CACHED = 200_000
is_read_tool = recorded.is_read_tool  # for domains that do not declare their tools


@dataclass(frozen=True)
class CaseContext:
    case_id: str
    write_tools: frozenset[str] | None  # None: undeclared, judged by name (`is_read_tool`)
    expected_calls: tuple[ExpectedCall, ...]
    expected_tools: frozenset[str]
    expected_counts: dict[str, int]
    forbidden: tuple[ForbiddenCall, ...]
    phrases: tuple[str, ...]
    phrases_lower: tuple[str, ...]
    excludes: tuple[str, ...]
    excludes_lower: tuple[str, ...]
    optimal_steps: int
    expected_state: dict | None  # None: the domain has no simulator or the replay failed
    replay_note: str | None
    reference_reply: str | None
    # how the final state is checked: "replay" (the final state against the expected calls'
    # replayed state), "calls" (recorded tools: the writes made against the expected calls,
    # a multiset under the matching rules), or None (no check: the replay failed)
    state_check: str | None = None
    # the comparable state before the run, to which a trajectory's `state_changes` apply
    initial_state: dict | None = None
    # recorded tools: the kinds the case declares (read or write), the naming rule for others
    declared_kinds: dict[str, str] | None = None


_CACHE: dict[str, CaseContext] = {}


def clear_cache() -> None:
    _CACHE.clear()


def context_for(case: Case) -> CaseContext:
    """The scoring context of `case`, built on first use and cached by case id."""
    found = _CACHE.get(case.id)
    if found is not None:
        return found
    if len(_CACHE) >= MAX_CACHED:
        _CACHE.clear()
    ctx = _build(case)
    _CACHE[case.id] = ctx
    return ctx


def _build(case: Case) -> CaseContext:
    domain = get_domain(case.domain)
    expected = case.expected
    state, note, check = None, None, None
    if domain.has_simulator:
        result = replay(case, domain)
        if result.ok:
            state, check = result.comparable_state, "replay"
        else:
            first = result.problems[0]
            note = f"state check skipped: the expected calls do not replay ({first.message})"
            log.warning("case %s: %s", case.id, note)
    elif recorded.uses_recorded_tools(domain):
        check = "calls"
        note = (
            f"state check on calls: domain {case.domain!r} {domain.no_replay_reason}; the writes "
            "made are compared with the expected calls (recorded tools)"
        )
    else:
        note = f"state check skipped: domain {case.domain!r} {domain.no_replay_reason}"
    return CaseContext(
        case_id=case.id,
        write_tools=_write_tools(domain, case),
        expected_calls=expected.tool_calls,
        expected_tools=frozenset(c.tool for c in expected.tool_calls),
        expected_counts=dict(Counter(c.tool for c in expected.tool_calls)),
        forbidden=expected.forbidden_calls,
        phrases=expected.reply_contains,
        phrases_lower=tuple(p.lower() for p in expected.reply_contains),
        excludes=expected.reply_excludes,
        excludes_lower=tuple(p.lower() for p in expected.reply_excludes),
        optimal_steps=expected.optimal_steps,
        expected_state=state,
        replay_note=note,
        reference_reply=expected.reference_reply,
        state_check=check,
        initial_state=_initial_state(domain, case),
        declared_kinds=_declared_kinds(domain, case),
    )


def _declared_kinds(domain, case: Case) -> dict[str, str] | None:
    if domain.tool_specs or not recorded.uses_recorded_tools(domain):
        return None
    return {name: info["kind"] for name, info in recorded.declared_tools(case).items()}


def _initial_state(domain, case: Case) -> dict | None:
    """The comparable state of a fresh sandbox of `case`, as the runner's episode starts."""
    try:
        if recorded.uses_recorded_tools(domain):
            return recorded.RecordedSandbox(case).comparable_state()
        return domain.sandbox(case.environment, faults=True).comparable_state()
    except Exception:  # noqa: BLE001 - a case whose sandbox cannot be built has no state to show
        return None


def _write_tools(domain, case: Case) -> frozenset[str] | None:
    return frozenset(domain.write_tools) if domain.tool_specs else None
