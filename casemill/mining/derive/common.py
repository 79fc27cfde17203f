"""What both domains' case derivation shares: read vs write, write bursts, turns, the outcome
seen at the end of a conversation, the customer's scenario in their own words."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from casemill.case.model import MAX_TEXT, STOP
from casemill.domains.recorded import is_read_tool
from casemill.mining.model import Conversation, LoggedCall, Message

ESCALATION = re.compile(r"(transfer|escalat)\w*_?(to_)?human|escalate", re.IGNORECASE)
REFUSAL = re.compile(r"\b(cannot|can't|can not|unable|not able|not possible|unfortunately)\b", re.I)
CLARIFY = re.compile(r"\bwhich (order|item|one|reservation)\b", re.IGNORECASE)
SCENARIO_CHARS = 600
CAPPED_MARK = " [...]"


def is_read(tool: str) -> bool:
    """The shared rule: names starting with get_/find_/list_/search_/calculate/think only read."""
    return is_read_tool(tool)


def is_escalation(tool: str) -> bool:
    return bool(ESCALATION.search(tool))


@dataclass
class Burst:
    """The writes an agent makes from its first write after a customer turn until the customer
    speaks again; `start` indexes the assistant message holding the first one."""

    start: int
    attempts: list[LoggedCall] = field(default_factory=list)

    @property
    def writes(self) -> list[LoggedCall]:
        return [c for c in self.attempts if not c.error]


def bursts(conversation: Conversation) -> list[Burst]:
    out: list[Burst] = []
    current: Burst | None = None
    for index, m in enumerate(conversation.messages):
        if m.role == "customer":
            current = None
            continue
        for call in m.calls:
            if is_read(call.tool):
                continue
            if current is None:
                current = Burst(index)
                out.append(current)
            current.attempts.append(call)
    return out


def successful_writes(conversation: Conversation) -> list[LoggedCall]:
    return [c for c in conversation.calls() if not is_read(c.tool) and not c.error]


def _cap(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - len(CAPPED_MARK)] + CAPPED_MARK


def turn_data(m: Message) -> dict[str, Any]:
    """A message as a `Turn` in its JSON shape."""
    return {
        "role": m.role,
        "content": _cap(m.content),
        "tool_calls": [{"tool": c.tool, "params": c.arguments, "id": c.id} for c in m.calls],
        "tool_call_id": m.call_id,
    }


def opening(messages: list[Message]) -> list[Message]:
    """The system turns and the first customer turn: how a conversation-level case opens."""
    out = []
    for m in messages:
        if m.role == "system":
            out.append(m)
        elif m.role == "customer":
            out.append(m)
            break
    return out


def user_scenario(messages: list[Message]) -> str:
    """What the customer wanted, from their first turns, in their words."""
    said: list[str] = []
    size = 0
    for m in messages:
        if m.role != "customer" or not m.content.strip():
            continue
        text = " ".join(m.content.replace(STOP, "").split())
        if not text:
            continue
        said.append(text)
        size += len(text)
        if size >= SCENARIO_CHARS:
            break
    joined = " / ".join(said)
    if len(joined) > SCENARIO_CHARS:
        joined = joined[:SCENARIO_CHARS].rsplit(" ", 1)[0] + " ..."
    return f"The customer, in their own words: {joined}" if joined else ""


def final_reply(messages: list[Message]) -> str:
    for m in reversed(messages):
        if m.role == "assistant" and m.content.strip():
            return m.content
    return ""


def outcome_of(writes: list[LoggedCall], messages: list[Message]) -> tuple[str, str | None]:
    """(outcome, note) from the writes made and, without writes, the agent's last reply."""
    if any(is_escalation(c.tool) for c in writes):
        return "escalate", None
    if writes:
        return "resolve", None
    reply = final_reply(messages)
    if CLARIFY.search(reply):
        return "clarify", "outcome inferred from the final reply"
    if REFUSAL.search(reply):
        return "refuse", "outcome inferred from the final reply"
    return "resolve", "no write action; outcome inferred from the final reply"
