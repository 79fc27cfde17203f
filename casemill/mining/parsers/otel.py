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

Traces are finished when no span of theirs has been seen for `window` lines, or when the input
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

import logging
import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from casemill.mining.model import Conversation, Quarantined, RecordProblem
from casemill.mining.parsers import otel_logs
from casemill.mining.parsers.messages import as_resolved, build_conversation
from casemill.mining.parsers.otel_forms import fill_messages
from casemill.mining.parsers.otel_history import (
    MODEL_OPS,
    history,
    merge_tool_spans,
    nested_in_tools,
    span_field,
)
from casemill.mining.parsers.otel_logs import LogEvent
from casemill.mining.parsers.otel_turns import join_turns
from casemill.mining.parsers.otel_values import attributes
from casemill.mining.reading import (
    MAX_LINE_BYTES,
    Progress,
    RawLine,
    iter_lines,
    json_problem,
    too_long,
)

# a span with an attribute of these is a GenAI span (OpenInference's spans have no gen_ai.*)
GENAI_PREFIXES = ("gen_ai.", "casemill.", "conversation.", "openinference.", "llm.")
RESOLVED_KEYS = ("casemill.resolved", "conversation.resolved", "session.resolved")
WINDOW = 2000
MAX_SPANS = 5000
CANDIDATES = 16  # conversations held a conversation id (one it names several times)
FLUSHED_KEPT = 100_000  # trace ids remembered after a window flush, to spot one that continues
SPREAD = "the trace's spans were more than {window} lines apart: it was mined before it ended"
CONTINUED = "the trace continued after an earlier part of it was mined"
LOST_TURN = "another trace of the conversation was quarantined ({reason}, line {line})"
LATER_PART = (
    "the conversation (gen_ai.conversation.id) went on in a trace that ended after an earlier "
    "part of it was mined"
)

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Span:
    start: int
    attrs: dict[str, Any]
    error: str | None
    sid: str = ""  # its spanId: the log records of its GenAI events name it
    parent: str = ""  # its parentSpanId


@dataclass
class Trace:
    trace_id: str
    line: int  # where it starts in its file
    last_line: int  # where its last span was seen, counting the lines of the run's earlier files
    spans: list[Span] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)
    dropped: int = 0
    best: Span | None = None  # the model call with the longest history so far
    last: Span | None = None  # the model call that started last (of an agent run as a tool,
    # the longest history may be the inner agent's: the outer's is its last call's)
    broken: tuple[str, str | None, str] | None = None  # (line, field, why) of a malformed span
    partial: str | None = None  # why this may be only a part of the trace (SPREAD, CONTINUED)
    closed: bool = False  # its root span (no parentSpanId) was seen: spans end before their parent
    cut: str | None = None  # ended by the window: SPREAD, if it shows it may not be whole
    file: str = ""  # the file it starts in
    first: int = 0  # where it starts, counting the lines of the run's earlier files
    logs: dict[str, list[LogEvent]] = field(default_factory=dict)  # span id -> its GenAI events
    links: dict[str, str] = field(default_factory=dict)  # span -> parent, of its other spans
    records: int = 0  # log records kept

    def add(self, span: Span) -> None:
        """Keep the span; of model calls, only the longest history and the last call's keep
        their messages (each call repeats the history before it, so memory stays linear in
        the conversation)."""
        self.spans.append(span)
        if span.attrs.get("gen_ai.operation.name") not in MODEL_OPS:
            return
        before = (self.best, self.last)
        if self.best is None or _history_size(span) >= _history_size(self.best):
            self.best = span
        if self.last is None or span.start >= self.last.start:
            self.last = span
        for kept in {id(s): s for s in (*before, span) if s is not None}.values():
            if kept is not self.best and kept is not self.last:
                _strip(kept)


MESSAGE_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages")


def _history_size(span: Span) -> int:
    return sum(len(str(span.attrs.get(k) or "")) for k in MESSAGE_KEYS)


def _strip(span: Span) -> None:
    span.attrs = {k: v for k, v in span.attrs.items() if k not in MESSAGE_KEYS}


@dataclass(frozen=True, slots=True)
class Unread:
    """A line that could not be read, and the trace ids its bytes name: those traces lost spans
    there, and are quarantined rather than mined without them."""

    record: Quarantined
    trace_ids: frozenset[str]


TRACE_ID = re.compile(rb'"traceId"\s*:\s*"([^"\\]{1,64})"')


def _unread(record: Quarantined, data: bytes) -> Unread:
    ids = frozenset(m.group(1).decode("utf-8", "replace") for m in TRACE_ID.finditer(data))
    return Unread(record, ids)


def _documents(path: Path, progress: Progress | None) -> Iterator[tuple[int, Any] | Unread]:
    """Each line's document (or what could not be read of it). A first line that is a JSON
    object cut short may open one pretty-printed document, unless the next line is a document
    of its own (then the first line was only truncated, and the file is read line by line). A
    pretty-printed document is read whole at the end, up to the size limit: past it, the file
    is one record skipped."""
    file = str(path)
    held: list[RawLine] = []  # the lines of a pretty-printed document
    size, skipped = 0, False
    for raw in iter_lines(path, progress):
        if skipped:
            continue
        if held:
            if len(held) == 1 and raw.data.strip() and _alone(raw.data):
                yield from _each_line(file, [*held, raw])  # JSON lines after all
                held = []
                continue
            held.append(raw)
            size += len(raw.data)
            if size > MAX_LINE_BYTES or raw.too_long:
                yield _unread(_too_big(file), held[0].data)
                held, skipped = [], True
            continue
        if raw.number == 1 and not raw.too_long and _opens_document(raw.data):
            held, size = [raw], len(raw.data)
            continue
        yield from _each_line(file, [raw])
    if held:
        yield _whole(file, held)


def _too_big(file: str) -> Quarantined:
    return Quarantined(
        file=file,
        line=1,
        reason="line_too_long",
        message="the file is one pretty-printed JSON document over the 16 MiB limit; skipped: "
        "export a JSON document a line",
    )


def _alone(data: bytes) -> bool:
    """Whether a line is a JSON object by itself."""
    try:
        return isinstance(orjson.loads(data), dict)
    except orjson.JSONDecodeError:
        return False


def _opens_document(data: bytes) -> bool:
    """Whether a first line is a JSON object cut short (the start of a pretty-printed one)."""
    if not data.lstrip().startswith(b"{"):
        return False
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return json_problem(data, exc)[0] == "truncated"
    return False


def _whole(file: str, lines: list[RawLine]) -> tuple[int, Any] | Unread:
    """The lines as one pretty-printed document, or one record of why they are not."""
    data = b"\n".join(raw.data for raw in lines)
    try:
        return 1, orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        reason, message = json_problem(data, exc)
        return _unread(Quarantined(file=file, line=1, reason=reason, message=message), data)


def _each_line(file: str, lines: list[RawLine]) -> Iterator[tuple[int, Any] | Unread]:
    for raw in lines:
        if raw.too_long:  # its first bytes only: the ids they name
            yield _unread(too_long(file, raw.number), raw.data)
            continue
        if not raw.data.strip():
            continue
        try:
            yield raw.number, orjson.loads(raw.data)
        except orjson.JSONDecodeError as exc:
            reason, message = json_problem(raw.data, exc)
            bad = Quarantined(file=file, line=raw.number, reason=reason, message=message)
            yield _unread(bad, raw.data)


class _At(NamedTuple):
    file: str
    line: int  # in the file
    pos: int  # in the run: the lines of its earlier files counted


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
    open_traces, flushed, lost = state.open, state.flushed, state.lost
    for item in _documents(path, progress):
        if isinstance(item, Unread):
            record = item.record
            state.line = max(state.line, record.line)
            for trace_id in item.trace_ids:
                lost.setdefault(trace_id, (f"line {record.line}", None, record.reason))
            yield record
            continue
        number, doc = item
        state.line = number
        at = _At(file, number, state.read + number)
        logs = isinstance(doc, dict) and isinstance(doc.get("resourceLogs"), list)
        if not logs and (
            not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list)
        ):
            yield Quarantined(
                file=file,
                line=number,
                reason="bad_span",
                message="expected an OTLP JSON export with 'resourceSpans' or 'resourceLogs'",
            )
            continue
        try:
            if logs:
                untraced = otel_logs.collect(doc, _keeper(at, state))
            else:
                untraced = _collect(doc, at, open_traces, flushed)
        except (TypeError, ValueError, AttributeError) as exc:
            record = Quarantined(
                file=file,
                line=number,
                reason="bad_span",
                message=f"malformed span data ({type(exc).__name__})",
            )
            for trace_id in _unread(record, orjson.dumps(doc)).trace_ids:
                lost.setdefault(trace_id, (f"line {number}", None, "bad_span"))
            yield record
            continue
        if untraced:
            yield _untraced(file, number, untraced)
        while open_traces:  # (in the order their last spans came: the stale ones first)
            trace = next(iter(open_traces.values()))
            if at.pos - trace.last_line <= window:
                break
            del open_traces[trace.trace_id]
            trace.cut = SPREAD.format(window=window)
            flushed[trace.trace_id] = None
            if len(flushed) > FLUSHED_KEPT:
                flushed.popitem(last=False)
            yield from _ended(state, trace, max_turns, at.pos)
        if state.joining:
            yield from state.release(at.pos - window)


def _keeper(at: _At, state: Carry) -> otel_logs.Keep:
    """What keeps a GenAI event record of the line at `at` with its trace."""

    def keep(trace_id: str, span_id: str, event: LogEvent) -> None:
        trace = _trace(state.open, trace_id, at, {}, state.flushed)
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
    item = _finish(trace, max_turns, state.lost)
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


def _collect(
    doc: dict[str, Any], at: _At, traces: OrderedDict[str, Trace], flushed: OrderedDict[str, None]
) -> list[str]:
    """Add the document's GenAI spans to their traces. A malformed span (a start time that is no
    number, ...) marks its trace, which is quarantined whole when it ends; the fields of spans
    left out for want of a trace id are returned (they cannot be told apart from other
    conversations' spans, nor their trace named)."""
    untraced = []
    for i, rs in enumerate(doc["resourceSpans"]):
        resource = attributes((rs.get("resource") or {}).get("attributes"))
        scopes = rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []
        for j, ss in enumerate(scopes):
            for n, raw in enumerate(ss.get("spans") or []):
                try:
                    traced = _add(raw, at, resource, traces, flushed)
                except (TypeError, ValueError, AttributeError) as exc:
                    trace_id = raw.get("traceId") if isinstance(raw, dict) else None
                    span_at = _span_at(i, j, n)  # named only for a span that is reported
                    if not trace_id:
                        untraced.append(span_at)
                        continue
                    trace = _trace(traces, str(trace_id), at, resource, flushed)
                    where = f"line {at.line}" if at.file == trace.file else f"{at.file}:{at.line}"
                    trace.broken = trace.broken or (where, span_at, type(exc).__name__)
                    continue
                if not traced:
                    untraced.append(f"{_span_at(i, j, n)}.traceId")
    return untraced


def _span_at(i: int, j: int, n: int) -> str:
    return f"resourceSpans[{i}].scopeSpans[{j}].spans[{n}]"


def _trace(
    traces: OrderedDict[str, Trace],
    trace_id: str,
    at: _At,
    resource: dict,
    flushed: OrderedDict[str, None],
) -> Trace:
    trace = traces.get(trace_id)
    if trace is None:
        trace = Trace(trace_id, at.line, at.pos, resource=resource, file=at.file, first=at.pos)
        traces[trace_id] = trace
        if trace_id in flushed:
            trace.partial = CONTINUED
    elif resource and not trace.resource:  # opened by its log records, which give none
        trace.resource = resource
    if trace.last_line != at.pos:
        trace.last_line = at.pos
        traces.move_to_end(trace_id)  # the open traces stay in the order of their last spans
    return trace


def _add(
    raw: Any,
    at: _At,
    resource: dict[str, Any],
    traces: OrderedDict[str, Trace],
    flushed: OrderedDict[str, None],
) -> bool:
    """Add one span to its trace if it is a GenAI span; False when it has no trace id."""
    attrs = attributes(raw.get("attributes"))
    if not any(k.startswith(GENAI_PREFIXES) for k in attrs):
        trace = traces.get(raw.get("traceId"))  # type: ignore[arg-type]
        if trace is not None:
            parent = raw.get("parentSpanId")
            if not parent:  # a root, not GenAI (an HTTP request's, an agent run's)
                trace.closed = True
            elif raw.get("spanId") and len(trace.links) < MAX_SPANS:  # between GenAI spans
                trace.links[str(raw["spanId"])] = str(parent)
        return True
    fill_messages(attrs, raw.get("events"))
    start = int(raw.get("startTimeUnixNano") or 0)
    trace_id = str(raw.get("traceId") or "")
    if not trace_id:
        return False
    status = raw.get("status") or {}
    code = status.get("code")
    error = None
    if code in (2, "STATUS_CODE_ERROR", "ERROR") or attrs.get("error.type"):
        error = str(status.get("message") or attrs.get("error.type") or "error")
    trace = _trace(traces, trace_id, at, resource, flushed)
    trace.closed = trace.closed or not raw.get("parentSpanId")
    if len(trace.spans) >= MAX_SPANS:
        trace.dropped += 1
    else:
        sid, parent = str(raw.get("spanId") or ""), str(raw.get("parentSpanId") or "")
        trace.add(Span(start, attrs, error, sid, parent))
    return True


def _untraced(file: str, line: int, fields: list[str]) -> Quarantined:
    kind = "log record" if fields[0].startswith("resourceLogs") else "span"
    more = f" (and {len(fields) - 1} more {kind}(s) of this line)" if len(fields) > 1 else ""
    what = (
        f"a GenAI {kind} with no traceId" if fields[0].endswith(".traceId") else "a malformed span"
    )
    return Quarantined(
        file=file,
        line=line,
        reason="bad_span",
        message=f"{what}{more} skipped: without a trace id its conversation cannot be told "
        "apart from the others",
        field=fields[0],
    )


def _finish(
    trace: Trace, max_turns: int, lost: dict[str, tuple[str, str | None, str]]
) -> Conversation | Quarantined:
    file = trace.file
    spans = sorted(trace.spans, key=lambda s: s.start)
    every = [trace.resource, *(s.attrs for s in spans)]
    conv_id = next(
        (a["gen_ai.conversation.id"] for a in every if a.get("gen_ai.conversation.id")),
        trace.trace_id,
    )
    resolved = next((as_resolved(a[k]) for a in every for k in RESOLVED_KEYS if k in a), None)
    broken = trace.broken or lost.get(trace.trace_id)
    if broken is not None:  # mined without those spans, the conversation would miss a part
        where, at, error = broken
        return Quarantined(
            file=file,
            line=trace.line,
            reason="bad_span",
            message=f"spans of this trace could not be read ({error}, {where}); the trace is "
            "skipped",
            field=at,
            conversation_id=str(conv_id),
        )
    messages: list[dict[str, Any]] = []
    try:
        if trace.logs:  # the messages of model calls sent as log records
            made = otel_logs.attach(spans, trace.logs, _new_span)
            spans = sorted(spans + made, key=lambda s: s.start) if made else spans
        nested = nested_in_tools(spans, trace.links)
        messages = history(spans, nested)
        merge_tool_spans(messages, spans, nested)
        conv = build_conversation(
            messages,
            conversation_id=str(conv_id),
            file=file,
            line=trace.line,
            fmt="otel",
            resolved=resolved,
            max_turns=max_turns,
        )
    except RecordProblem as p:
        return Quarantined(
            file=file,
            line=trace.line,
            reason=p.reason,
            message=p.message,
            field=span_field(messages, p.field),
            conversation_id=str(conv_id),
        )
    except (TypeError, ValueError, AttributeError) as exc:  # messages of an unexpected shape
        # (a `tool_calls` that is not a list of objects, ...): quarantined, the run goes on
        return Quarantined(
            file=file,
            line=trace.line,
            reason="bad_span",
            message=f"malformed messages in the trace's spans ({type(exc).__name__})",
            conversation_id=str(conv_id),
        )
    if trace.dropped:
        conv.capped = True
        conv.total_messages += trace.dropped
    if trace.cut is not None and trace.partial is None and (not trace.closed or _open_calls(conv)):
        trace.partial = trace.cut  # ended by the window before its root span, or a call's result
    if trace.partial is not None:
        # only a part of the trace: whether it was resolved is not known, so its cases are
        # low-confidence `needs_label` ones ("resolution not recorded")
        log.warning("%s: trace %s mined in parts: %s", file, trace.trace_id, trace.partial)
        conv.resolved = None
        conv.partial = trace.partial
    return conv


def _new_span(start: int, attrs: dict[str, Any], sid: str) -> Span:
    return Span(start, attrs, None, sid)


def _open_calls(conv: Conversation) -> bool:
    """Whether a logged call has no result: its trace's tool span may not have been seen."""
    return any(c.result is None for m in conv.messages for c in m.calls)
