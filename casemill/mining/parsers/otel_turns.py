"""One conversation from the traces of its turns (`casemill.mining.parsers.otel`): an application that
traces each turn apart writes a conversation as several traces sharing its id, each chat span
repeating the history. Their conversations are one when each one's customer turns begin the
longest's: the longest, starting where the first starts, with the tool results only the others
show.
"""

from __future__ import annotations

from casemill.mining.model import Conversation, LoggedCall, Message


def _with_results(messages: list[Message], results: dict[str, LoggedCall]) -> list[Message]:
    """The messages with the results `results` knows of their calls that have none, each a tool
    message after its call's message (and the results already there)."""
    out: list[Message] = []
    waiting: list[Message] = []
    for m in messages:
        if waiting and m.role != "tool":
            out += waiting
            waiting = []
        out.append(m)
        for call in m.calls:
            known = results.get(call.id)
            if call.result is None and known is not None and known.tool == call.tool:
                call.result, call.error = known.result, known.error
                waiting.append(Message("tool", known.result or "", call_id=call.id))
    return out + waiting


def _customer_turns(conv: Conversation) -> list[str]:
    return [m.content for m in conv.messages if m.role == "customer"]


def join_turns(first: Conversation, then: Conversation) -> Conversation | None:
    """Two traces' conversations of one id as one: the longer, when the other's customer turns
    begin its own, starting where the first starts, with the tool results only the other shows;
    None when they are not one conversation."""
    a, b = _customer_turns(first), _customer_turns(then)
    if b[: len(a)] == a and (len(b), len(then.messages)) >= (len(a), len(first.messages)):
        longer, shorter = then, first
    elif a[: len(b)] == b:
        longer, shorter = first, then
    else:
        return None
    results = {c.id: c for m in shorter.messages for c in m.calls if c.result is not None}
    if any(c.result is None and c.id in results for m in longer.messages for c in m.calls):
        longer.messages = _with_results(longer.messages, results)
    longer.file, longer.line = first.file, first.line
    if longer.resolved is None:
        longer.resolved = shorter.resolved
    longer.partial = longer.partial or shorter.partial
    if longer.partial is not None:  # only parts of it seen: whether it was resolved is not known
        longer.resolved = None
    longer.tools = longer.tools or shorter.tools
    return longer
