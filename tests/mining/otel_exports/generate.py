"""Write the OTLP JSON exports of this folder: two support conversations, each an agent loop of
the real `openai` client against a scripted local OpenAI-compatible server, traced by a real
GenAI instrumentation, the spans (and log records) encoded as the OpenTelemetry Collector's file
exporter writes them: an export request a line, `{"resourceSpans": ...}` or
`{"resourceLogs": ...}`, ids in hex.

Not part of the test suite (the instrumentations are not the project's dependencies). In a
virtual environment of its own:

    pip install openai opentelemetry-sdk opentelemetry-exporter-otlp-proto-common INSTRUMENTATION
    python generate.py {openllmetry,openinference,openai-v2} OUT.jsonl

`openai-v2` follows OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT and
OTEL_SEMCONV_STABILITY_OPT_IN, as the instrumentation does.
"""

from __future__ import annotations

import base64
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ORDERS = ("W1001", "W1002")
SAYS = (
    "Hi, the blanket in order W1001 arrived broken, refund it please.",
    "Hello, the lamp from order W1002 does not work. Please refund it.",
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": about,
            "parameters": {"type": "object", "properties": props, "required": list(props)},
        },
    }
    for name, about, props in (
        ("get_order", "Look up an order", {"order_id": {"type": "string"}}),
        (
            "refund_items",
            "Refund items of an order",
            {"order_id": {"type": "string"}, "item_ids": {"type": "array"}},
        ),
    )
]


def reply(request: dict, n: int) -> dict:
    """The scripted agent: look the order up, refund its item, say so."""
    said = next(m["content"] for m in request["messages"] if m["role"] == "user")
    order = re.search(r"W\d+", said).group(0)
    results = sum(1 for m in request["messages"] if m["role"] == "tool")
    message: dict = {"role": "assistant", "content": None}
    if results < 2:
        name, args = (
            ("get_order", {"order_id": order})
            if results == 0
            else (
                "refund_items",
                {"order_id": order, "item_ids": ["I" + order[-1]]},
            )
        )
        call = {"name": name, "arguments": json.dumps(args)}
        message["tool_calls"] = [{"id": f"call_{n}", "type": "function", "function": call}]
    else:
        message["content"] = "Done, refunded."
    finish = "tool_calls" if results < 2 else "stop"
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1_795_000_000,
        "model": request["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }


class Handler(BaseHTTPRequestHandler):
    served = 0

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.served += 1
        body = json.dumps(reply(request, Handler.served)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


def result(name: str, args: dict) -> dict:
    item = "I" + args["order_id"][-1]
    if name == "get_order":
        return {"id": args["order_id"], "status": "delivered", "items": [{"item_id": item}]}
    return {"refund_id": "R" + item[1:], "amount": 64.75}


def hex_ids(value):
    """Protobuf's JSON writes ids in base64; the collector writes them in hex."""
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex()
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
            else hex_ids(v)
            for k, v in value.items()
        }
    return [hex_ids(v) for v in value] if isinstance(value, list) else value


def main(which: str, out: str) -> None:
    import openai
    from google.protobuf.json_format import MessageToDict
    from opentelemetry import _logs, trace
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    try:
        from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter as LogExporter
    except ImportError:
        from opentelemetry.sdk._logs.export import InMemoryLogExporter as LogExporter

    resource = Resource.create({"service.name": f"support-{which}"})
    spans, logs = InMemorySpanExporter(), LogExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    trace.set_tracer_provider(tracer_provider)
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    _logs.set_logger_provider(logger_provider)
    if which == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    elif which == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    else:
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider
        )

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="test")
    tracer = trace.get_tracer("support-app")
    lines = []
    for said in SAYS:
        with tracer.start_as_current_span("support-conversation") as root:
            messages = [
                {"role": "system", "content": "You are a support agent."},
                {"role": "user", "content": said},
            ]
            while True:
                answer = client.chat.completions.create(
                    model="gpt-4o-mini", messages=messages, tools=TOOLS
                )
                message = answer.choices[0].message
                if not message.tool_calls:
                    break
                messages.append(message.model_dump(exclude_none=True))
                for tc in message.tool_calls:
                    done = result(tc.function.name, json.loads(tc.function.arguments))
                    messages.append(
                        {"role": "tool", "tool_call_id": tc.id, "content": json.dumps(done)}
                    )
            root.set_attribute("casemill.resolved", True)
        logged = logs.get_finished_logs()
        if logged:  # written as they come, before the spans that end after them
            lines.append(hex_ids(MessageToDict(encode_logs(logged))))
        lines.append(hex_ids(MessageToDict(encode_spans(spans.get_finished_spans()))))
        spans.clear()
        logs.clear()
    server.shutdown()
    with open(out, "w") as fh:
        fh.writelines(json.dumps(line) + "\n" for line in lines)


if __name__ == "__main__":
    main(*sys.argv[1:3])
