"""What one run of an agent on one case left behind: the trajectory.

The runner writes it; scoring reads it. It holds every message (OpenAI chat format), every tool
call with its arguments and result, the final customer-facing reply, steps, latency, tokens, the
environment's state after the run (as the domain compares it), and the error if the run failed.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

TRAJECTORY_FORMAT = 1


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
    messages: tuple[dict[str, Any], ...] = ()
    calls: tuple[RecordedCall, ...] = ()
    final_reply: str | None = None
    steps: int = 0  # tool calls made plus the final reply
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    final_state: dict[str, Any] | None = None  # the domain's comparable state after the run
    hit_step_limit: bool = False
    gave_up: bool = False
    error: str | None = None
    error_kind: str | None = (
        None  # exception, timeout, http_429, http_5xx, invalid_json, malformed_tool_call, unknown_tool, ...
    )

    @property
    def completed(self) -> bool:
        return (
            self.error is None
            and bool((self.final_reply or "").strip())
            and not self.hit_step_limit
            and not self.gave_up
        )
