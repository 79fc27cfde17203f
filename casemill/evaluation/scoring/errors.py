"""The errors of a run's trials, said plainly, and the run that could not be scored at all.

A trial that ended in an error still gets a score (it fails `no_error`), so a run whose agent
was never reached would otherwise look like an agent that failed every case. `unscored(scores)`
tells the two apart: when every trial ended in an error that is not the agent's own doing (an
agent fault, such as a call to an unknown tool, is noted on a trial that ran to the end), nothing
was scored and the run itself failed; the CLI and the evaluate flow then fail with its message.

Cases the agent did not cover (`not_covered`: a recorded agent whose log holds no conversation
for them) are neither errors nor failures: they are said apart (`describe_not_covered`), and a
run that covers no case at all could not be scored either.

Error messages come from the trajectories, where the adapters masked the API key when the error
was raised (`LLMEndpoint.scrub`); they are clipped here, never echoed whole.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from casemill.errors import UserError
from casemill.evaluation.agents.base import AGENT_FAULT_KINDS, TRANSIENT_KINDS
from casemill.evaluation.scoring.model import CaseScore, RunSummary

CLIP = 300  # characters of the first error message shown


class NothingScored(UserError):
    """Every trial of a run ended in an error: the agent was not reached, timed out, ..."""


def error_counts(scores: Sequence[CaseScore]) -> dict[str, int]:
    """Trials with an error noted, by kind (sorted by kind): errors that ended a trial and the
    agent faults noted on trials that ran on (the summary's `error_kinds`)."""
    kinds = Counter(s.error_kind or "error" for s in scores if s.error is not None)
    return dict(sorted(kinds.items()))


def ended_in_error(score: CaseScore) -> bool:
    """The trial did not run to the end; an agent fault (`AGENT_FAULT_KINDS`) noted on a trial
    that ran on is not such an error (that trial is scored as any other)."""
    return score.error is not None and score.error_kind not in AGENT_FAULT_KINDS


def first_error(scores: Sequence[CaseScore]) -> str | None:
    """The first trial's error, in run order, as `case ID trial N: MESSAGE` (clipped)."""
    for s in scores:
        if s.error is not None:
            message = " ".join(s.error.split())
            if len(message) > CLIP:
                message = message[: CLIP - 3] + "..."
            return f"case {s.case_id} trial {s.trial}: {message}"
    return None


def counted(counts: dict[str, int], trials: int) -> str:
    """`N of M trials ended in an error (kind count, ...)`, from the errors by kind."""
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(counts.items()))
    return f"{sum(counts.values())} of {trials} trials ended in an error ({kinds})"


def split_kinds(counts: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """Error counts by kind split into (errors that ended trials, agent faults)."""
    errors = {k: n for k, n in counts.items() if k not in AGENT_FAULT_KINDS}
    faults = {k: n for k, n in counts.items() if k in AGENT_FAULT_KINDS}
    return errors, faults


def counted_faults(counts: dict[str, int], trials: int) -> str:
    """`N of M trials had an agent fault (kind count, ...), scored as usual`."""
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(counts.items()))
    return (
        f"{sum(counts.values())} of {trials} trials had an agent fault ({kinds}), scored as usual"
    )


def describe_errors(scores: Sequence[CaseScore]) -> str | None:
    """`N of M trials ended in an error (kind count, ...); first: ...`, or None when no trial
    ended in an error (agent faults are `describe_faults`; cases not covered,
    `describe_not_covered`)."""
    scores = [s for s in scores if s.covered]
    ended = [s for s in scores if ended_in_error(s)]
    if not ended:
        return None
    return f"{counted(error_counts(ended), len(scores))}; first: {first_error(ended)}"


def describe_not_covered(scores: Sequence[CaseScore]) -> str | None:
    """`N of M cases not covered by the agent (not scored); first: ...`, or None when the
    agent covered every case."""
    missing = {s.case_id for s in scores if not s.covered}
    if not missing:
        return None
    cases = len({s.case_id for s in scores})
    first = first_error([s for s in scores if not s.covered])
    return f"{len(missing)} of {cases} cases not covered by the agent (not scored); first: {first}"


def describe_faults(scores: Sequence[CaseScore]) -> str | None:
    """`N of M trials had an agent fault (kind count, ...), scored as usual; first: ...`, or
    None without agent faults."""
    faults = [s for s in scores if s.error is not None and not ended_in_error(s)]
    if not faults:
        return None
    return f"{counted_faults(error_counts(faults), len(scores))}; first: {first_error(faults)}"


def unscored(scores: Sequence[CaseScore]) -> str | None:
    """Why no trial could be scored, or None when at least one could (or there are none)."""
    if scores and not any(s.covered for s in scores):
        return f"no trial could be scored: {describe_not_covered(scores)}"
    if not scores or not all(ended_in_error(s) for s in scores if s.covered):
        return None
    return f"no trial could be scored: {describe_errors(scores)}"


def not_covered_line(summary: RunSummary, most: int = 5) -> str:
    """`N cases, out of every figure (the agent has no behaviour for them): ID, ID ...`."""
    ids = summary.not_covered
    shown = ", ".join(ids[:most]) + (" ..." if len(ids) > most else "")
    cases = "case" if len(ids) == 1 else "cases"
    return f"{len(ids)} {cases}, out of every figure (the agent has no behaviour for them): {shown}"


def unmeasured(summary: RunSummary) -> str | None:
    """For the reports: a warning when every trial of `summary` ended in an error that is not
    the agent's own doing, so its figures (task success 0.000, ...) measure nothing about the
    agent; None otherwise."""
    kinds, _ = split_kinds(summary.error_kinds)
    if not summary.results or sum(kinds.values()) < summary.results:
        return None
    return (
        f"no trial could be scored: {counted(kinds, summary.results)}; "
        "the figures below measure nothing about the agent"
    )


def what_to_check(scores: Sequence[CaseScore]) -> str:
    """The first words of the hint when nothing was scored: "reachable" only when every error
    is a transport one (an agent that raised or answered in another shape was reached, and it
    is the agent that needs looking at)."""
    if set(error_counts(scores)) <= TRANSIENT_KINDS:
        return "Check that the agent is reachable"
    return "Check the agent's errors"


def check_scored(scores: Sequence[CaseScore], hint: str) -> None:
    """`NothingScored` (its message ending with `hint`, what to do) when no trial was scored."""
    reason = unscored(scores)
    if reason is not None:
        raise NothingScored(f"{reason.rstrip('.')}. {hint}")
