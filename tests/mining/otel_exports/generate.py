"""Write the OTLP JSON exports of this folder: two support conversations, each an agent loop of
the real `openai` client against a scripted local OpenAI-compatible server, traced by a real
GenAI instrumentation, the spans (and log records) encoded as the OpenTelemetry Collector's file
exporter writes them: an export request a line, `{"resourceSpans": ...}` or
`{"resourceLogs": ...}`, ids in hex.

With `--agent-tool`, a triage agent answers the customer and hands the refund to a refund agent
called as its tool `refund_agent` (its own loop and history, inside the tool's execution); the
application traces each tool execution as an `execute_tool` span, as the GenAI conventions have
it.

With `--turns`, each conversation has two customer turns ("refund it" / "Yes please."), each
traced apart as an application serving a request a turn does (its own root span, with
`gen_ai.conversation.id`, and OpenInference's `using_session` for OpenInference), the two
conversations' turns taking turns as concurrent customers' do.

Not part of the test suite (the instrumentations are not the project's dependencies). In a
virtual environment of its own:

    pip install openai opentelemetry-sdk opentelemetry-exporter-otlp-proto-common INSTRUMENTATION
    python generate.py {openllmetry,openinference,openai-v2} OUT.jsonl [--turns | --agent-tool]

`openai-v2` follows OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT and
OTEL_SEMCONV_STABILITY_OPT_IN, as the instrumentation does.
"""

from __future__ import annotations

import base64
import contextlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripted_model import SAYS, TOOLS, YES, completion, refund_step, result, serve  # noqa: E402

TRIAGE = "You triage support requests; a refund agent does refunds."
REFUND_AGENT = {
    "type": "function",
    "function": {
        "name": "refund_agent",
        "description": "Hand a refund request to the refund agent",
        "parameters": {"type": "object", "properties": {"request": {"type": "string"}}},
    },
}


def reply(request: dict, n: int) -> dict:
    """The scripted agent: look the order up; refund its item (in two turns, once the customer
    has said yes to "Shall I?"); say it is done. The triage agent hands the request on."""
    two_turns = request.get("metadata", {}).get("turns") == "2"
    if request["messages"][0]["content"] != TRIAGE:
        call, words = refund_step(request, two_turns=two_turns, confirm_first=False)
        return completion(request, n, {"role": "assistant", "content": words}, call)
    said = [m["content"] for m in request["messages"] if m["role"] == "user"]
    handed = any(m["role"] == "tool" for m in request["messages"])
    message: dict = {
        "role": "assistant",
        "content": "Your refund is on its way." if handed else None,
    }
    call = (
        None if handed else {"name": "refund_agent", "arguments": json.dumps({"request": said[0]})}
    )
    return completion(request, n, message, call)


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


def main(which: str, out: str, turns: bool, agent_tool: bool) -> None:
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
    session = None
    if which == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    elif which == "openinference":
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        session = using_session
    else:
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider
        )

    server = serve(reply)
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="test")
    tracer = trace.get_tracer("support-app")
    metadata = {"turns": "2" if turns else "1"}

    def run(messages: list[dict], tools: list[dict]) -> str:
        """The agent loop: call the model until it answers without a tool call."""
        while True:
            answer = client.chat.completions.create(
                model="gpt-4o-mini", messages=messages, tools=tools, metadata=metadata
            )
            message = answer.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content
            for tc in message.tool_calls:
                messages.append({"role": "tool", "tool_call_id": tc.id, "content": execute(tc)})

    def execute(tc) -> str:
        args = json.loads(tc.function.arguments)
        if not agent_tool:
            return json.dumps(result(tc.function.name, args))
        with tracer.start_as_current_span(f"execute_tool {tc.function.name}") as span:
            span.set_attribute("gen_ai.operation.name", "execute_tool")
            span.set_attribute("gen_ai.tool.name", tc.function.name)
            span.set_attribute("gen_ai.tool.call.id", tc.id)
            span.set_attribute("gen_ai.tool.call.arguments", tc.function.arguments)
            if tc.function.name == "refund_agent":  # an agent of its own, called as a tool
                inner = [
                    {"role": "system", "content": "You are a support agent."},
                    {"role": "user", "content": args["request"]},
                ]
                done = run(inner, TOOLS)
            else:
                done = json.dumps(result(tc.function.name, args))
            span.set_attribute("gen_ai.tool.call.result", done)
            return done

    talks = {
        f"conversation-{i + 1}": [said, YES] if turns else [said] for i, said in enumerate(SAYS)
    }
    system = TRIAGE if agent_tool else "You are a support agent."
    histories = {key: [{"role": "system", "content": system}] for key in talks}
    tools = [*TOOLS, REFUND_AGENT] if agent_tool else TOOLS
    lines = []
    for turn in range(2 if turns else 1):  # the conversations' turns take turns
        for key, messages in histories.items():
            messages.append({"role": "user", "content": talks[key][turn]})
            in_session = session(key) if session and turns else contextlib.nullcontext()
            with in_session, tracer.start_as_current_span("support-turn") as root:
                if turns:
                    root.set_attribute("gen_ai.conversation.id", key)
                run(messages, tools)
                if turn == len(talks[key]) - 1:
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
    main(sys.argv[1], sys.argv[2], "--turns" in sys.argv[3:], "--agent-tool" in sys.argv[3:])
