"""The traces of an OpenTelemetry export: GenAI spans gathered by trace id (`collect`), and a
trace that ended made a conversation (`conversation_of`).

A span is a GenAI span when an attribute of its has one of `GENAI_PREFIXES`; of other spans a
trace keeps only how they link GenAI spans to their parents, and whether its root was seen. A
malformed span marks its trace, quarantined whole when it ends.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, NamedTuple

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
from casemill.mining.parsers.otel_values import attributes

# a span with an attribute of these is a GenAI span (OpenInference's spans have no gen_ai.*)
GENAI_PREFIXES = ("gen_ai.", "casemill.", "conversation.", "openinference.", "llm.")
RESOLVED_KEYS = ("casemill.resolved", "conversation.resolved", "session.resolved")
MAX_SPANS = 5000
CONTINUED = "the trace continued after an earlier part of it was mined"

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


class At(NamedTuple):
    """Where a document is: its file, its line there, and its line in the run."""

    file: str
    line: int  # in the file
    pos: int  # in the run: the lines of its earlier files counted


def collect(
    doc: dict[str, Any], at: At, traces: OrderedDict[str, Trace], flushed: OrderedDict[str, None]
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
                    trace = trace_of(traces, str(trace_id), at, resource, flushed)
                    where = f"line {at.line}" if at.file == trace.file else f"{at.file}:{at.line}"
                    trace.broken = trace.broken or (where, span_at, type(exc).__name__)
                    continue
                if not traced:
                    untraced.append(f"{_span_at(i, j, n)}.traceId")
    return untraced


def _span_at(i: int, j: int, n: int) -> str:
    return f"resourceSpans[{i}].scopeSpans[{j}].spans[{n}]"


def trace_of(
    traces: OrderedDict[str, Trace],
    trace_id: str,
    at: At,
    resource: dict,
    flushed: OrderedDict[str, None],
) -> Trace:
    """The open trace of `trace_id`, opened at `at` if it is not (marked `CONTINUED` when the
    window flushed it before), and moved to the end of `traces` as the last to have a span."""
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
    at: At,
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
    trace = trace_of(traces, trace_id, at, resource, flushed)
    trace.closed = trace.closed or not raw.get("parentSpanId")
    if len(trace.spans) >= MAX_SPANS:
        trace.dropped += 1
    else:
        sid, parent = str(raw.get("spanId") or ""), str(raw.get("parentSpanId") or "")
        trace.add(Span(start, attrs, error, sid, parent))
    return True


def untraced_record(file: str, line: int, fields: list[str]) -> Quarantined:
    """The record of a line's GenAI spans or log records skipped for want of a trace id (or
    malformed), `fields` naming them."""
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


def conversation_of(
    trace: Trace, max_turns: int, lost: dict[str, tuple[str, str | None, str]]
) -> Conversation | Quarantined:
    """A trace that ended, made a conversation: quarantined when spans of it could not be read
    (`lost`: the trace ids of lines that could not be), or its messages make none; marked as
    only a part of the trace when it may be one."""
    spans = sorted(trace.spans, key=lambda s: s.start)
    every = [trace.resource, *(s.attrs for s in spans)]
    conv_id = str(
        next(
            (a["gen_ai.conversation.id"] for a in every if a.get("gen_ai.conversation.id")),
            trace.trace_id,
        )
    )
    resolved = next((as_resolved(a[k]) for a in every for k in RESOLVED_KEYS if k in a), None)
    broken = trace.broken or lost.get(trace.trace_id)
    if broken is not None:  # mined without those spans, the conversation would miss a part
        where, at, error = broken
        return Quarantined(
            file=trace.file,
            line=trace.line,
            reason="bad_span",
            message=f"spans of this trace could not be read ({error}, {where}); the trace is "
            "skipped",
            field=at,
            conversation_id=conv_id,
        )
    conv = _conversation(trace, spans, conv_id, resolved, max_turns)
    if isinstance(conv, Conversation):
        _mark_part(trace, conv)
    return conv


def _conversation(
    trace: Trace, spans: list[Span], conv_id: str, resolved: bool | None, max_turns: int
) -> Conversation | Quarantined:
    """The conversation of the trace's spans (ordered by start): the longest history, with the
    results only tool spans show and the messages its GenAI events sent as log records."""
    file = trace.file
    messages: list[dict[str, Any]] = []
    try:
        if trace.logs:  # the messages of model calls sent as log records
            made = otel_logs.attach(spans, trace.logs, _new_span)
            spans = sorted(spans + made, key=lambda s: s.start) if made else spans
        nested = nested_in_tools(spans, trace.links)
        messages = history(spans, nested)
        merge_tool_spans(messages, spans, nested)
        return build_conversation(
            messages,
            conversation_id=conv_id,
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
            conversation_id=conv_id,
        )
    except (TypeError, ValueError, AttributeError) as exc:  # messages of an unexpected shape
        # (a `tool_calls` that is not a list of objects, ...): quarantined, the run goes on
        return Quarantined(
            file=file,
            line=trace.line,
            reason="bad_span",
            message=f"malformed messages in the trace's spans ({type(exc).__name__})",
            conversation_id=conv_id,
        )


def _mark_part(trace: Trace, conv: Conversation) -> None:
    """Count the spans dropped over the cap, and mark a conversation that may be only a part
    of its trace (`Trace.partial`, or cut by the window before its root span or a call's
    result): its resolution is then unknown."""
    if trace.dropped:
        conv.capped = True
        conv.total_messages += trace.dropped
    if trace.cut is not None and trace.partial is None and (not trace.closed or _open_calls(conv)):
        trace.partial = trace.cut  # ended by the window before its root span, or a call's result
    if trace.partial is not None:
        # only a part of the trace: whether it was resolved is not known, so its cases are
        # low-confidence `needs_label` ones ("resolution not recorded")
        log.warning("%s: trace %s mined in parts: %s", trace.file, trace.trace_id, trace.partial)
        conv.resolved = None
        conv.partial = trace.partial


def _new_span(start: int, attrs: dict[str, Any], sid: str) -> Span:
    return Span(start, attrs, None, sid)


def _open_calls(conv: Conversation) -> bool:
    """Whether a logged call has no result: its trace's tool span may not have been seen."""
    return any(c.result is None for m in conv.messages for c in m.calls)
