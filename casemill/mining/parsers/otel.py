"""OpenTelemetry span exports following the GenAI semantic conventions.

Input: OTLP JSON, one export request a line (`{"resourceSpans": [{"resource": ...,
"scopeSpans": [{"spans": [...]}]}]}`, what the collector's file exporter writes), or one such
document for the whole file. Attributes are OTLP key/value lists. Lines of log records
(`{"resourceLogs": ...}`) among them give the messages of the GenAI events that instrumentations
send as logs (`casemill.mining.parsers.otel_logs`).

Spans are grouped by `traceId` (a GenAI span without one is quarantined; a trace with a
malformed span, or with spans on a line that cannot be read, is quarantined whole: it would be
mined without them) and ordered by start time. A trace becomes one conversation: the longest
history of the agent the customer talks to, with the results (and calls, an agent's called as
a tool among them) only its tool-execution spans show (`casemill.mining.parsers.otel_history`); messages in OpenLLMetry's,
OpenInference's or span events' forms are read as the current conventions' attributes
(`casemill.mining.parsers.otel_forms`).

The conversation id is `gen_ai.conversation.id` when a span has it (else the trace id); the
resolution flag is a boolean attribute `casemill.resolved` or `conversation.resolved`. An
application that traces each turn apart (a request a turn) writes one conversation as several
traces sharing that id, each chat span repeating the history: their conversations are joined
into the longest, when each one's customer turns begin the longest's (else the id names several
conversations, mined apart), and tool results only the others show are filled in
(`casemill.mining.parsers.otel_turns`). A conversation is held until no trace of its id has ended for
`window` lines; a part that comes after that is mined as a low-confidence part.

The documents are read by `casemill.mining.parsers.otel_documents`, their spans gathered into
traces and a trace made a conversation by `casemill.mining.parsers.otel_traces`. Traces are
finished when no span of theirs has been seen for `window` lines, or when the input
ends: the file, or the last file of a run (the files of one run share a `Carry`, so a trace a
rotated file split in two is mined whole), so memory holds only the traces still open. A trace
finished by the window may be only a part when its root span (one without `parentSpanId`: spans
are exported as they end, a parent after its children) was not seen, or when a logged call has
no result; such a trace, and one whose id comes back after it was finished (the last
`FLUSHED_KEPT` such ids are remembered), has its resolution taken as unknown, so its cases are
low-confidence ones to label. A trace whose model-call spans hold no messages (content
capture was off) is quarantined as `missing_messages`, saying so.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from casemill.mining.model import Conversation, Quarantined
from casemill.mining.parsers import otel_logs
from casemill.mining.parsers.otel_documents import Unread, documents, unread
from casemill.mining.parsers.otel_logs import LogEvent
from casemill.mining.parsers.otel_traces import (
    At,
    Trace,
    collect,
    conversation_of,
    trace_of,
    untraced_record,
)
from casemill.mining.parsers.otel_turns import join_turns
from casemill.mining.reading import Progress

WINDOW = 2000
CANDIDATES = 16  # conversations held a conversation id (one it names several times)
FLUSHED_KEPT = 100_000  # trace ids remembered after a window flush, to spot one that continues
SPREAD = "the trace's spans were more than {window} lines apart: it was mined before it ended"
LOST_TURN = "another trace of the conversation was quarantined ({reason}, line {line})"
LATER_PART = (
    "the conversation (gen_ai.conversation.id) went on in a trace that ended after an earlier "
    "part of it was mined"
)


@dataclass
class Carry:
    """What the files of one run share: the traces still open at the end of a file (a collector
    that rotates its file splits a trace between two), the ids the window flushed, the spans
    lost, and the lines read so far. `finish` ends the open traces after the last file."""

    open: OrderedDict[str, Trace] = field(default_factory=OrderedDict)  # by their last span
    flushed: OrderedDict[str, None] = field(default_factory=OrderedDict)  # last FLUSHED_KEPT
    lost: dict[str, tuple[str, str | None, str]] = field(default_factory=dict)  # id -> where
    read: int = 0  # lines of the run's files before the one being read
    line: int = 0  # the last line read of that one
    # conversations of traces that named their gen_ai.conversation.id, held to join the traces
    # of its later turns: id -> (the conversation so far, where its last trace ended)
    # (an id may name several conversations, each joined apart: the last `CANDIDATES` held)
    joining: OrderedDict[str, tuple[list[Conversation], int]] = field(default_factory=OrderedDict)
    released: OrderedDict[str, None] = field(default_factory=OrderedDict)  # last FLUSHED_KEPT
    spoiled: OrderedDict[str, str] = field(default_factory=OrderedDict)  # id -> a turn lost

    def finish(self, max_turns: int) -> Iterator[Conversation | Quarantined]:
        traces = sorted(self.open.values(), key=lambda t: t.first)
        self.open.clear()
        for trace in traces:
            yield from _ended(self, trace, max_turns, self.read + self.line)
        yield from self.release(None)

    def release(self, before: int | None) -> Iterator[Conversation]:
        """The held conversations whose last trace ended before `before` (all with None)."""
        while self.joining:  # (in the order their last traces ended)
            key, (convs, pos) = next(iter(self.joining.items()))
            if before is not None and pos >= before:
                break
            del self.joining[key]
            self.released[key] = None
            if len(self.released) > FLUSHED_KEPT:
                self.released.popitem(last=False)
            yield from convs


def parse(
    path: Path,
    *,
    max_turns: int,
    progress: Progress | None = None,
    window: int = WINDOW,
    carry: Carry | None = None,
    **_: Any,
) -> Iterator[Conversation | Quarantined]:
    """The file's traces, each ended by the window or at the end of the file. With `carry`
    (one for all the files of a run, as `casemill.mining.pipeline` passes it), the traces still open at
    the end of the file stay open for the next file, and `carry.finish` ends them."""
    state = carry if carry is not None else Carry()
    try:
        yield from _parse(str(path), path, state, max_turns, progress, window)
    finally:  # the next file's lines are counted after this one's, however it ended
        state.read, state.line = state.read + state.line, 0
    if carry is None:
        yield from state.finish(max_turns)


def _parse(
    file: str,
    path: Path,
    state: Carry,
    max_turns: int,
    progress: Progress | None,
    window: int,
) -> Iterator[Conversation | Quarantined]:
    """The file's documents read into the open traces of `state`, and the traces the window
    ends mined, line by line."""
    for item in documents(path, progress):
        if isinstance(item, Unread):
            yield _lost(state, item)
            continue
        number, doc = item
        state.line = number
        at = At(file, number, state.read + number)
        record, read = _document(doc, at, state)
        if record is not None:
            yield record
        if read:
            yield from _stale(state, at.pos, window, max_turns)


def _lost(state: Carry, item: Unread) -> Quarantined:
    """A line that could not be read: the traces it names lost spans there."""
    record = item.record
    state.line = max(state.line, record.line)
    for trace_id in item.trace_ids:
        state.lost.setdefault(trace_id, (f"line {record.line}", None, record.reason))
    return record


def _document(doc: Any, at: At, state: Carry) -> tuple[Quarantined | None, bool]:
    """One document's spans or GenAI log records added to their traces: the record of what
    could not be read of it (if any), and whether it was read (a document that is no OTLP
    export, or holds malformed span data, is not)."""
    logs = isinstance(doc, dict) and isinstance(doc.get("resourceLogs"), list)
    if not logs and (not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list)):
        return Quarantined(
            file=at.file,
            line=at.line,
            reason="bad_span",
            message="expected an OTLP JSON export with 'resourceSpans' or 'resourceLogs'",
        ), False
    try:
        if logs:
            untraced = otel_logs.collect(doc, _keeper(at, state))
        else:
            untraced = collect(doc, at, state.open, state.flushed)
    except (TypeError, ValueError, AttributeError) as exc:
        record = Quarantined(
            file=at.file,
            line=at.line,
            reason="bad_span",
            message=f"malformed span data ({type(exc).__name__})",
        )
        for trace_id in unread(record, orjson.dumps(doc)).trace_ids:
            state.lost.setdefault(trace_id, (f"line {at.line}", None, "bad_span"))
        return record, False
    return (untraced_record(at.file, at.line, untraced) if untraced else None), True


def _stale(
    state: Carry, pos: int, window: int, max_turns: int
) -> Iterator[Conversation | Quarantined]:
    """The open traces none of whose spans came in the `window` lines before `pos`, ended (in
    the order their last spans came: the stale ones first), then the held conversations whose
    last trace ended before those lines."""
    open_traces, flushed = state.open, state.flushed
    while open_traces:
        trace = next(iter(open_traces.values()))
        if pos - trace.last_line <= window:
            break
        del open_traces[trace.trace_id]
        trace.cut = SPREAD.format(window=window)
        flushed[trace.trace_id] = None
        if len(flushed) > FLUSHED_KEPT:
            flushed.popitem(last=False)
        yield from _ended(state, trace, max_turns, pos)
    if state.joining:
        yield from state.release(pos - window)


def _keeper(at: At, state: Carry) -> otel_logs.Keep:
    """What keeps a GenAI event record of the line at `at` with its trace."""

    def keep(trace_id: str, span_id: str, event: LogEvent) -> None:
        trace = trace_of(state.open, trace_id, at, {}, state.flushed)
        if trace.records >= otel_logs.MAX_RECORDS:
            trace.dropped += 1
            return
        trace.records += 1
        trace.logs.setdefault(span_id, []).append(event)

    return keep


def _ended(
    state: Carry, trace: Trace, max_turns: int, pos: int
) -> Iterator[Conversation | Quarantined]:
    """A trace that ended at `pos`, mined; one that named its conversation is held (`Carry
    .joining`) until its conversation's traces have all ended, joined with the others."""
    item = conversation_of(trace, max_turns, state.lost)
    if isinstance(item, Quarantined):
        if item.conversation_id not in (None, trace.trace_id):  # a turn of it is lost
            _spoil(state, item.conversation_id, item)
        yield item
        return
    if item.id == trace.trace_id:
        yield item
        return
    if item.id in state.released and item.partial is None:
        item.resolved, item.partial = None, LATER_PART
    lost_turn = state.spoiled.get(item.id)
    if lost_turn is not None and item.partial is None:
        item.resolved, item.partial = None, lost_turn
    convs = state.joining.pop(item.id, ([], 0))[0]
    for n, conv in enumerate(convs):
        joined = join_turns(conv, item)
        if joined is not None:
            convs[n] = joined
            break
    else:  # a conversation of its own (an id that names several, as a session may)
        convs.append(item)
        if len(convs) > CANDIDATES:
            yield convs.pop(0)
    state.joining[item.id] = (convs, pos)


def _spoil(state: Carry, conversation_id: str, record: Quarantined) -> None:
    """A trace of the conversation was quarantined: what is mined of it is only a part."""
    why = LOST_TURN.format(reason=record.reason, line=record.line)
    state.spoiled[conversation_id] = why
    if len(state.spoiled) > FLUSHED_KEPT:
        state.spoiled.popitem(last=False)
    for conv in state.joining.get(conversation_id, ([], 0))[0]:
        if conv.partial is None:
            conv.resolved, conv.partial = None, why
