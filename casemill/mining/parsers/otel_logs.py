"""GenAI events sent as OTLP log records (`casemill.mining.parsers.otel`): instrumentations that keep the
messages out of the spans (the OpenTelemetry OpenAI instrumentation's events, the GenAI
utilities' `gen_ai.client.inference.operation.details`) write them as log records, which a
collector's file exporter serving the logs pipeline too writes as `{"resourceLogs": [...]}`
lines among the span lines.

A record whose event name (the `eventName` field, or the `event.name` attribute) is a GenAI
event and that carries a trace id is kept by its trace, under its span id, with its body's
fields merged into its attributes. When the trace ends, the records of a model-call span that
holds no messages give them: `gen_ai.client.inference.operation.details` its
`gen_ai.input.messages` and `gen_ai.output.messages`, the message events (`gen_ai.user.message`,
`gen_ai.choice`, ...) read as span events are (`casemill.mining.parsers.otel_forms`). Records whose span
is not in the export make a model-call span of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from casemill.mining.parsers.otel_forms import CHOICE, EVENT_ROLES, INPUT, OUTPUT, fill_messages
from casemill.mining.parsers.otel_values import attr_value, attributes

DETAILS = "gen_ai.client.inference.operation.details"
LOG_EVENTS = frozenset({*EVENT_ROLES, CHOICE, DETAILS})
DETAIL_KEYS = (INPUT, OUTPUT, "gen_ai.system_instructions")
MAX_RECORDS = 50_000  # a trace's records kept; more are counted as dropped


@dataclass(slots=True)
class LogEvent:
    name: str
    time: int
    attrs: dict[str, Any]  # the record's attributes, its body's fields merged in


# what `collect` hands each GenAI record to: its trace id, span id and the event
Keep = Callable[[str, str, LogEvent], None]


def collect(doc: dict[str, Any], keep: Keep) -> list[str]:
    """Hand each GenAI event record of an OTLP logs export to `keep`; the fields of the records
    left out for want of a trace id are returned."""
    untraced = []
    for i, rl in enumerate(doc["resourceLogs"]):
        for j, sl in enumerate(rl.get("scopeLogs") or []):
            for n, record in enumerate(sl.get("logRecords") or []):
                attrs = attributes(record.get("attributes"))
                name = record.get("eventName") or attrs.get("event.name")
                if name not in LOG_EVENTS:
                    continue
                trace_id = record.get("traceId")
                if not trace_id:
                    untraced.append(f"resourceLogs[{i}].scopeLogs[{j}].logRecords[{n}].traceId")
                    continue
                body = attr_value(record.get("body") or {})
                if isinstance(body, dict):
                    attrs.update(body)
                elif body is not None:
                    attrs.setdefault("content", body)
                time = int(record.get("timeUnixNano") or record.get("observedTimeUnixNano") or 0)
                keep(str(trace_id), str(record.get("spanId") or ""), LogEvent(name, time, attrs))
    return untraced


def attach(
    spans: list[Any],
    logs: dict[str, list[LogEvent]],
    new_span: Callable[[int, dict[str, Any], str], Any],
) -> list[Any]:
    """Give the model-call spans that hold no messages those of their records; the spans made
    (by `new_span(start, attrs, span id)`) for records whose span is not among `spans`."""
    by_id = {s.sid: s for s in spans if s.sid}
    made = []
    for sid, events in logs.items():
        span = by_id.get(sid) if sid else None
        if span is None:
            span = new_span(min(e.time for e in events), {"gen_ai.operation.name": "chat"}, sid)
            made.append(span)
        if INPUT in span.attrs or OUTPUT in span.attrs:
            continue
        details = next((e for e in events if e.name == DETAILS), None)
        if details is not None:
            span.attrs.update({k: details.attrs[k] for k in DETAIL_KEYS if k in details.attrs})
        else:
            as_span_events = [{"name": e.name, "attributes": dict(e.attrs)} for e in events]
            fill_messages(span.attrs, as_span_events)
    return made
