"""What an agent under test receives and returns, whatever its transport.

An `Episode` is one run of one agent on one case: the conversation so far in OpenAI chat format,
the tool specifications in OpenAI function format, and `call(tool, params)`, which executes a
tool against the sandboxed copy of the case's environment and records the call. An agent answers
with an `AgentReply` (its final customer-facing text, optionally its own message list and token
usage) or raises `AgentError` with a kind (`http_429`, `invalid_json`, ...) that the runner
records in the trajectory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from casemill.case.model import Case
from casemill.domains.base import Sandbox, ToolResult
from casemill.evaluation.trajectory import AGENT_FAULT_KINDS as AGENT_FAULT_KINDS  # re-exported
from casemill.evaluation.trajectory import RecordedCall

T = TypeVar("T")

# error kinds a trajectory can carry; the transient ones are retried
TRANSIENT_KINDS = frozenset({"timeout", "http_429", "http_5xx", "connection", "user_simulator"})


class AgentError(Exception):
    """The agent could not produce a reply; `kind` lands in the trajectory's `error_kind`."""

    def __init__(self, kind: str, message: str, *, retry_after_s: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.retry_after_s = retry_after_s

    @property
    def transient(self) -> bool:
        return self.kind in TRANSIENT_KINDS


class StepLimitReached(Exception):  # noqa: N818  (a signal, not a failure of Casemill)
    """Raised by `Episode.call` when the agent has used up its steps."""


class EpisodeClosed(Exception):  # noqa: N818
    """Raised by `Episode.call` after the runner gave up on the episode (time limit)."""


@dataclass(frozen=True)
class AgentReply:
    """What an agent returns: the final reply to the customer and, optionally, the message list
    it built (OpenAI chat format) and its token usage."""

    text: str | None
    messages: list[dict[str, Any]] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    gave_up: bool = False
    hit_step_limit: bool = False


@dataclass(frozen=True)
class AgentInfo:
    """One built-in agent, as `casemill agents list` shows it."""

    spec: str
    description: str
    bug: str | None = None


@dataclass
class Episode:
    """One agent x case x trial. `call` is thread-safe enough for one agent (one sandbox each)."""

    case_id: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    sandbox: Sandbox
    max_steps: int = 20
    calls: list[RecordedCall] = field(default_factory=list)
    agent_faults: list[tuple[str, str]] = field(default_factory=list)  # (kind, message)
    deadline: float | None = None  # `time.monotonic()` at which the runner's time limit ends
    # the agent's turn, from 0: `run` is called once a turn, the customer speaking in between;
    # the step limit counts the calls of the current turn, from call `turn_start` on
    turn: int = 0
    turn_start: int = 0
    case: Case | None = None  # the case being run (a recorded agent finds its log by it)
    initial_state: dict[str, Any] | None = None  # the sandbox's comparable state at the start
    _closed: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _ids: int = 0

    @property
    def tool_names(self) -> frozenset[str]:
        return frozenset(t["function"]["name"] for t in self.tools)

    @property
    def max_tool_calls(self) -> int:
        return max(0, self.max_steps - 1)

    def outlasts(self, wait_s: float) -> bool:
        """Whether waiting `wait_s` seconds (an adapter's back-off before a retry) would take the
        episode past its time limit. An adapter then raises the error it is retrying instead:
        cut off in the middle of the wait, the case would be recorded as a time-out, and a
        refused connection is not one."""
        return self.deadline is not None and time.monotonic() + wait_s >= self.deadline

    def close(self) -> None:
        """No more tool calls (waits for one in flight, so the state read after is stable)."""
        with self._lock:
            self._closed = True

    def call(
        self, tool: str, params: dict[str, Any] | None = None, call_id: str | None = None
    ) -> ToolResult:
        """Execute `tool` on the sandbox and record it. Unknown tools, a missing tool name and
        bad parameters come back as a failed `ToolResult` (and are noted as agent faults)."""
        with self._lock:
            if self._closed:
                raise EpisodeClosed(f"episode {self.case_id} was closed (time limit)")
            if len(self.calls) - self.turn_start >= self.max_tool_calls:
                raise StepLimitReached(f"more than {self.max_tool_calls} tool calls in a turn")
            self._ids += 1
            call_id = call_id or f"call_{self._ids}"
            if not isinstance(tool, str) or not tool.strip():
                # a call without a tool name (a model's `function: null`, a list entry that is
                # not an object) names nothing to execute: the agent's fault, like bad arguments
                return self._record_fault(
                    "",
                    {},
                    call_id,
                    "malformed_tool_call",
                    "a tool call without a tool name",
                )
            if not isinstance(params, dict):
                return self._record_fault(
                    tool,
                    {},
                    call_id,
                    "malformed_tool_call",
                    f"parameters of {tool} are not a JSON object",
                )
            result = self.sandbox.call(tool, params, call_id=call_id)
            if result.error == "unknown_tool":
                self.agent_faults.append(("unknown_tool", f"agent called unknown tool {tool!r}"))
            self.calls.append(_recorded(tool, params, result, call_id))
            return result

    def record_malformed(
        self, tool: str, raw_arguments: str, call_id: str | None = None
    ) -> ToolResult:
        """Record a tool call whose arguments could not be parsed (nothing is executed)."""
        with self._lock:
            if len(self.calls) - self.turn_start >= self.max_tool_calls:
                raise StepLimitReached(f"more than {self.max_tool_calls} tool calls in a turn")
            self._ids += 1
            message = f"arguments of {tool} are not a JSON object: {raw_arguments[:200]!r}"
            return self._record_fault(
                tool, {}, call_id or f"call_{self._ids}", "malformed_tool_call", message
            )

    def _record_fault(
        self, tool: str, params: dict, call_id: str, kind: str, message: str
    ) -> ToolResult:
        result = ToolResult.fail(kind, message)
        self.agent_faults.append((kind, message))
        self.calls.append(_recorded(tool, params, result, call_id))
        return result

    async def in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking `fn(*args)` in a fresh daemon thread (a hung agent cannot starve a pool;
        the runner's time limit abandons it and closes the episode)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def settle(ok: bool, value: Any) -> None:
            if future.done():
                return
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

        def target() -> None:
            try:
                value = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
                _post(loop, settle, False, exc)
            else:
                _post(loop, settle, True, value)

        threading.Thread(target=target, name=f"agent-{self.case_id}", daemon=True).start()
        return await future


def _post(loop: asyncio.AbstractEventLoop, fn: Callable[..., None], *args: Any) -> None:
    # RuntimeError: the loop is gone (run interrupted), nobody waits for this result
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(fn, *args)


def _recorded(tool: str, params: dict, result: ToolResult, call_id: str) -> RecordedCall:
    return RecordedCall(
        tool=tool,
        params=params,
        ok=result.ok,
        result=result.content,
        error=result.error,
        call_id=call_id,
    )


@runtime_checkable
class Agent(Protocol):
    """One protocol, several transports (Python callable, HTTP, OpenAI-compatible, reference).

    `fingerprint` is a stable hash of the agent's spec and version/configuration: the runner's
    resumability key, so results of a changed agent are never mixed with old ones."""

    name: str
    fingerprint: str

    async def run(self, episode: Episode) -> AgentReply: ...


def tool_result_text(result: ToolResult) -> str:
    """A tool result as the text a model sees in a `tool` message."""
    return result.as_text()


def parse_arguments(raw: Any) -> dict[str, Any] | None:
    """Tool-call arguments as a dict, or None when they are not a JSON object."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
