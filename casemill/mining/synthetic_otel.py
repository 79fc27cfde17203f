"""Synthetic support logs as OpenTelemetry GenAI span exports (OTLP JSON), for tests of the
`otel` parser: the same conversations `casemill.mining.synthetic` writes in chat format."""

from __future__ import annotations

import json
from typing import Any


def _kv(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, value in attrs.items():
        if isinstance(value, bool):
            out.append({"key": key, "value": {"boolValue": value}})
        elif isinstance(value, int):
            out.append({"key": key, "value": {"intValue": str(value)}})
        else:
            out.append({"key": key, "value": {"stringValue": str(value)}})
    return out


def _parts(message: dict[str, Any], with_responses: bool) -> dict[str, Any] | None:
    role = message["role"]
    if role == "tool":
        if not with_responses:
            return None
        return {
            "role": "tool",
            "parts": [
                {
                    "type": "tool_call_response",
                    "id": message["tool_call_id"],
                    "response": message["content"],
                }
            ],
        }
    parts: list[dict[str, Any]] = []
    if message.get("content"):
        parts.append({"type": "text", "content": message["content"]})
    for tc in message.get("tool_calls") or []:
        parts.append(
            {
                "type": "tool_call",
                "id": tc["id"],
                "name": tc["function"]["name"],
                "arguments": json.loads(tc["function"]["arguments"]),
            }
        )
    return {"role": role, "parts": parts}


def otel_export(record: dict[str, Any], trace_id: str, *, with_responses: bool = False) -> dict:
    """A log record as an OTLP JSON export of GenAI spans: one `chat` span holding the history
    (tool results only in `execute_tool` spans unless `with_responses`) and the last reply, and
    one `execute_tool` span per call."""
    messages = record["messages"]
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    history = [p for p in (_parts(m, with_responses) for m in messages[:-1]) if p]
    spans = []
    t0 = 1_700_000_000_000_000_000
    step = 0
    for m in messages:
        for tc in m.get("tool_calls") or []:
            step += 1
            result = results.get(tc["id"], "")
            spans.append(
                {
                    "traceId": trace_id,
                    "spanId": f"{step:016x}",
                    "name": f"execute_tool {tc['function']['name']}",
                    "startTimeUnixNano": str(t0 + step * 1_000_000),
                    "status": {"code": 2, "message": "tool error"}
                    if '"error"' in result[:20]
                    else {},
                    "attributes": _kv(
                        {
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": tc["function"]["name"],
                            "gen_ai.tool.call.id": tc["id"],
                            "gen_ai.tool.call.arguments": tc["function"]["arguments"],
                            "gen_ai.tool.call.result": result,
                        }
                    ),
                }
            )
    spans.append(
        {
            "traceId": trace_id,
            "spanId": f"{step + 1:016x}",
            "name": "chat support-agent",
            "startTimeUnixNano": str(t0 + (step + 1) * 1_000_000),
            "attributes": _kv(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.conversation.id": record["conversation_id"],
                    "casemill.resolved": bool(record["resolved"]),
                    "gen_ai.input.messages": json.dumps(history),
                    "gen_ai.output.messages": json.dumps([_parts(messages[-1], True)]),
                }
            ),
        }
    )
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _kv({"service.name": "support-agent"})},
                "scopeSpans": [{"scope": {"name": "casemill.synthetic"}, "spans": spans}],
            }
        ]
    }
