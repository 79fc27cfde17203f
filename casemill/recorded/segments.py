"""Which logged agent messages answer which turn of an episode.

A mined case's conversation is the opening of its logged conversation: the system turns and the
first customer turn (a conversation-level case), or everything up to a later point (a decision
point: up to the assistant message that makes a write, so it may end with the reads the agent
made after the customer's last turn). Let k be the case's customer turns. On agent turn t (from
0) the logged agent's part is what follows the (k+t)-th logged customer message, up to the next
one: its assistant messages, whose tool calls are made again and whose last text is the reply.
On turn 0 the messages the case already holds after its last customer turn are skipped.

A turn in which the logged agent said nothing (the customer's farewell left unanswered, a
transfer to a human with no word after it, a turn past the log's end when the simulated customer
goes on) replies with the agent's last words before it in the log, as mining reads a conversation's final reply (`derive.common.final_reply`): the reply the
customer was left with, not a reply withdrawn.

A case with a `user_scenario` and no customer turn of its own (an imported task) counts its
scenario as the first customer turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from casemill.case.model import Case
from casemill.mining.derive.common import CAPPED_MARK, final_reply
from casemill.mining.model import Conversation, LoggedCall, Message


@dataclass(frozen=True)
class Segment:
    """What the logged agent did on one turn: its calls in order and its last text, or when it
    said nothing on this turn its last words before (`said_before`; None when it has said
    nothing at all); `found` is False when the log ends before this turn."""

    calls: tuple[LoggedCall, ...] = ()
    reply: str | None = None
    found: bool = True
    said_before: bool = False


def customer_turns(case: Case) -> int:
    """k: the customer turns the case's conversation holds (its scenario standing for the first
    when it holds none)."""
    k = sum(1 for t in case.conversation if t.role == "customer")
    return max(k, 1) if case.user_scenario else k


def held_after_customer(case: Case) -> int:
    """The non-system turns of the case's conversation after its last customer turn."""
    held = 0
    for turn in case.conversation:
        if turn.role == "customer":
            held = 0
        elif turn.role != "system":
            held += 1
    return held


def segment(conv: Conversation, case: Case, turn: int) -> Segment:
    """The logged agent's part on agent turn `turn` of `case` (see the module docstring)."""
    customers = [i for i, m in enumerate(conv.messages) if m.role == "customer"]
    k = customer_turns(case)
    nth = k + turn  # 1-based: the customer message this turn answers
    if nth < 1 or nth > len(customers):
        if nth == 0 and turn == 0:  # no customer turn at all: the agent opens
            return _segment(conv.messages, 0, customers[0] if customers else None)
        last = final_reply(conv.messages) or None
        return Segment(reply=last, found=False, said_before=last is not None)
    start = customers[nth - 1] + 1
    if turn == 0:
        start += held_after_customer(case)
    end = customers[nth] if nth < len(customers) else None
    return _segment(conv.messages, start, end)


def _segment(messages: list[Message], start: int, end: int | None) -> Segment:
    calls: list[LoggedCall] = []
    reply = None
    for m in messages[start:end]:
        if m.role != "assistant":
            continue
        calls += m.calls
        if m.content.strip():
            reply = m.content
    if reply is None:
        before = final_reply(messages[:start])
        return Segment(tuple(calls), before or None, said_before=bool(before))
    return Segment(tuple(calls), reply)


def opening_differs(conv: Conversation, case: Case) -> str | None:
    """Where the case's customer turns differ from the logged conversation's first ones (a case
    mined with another seed, or without redaction), else None."""
    logged = [m.content for m in conv.messages if m.role == "customer"]
    said = [t.content for t in case.conversation if t.role == "customer"]
    for n, (text, log_text) in enumerate(zip(said, logged, strict=False), 1):
        if not _same(text, log_text):
            return f"customer turn {n}"
    if len(said) > len(logged):
        return f"customer turn {len(logged) + 1} (the log has {len(logged)})"
    return None


def _same(case_text: str, log_text: str) -> bool:
    if case_text == log_text:
        return True
    # a turn longer than a case holds is cut and marked (`derive.common._cap`)
    return case_text.endswith(CAPPED_MARK) and log_text.startswith(case_text[: -len(CAPPED_MARK)])
