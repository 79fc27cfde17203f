"""What one run of an agent on one case left behind: the trajectory.

The runner writes it; scoring reads it. It holds every message (OpenAI chat format; the simulated
customer's turns carry `"simulated": true`), every tool call with its arguments and result, the final customer-facing reply, steps, latency, tokens, the
environment's state after the run (as the domain compares it), and the error if the run failed.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# 2: the final state as what the run changed (`state_changes`); format 1 files, with the whole
# `final_state`, are still read
TRAJECTORY_FORMAT = 2

# the error kinds a trial carries when the agent itself misbehaved in a trial that still ran to
# the end (a call to a tool the domain does not have, arguments that are not a JSON object):
# nothing was executed, the agent was told and could carry on, and the trial is scored as any
# other (see `ended_in_error`)
AGENT_FAULT_KINDS = frozenset({"malformed_tool_call", "unknown_tool"})

# the error kind of a trial whose case the agent has no behaviour for (a recorded agent whose log
# holds no conversation for the case): not run, and neither passed nor failed; scoring counts such
# cases apart (`RunSummary.not_covered`), out of every rate
NOT_COVERED = "not_covered"


class RecordedCall(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    params: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True
    result: Any = None
    error: str | None = None
    call_id: str | None = None


class Trajectory(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    format: int = TRAJECTORY_FORMAT
    case_id: str
    trial: int = 0
    agent: str
    agent_fingerprint: str
    # the agent's own message list; empty for an agent that returns none in a one-turn episode
    # (the case's conversation, `calls` and `final_reply` are all there is: `rebuilt_messages`)
    messages: tuple[dict[str, Any], ...] = ()
    calls: tuple[RecordedCall, ...] = ()
    final_reply: str | None = None
    steps: int = 0  # tool calls made plus the final reply
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # the domain's comparable state after the run, and what changed since its start
    # (`casemill.evaluation.states`); trajectories.jsonl keeps only the changes when it has
    # them (format 2), so a trajectory read back has `final_state` None: `final` rebuilds it
    final_state: dict[str, Any] | None = None
    state_changes: dict[str, Any] | None = None
    hit_step_limit: bool = False
    gave_up: bool = False
    customer_turns: int = 0  # turns the simulated customer added (marked in `messages`)
    hit_turn_limit: bool = False  # the customer-turn maximum ended the episode
    customer_ended: str | None = None  # why the customer ended it, when it did
    error: str | None = None
    error_kind: str | None = (
        None  # exception, timeout, http_429, http_5xx, invalid_json, malformed_tool_call, unknown_tool, ...
    )

    def final(self, initial: dict[str, Any] | None) -> dict[str, Any] | None:
        """The comparable final state, given the case's before the run (`initial`, as scoring's
        context has it): `final_state`, else `initial` with `state_changes` applied."""
        if self.final_state is not None or self.state_changes is None:
            return self.final_state
        if initial is None:
            return None
        from casemill.evaluation.states import apply_delta

        return apply_delta(initial, self.state_changes)

    @property
    def ended_in_error(self) -> bool:
        """The trial did not run to the end (the agent was not reached, timed out, raised...).
        An agent fault noted on a trial that ran on (`AGENT_FAULT_KINDS`) is not such an error:
        the call changed nothing, and the final state, calls and reply are judged as usual."""
        return self.error is not None and self.error_kind not in AGENT_FAULT_KINDS

    @property
    def completed(self) -> bool:
        return (
            not self.ended_in_error
            and bool((self.final_reply or "").strip())
            and not self.hit_step_limit
            and not self.hit_turn_limit
            and not self.gave_up
        )
