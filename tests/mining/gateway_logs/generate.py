"""Write the LiteLLM per-call logs of this folder: two support conversations, each an agent loop
of the real `litellm.completion` against a scripted local OpenAI-compatible server, every call
logged as a team logs its agent's model calls through LiteLLM: a `CustomLogger` writing the
`StandardLoggingPayload` it receives (`kwargs["standard_logging_object"]`, see
https://docs.litellm.ai/docs/proxy/logging_spec) as a JSON line, unmodified. The two
conversations' calls take turns (A's first call, B's first call, A's second, ...) as concurrent
customers' calls do.

With `--turns`, each conversation has two customer turns ("refund it" / "Yes please."), the
model asking "Shall I?" in between, all in one growing history as a chat app sends it, each call
passing the conversation's `litellm_session_id` (LiteLLM's session grouping).

The loop appends the model's message to the history as `message.model_dump()`; with
`--append-message`, as LiteLLM's function-calling docs do, the `Message` object itself, which
the payload then holds as it is (the logger's `default=str` writes its repr).

LiteLLM's model cost map is its packaged copy (LITELLM_LOCAL_MODEL_COST_MAP=True, no fetch).

Not part of the test suite (LiteLLM is not the project's dependency). In a virtual environment
of its own:

    pip install litellm openai
    python generate.py OUT.jsonl [--turns] [--append-message]
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripted_model import SAYS, TOOLS, YES, completion, refund_step, result, serve  # noqa: E402

API_KEY = "sk-local-test"


def reply(request: dict, n: int, two_turns: bool) -> dict:
    """The scripted agent: look the order up; refund its item (in two turns, once the customer
    has said yes to "Shall I?"); say it is done."""
    call, words = refund_step(request, two_turns=two_turns, confirm_first=True)
    return completion(request, n, {"role": "assistant", "content": words}, call)


def main(out: str, turns: bool, append_message: bool) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm
    from litellm.integrations.custom_logger import CustomLogger

    logged = threading.Condition()
    lines: list[str] = []

    class JsonlLogger(CustomLogger):
        """A line a call: the payload LiteLLM hands its loggers, as it is."""

        def _write(self, kwargs: dict) -> None:
            with logged:
                lines.append(json.dumps(kwargs["standard_logging_object"], default=str))
                logged.notify_all()

        def log_success_event(self, kwargs, response_obj, start_time, end_time):
            self._write(kwargs)

        def log_failure_event(self, kwargs, response_obj, start_time, end_time):
            self._write(kwargs)

    litellm.callbacks = [JsonlLogger()]
    server = serve(lambda request, n: reply(request, n, turns))
    api_base = f"http://127.0.0.1:{server.server_port}/v1"
    calls = 0

    def complete(messages: list, session: str | None):
        """One model call; LiteLLM logs it in a background thread: wait for its line, so that
        the lines keep the calls' order and none is lost at exit."""
        nonlocal calls
        extra = {"litellm_session_id": session} if session else {}
        answer = litellm.completion(
            model="openai/gpt-4o-mini",
            api_base=api_base,
            api_key=API_KEY,
            messages=messages,
            tools=TOOLS,
            **extra,
        )
        calls += 1
        with logged:
            if not logged.wait_for(lambda: len(lines) >= calls, timeout=30):
                raise SystemExit(f"LiteLLM logged {len(lines)} of {calls} calls")
        return answer

    def conversation(key: str, says: list[str]):
        """The chat app and its agent loop, a step a model call: call the model until it
        answers without a tool call, a customer turn after another, one growing history."""
        messages: list = [{"role": "system", "content": "You are a support agent."}]
        for said in says:
            messages.append({"role": "user", "content": said})
            while True:
                message = complete(messages, key if turns else None).choices[0].message
                messages.append(message if append_message else message.model_dump())
                yield
                if not message.tool_calls:
                    break
                for tc in message.tool_calls:
                    done = result(tc.function.name, json.loads(tc.function.arguments))
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": tc.id,
                            "name": tc.function.name,
                            "content": json.dumps(done),
                        }
                    )

    running = [
        conversation(f"conversation-{i + 1}", [said, YES] if turns else [said])
        for i, said in enumerate(SAYS)
    ]
    while running:  # the conversations' calls take turns
        for talk in list(running):
            if next(talk, StopIteration) is StopIteration:
                running.remove(talk)
    server.shutdown()
    with open(out, "w") as fh:
        fh.writelines(line + "\n" for line in lines)


if __name__ == "__main__":
    main(sys.argv[1], "--turns" in sys.argv[2:], "--append-message" in sys.argv[2:])
