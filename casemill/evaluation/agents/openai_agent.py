"""`openai:MODEL`: an OpenAI-compatible model driven by Casemill's own tool-calling loop.

The loop sends the messages and the tool specs through `casemill.llm.LLMEndpoint` (base URL and
key from settings or the environment), executes the tool calls the model returns against the
sandbox, appends the results as `tool` messages and asks again, until the model answers without
tool calls (the final reply) or the step limit is reached. Token usage is summed over requests.
The loop is native asyncio: requests go through the endpoint's `AsyncOpenAI` client (one per event
loop) and tool calls, which are fast and in memory, run inline; no thread per episode.

Transport errors are retried here, per request, with exponential backoff and seeded jitter
(the SDK's own retries are off so that attempts are counted and reproducible): timeouts,
connection errors, 429 (honouring `Retry-After`) and 5xx. A reply that is not JSON is not
retried (`invalid_json`). A tool call whose arguments are not a JSON object, or that names a
tool the domain does not have, is recorded, answered with an error message the model can read,
and noted on the trajectory (`malformed_tool_call`, `unknown_tool`); the loop carries on.

The sampling temperature is 0 unless set (`casemill eval --temperature`, the flow's
`temperature`): at 0 most models answer near-deterministically, so pass^k over `--trials K`
shows little of the flakiness a model has at the temperature it is deployed with. The
temperature is in the request body, in the fingerprint (trials at two temperatures are never
mixed on resume) and in `settings`, which the run's summary records.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import random
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from casemill.case.ids import short_hash
from casemill.errors import UserError
from casemill.evaluation.agents.base import (
    AgentError,
    AgentReply,
    Episode,
    StepLimitReached,
    parse_arguments,
)
from casemill.evaluation.agents.retry import (
    RetryPolicy,
    not_retried,
    parse_retry_after,
    status_kind,
)
from casemill.llm import LLMEndpoint
from casemill.settings import Settings

log = logging.getLogger(__name__)

LOOP_VERSION = "1"
MAX_TEMPERATURE = 2.0  # the OpenAI API's range is 0 to 2


@dataclass
class _Usage:
    prompt: int = 0
    completion: int = 0


@dataclass
class OpenAIAgent:
    endpoint: LLMEndpoint
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    seed: int = 0
    temperature: float = 0.0
    system_prompt: str | None = None
    sleep: Any = asyncio.sleep  # injected so tests can count waits (sync or async callable)

    def __post_init__(self) -> None:
        check_temperature(self.temperature)
        # Casemill retries itself (counted, seeded); the SDK must not retry underneath.
        self.endpoint = replace(self.endpoint, max_retries=0, _client=None)
        self.name = f"openai:{self.endpoint.model}"
        config = {
            "spec": self.name,
            "base_url": self.endpoint.base_url,
            "temperature": self.temperature,
            "system_prompt": self.system_prompt,
            "loop": LOOP_VERSION,
        }
        self.fingerprint = short_hash(json.dumps(config, sort_keys=True))
        # what a run records of this agent so that two runs can be told comparable or not
        self.settings = {"model": self.endpoint.model, "temperature": self.temperature}

    @classmethod
    def from_spec(
        cls, model: str, settings: Settings | None = None, *, temperature: float | None = None
    ) -> OpenAIAgent:
        # the spec's model needs no CASEMILL_LLM_MODEL; raises EndpointNotConfigured
        endpoint = LLMEndpoint.from_settings(settings, model=model)
        return cls(endpoint=endpoint, temperature=0.0 if temperature is None else temperature)

    def run_sync(self, episode: Episode) -> AgentReply:
        """`run` on an event loop of its own (for callers outside asyncio)."""
        return asyncio.run(self.run(episode))

    async def run(self, episode: Episode) -> AgentReply:
        rng = random.Random(f"{self.seed}:{episode.case_id}")
        messages = list(episode.messages)
        if self.system_prompt:
            messages.insert(0, {"role": "system", "content": self.system_prompt})
        usage = _Usage()
        for _ in range(episode.max_steps):
            message = await self._complete(messages, episode, rng, usage)
            tool_calls = message.get("tool_calls") or []
            if not tool_calls:
                messages.append({"role": "assistant", "content": message.get("content") or ""})
                return AgentReply(message.get("content"), messages, usage.prompt, usage.completion)
            answers, limit = [], False
            try:
                for call in tool_calls:
                    answers.append(self._execute(episode, call))
            except StepLimitReached:
                limit = True
            # at the step limit only the calls made are kept: every call in the transcript has
            # its tool message, as a chat conversation must
            made = tool_calls[: len(answers)]
            if made:
                messages.append(
                    {"role": "assistant", "content": message.get("content"), "tool_calls": made}
                )
            messages.extend(answers)
            if limit:
                break
        return AgentReply(None, messages, usage.prompt, usage.completion, hit_step_limit=True)

    def _execute(self, episode: Episode, call: dict[str, Any]) -> dict[str, Any]:
        fn = call.get("function") or {}
        name, raw = str(fn.get("name") or ""), fn.get("arguments")
        args = parse_arguments(raw)
        if args is None:
            result = episode.record_malformed(name, str(raw), call.get("id"))
        else:
            result = episode.call(name, args, call_id=call.get("id"))
        return {"role": "tool", "tool_call_id": call.get("id"), "content": result.as_text()}

    async def _complete(
        self, messages: list[dict], episode: Episode, rng: random.Random, usage: _Usage
    ) -> dict[str, Any]:
        """The model's next message; transient errors retried, but never into the case's time
        limit (the error is raised as it is, not cut off as a time-out)."""
        for attempt in range(1, self.retry.attempts + 1):
            try:
                response = await self._chat(messages, episode.tools)
                return _message(response, usage)
            except AgentError as exc:
                error = exc
            except Exception as exc:  # noqa: BLE001 - classified, then retried or recorded
                error = _classify(exc)
            if not error.transient or attempt == self.retry.attempts:
                raise AgentError(
                    error.kind, self.endpoint.scrub(str(error)), retry_after_s=error.retry_after_s
                )
            wait = self.retry.delay(attempt, rng, error.retry_after_s)
            if episode.outlasts(wait):
                said = self.endpoint.scrub(not_retried(str(error), wait))
                raise AgentError(error.kind, said, retry_after_s=error.retry_after_s)
            log.info("%s: %s; retry %d in %.2fs", self.name, error.kind, attempt, wait)
            waited = self.sleep(wait)
            if inspect.isawaitable(waited):
                await waited
        raise AssertionError("unreachable")  # pragma: no cover

    async def _chat(self, messages: list[dict], tools: list[dict]) -> Any:
        """One chat completion through the endpoint's `AsyncOpenAI` client, posted and returned as
        plain JSON (`client.post(..., content=..., cast_to=object)`, the SDK's documented way to
        send a raw body; its default `Content-Type` is `application/json`). The SDK's parameter
        transform, its JSON encoder and its response models would cost more CPU than the rest of
        a step on a domain's full tool specs, which bounds throughput at high concurrency: the
        body is encoded with orjson and the reply is checked here instead (`_message`)."""
        body = {"model": self.endpoint.model, "messages": messages, "temperature": self.temperature}
        if tools:
            body["tools"] = tools
        return await self.endpoint.async_client.post(
            "/chat/completions", content=orjson.dumps(body), cast_to=object
        )


def check_temperature(value: float) -> None:
    """`UserError` unless `value` is a sampling temperature the API takes (0 to 2)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UserError(f"temperature {value!r}: give a number from 0 to {MAX_TEMPERATURE:g}")
    if not 0.0 <= value <= MAX_TEMPERATURE:
        raise UserError(f"temperature {value:g}: give a number from 0 to {MAX_TEMPERATURE:g}")


def _message(response: Any, usage: _Usage) -> dict[str, Any]:
    """The assistant message of a chat completion (a JSON object), checked; usage added up.

    The SDK hands back the body as text when the server did not label it JSON: a JSON object
    sent as `text/plain` is read as one; any other text is a reply that is not JSON."""
    if isinstance(response, str | bytes):
        response = _json_text(response)
    if not isinstance(response, dict):
        raise AgentError(
            "invalid_reply", f"the endpoint answered {type(response).__name__}, not a JSON object"
        )
    counts = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    usage.prompt += int(counts.get("prompt_tokens") or 0)
    usage.completion += int(counts.get("completion_tokens") or 0)
    choices = response.get("choices")
    message = (
        choices[0].get("message")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict)
        else None
    )
    if not isinstance(message, dict):
        raise AgentError(
            "invalid_reply", f"the endpoint answered without a message: {str(response)[:200]}"
        )
    content = message.get("content")
    out: dict[str, Any] = {"content": content if isinstance(content, str) else None}
    calls = message.get("tool_calls")
    if calls:
        if not isinstance(calls, list):
            raise AgentError("invalid_reply", f"tool_calls is not a list: {str(calls)[:200]}")
        out["tool_calls"] = [_tool_call(call, index) for index, call in enumerate(calls)]
    return out


def _json_text(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        shown = text[:200].decode(errors="replace") if isinstance(text, bytes) else text[:200]
        raise AgentError(
            "invalid_json", f"the endpoint's reply is not valid JSON ({exc}): {shown!r}"
        ) from None


def _tool_call(call: Any, index: int) -> dict[str, Any]:
    call = call if isinstance(call, dict) else {}
    fn = call.get("function") if isinstance(call.get("function"), dict) else {}
    return {
        "id": str(call.get("id") or f"call_{index}"),
        "type": "function",
        "function": {"name": str(fn.get("name") or ""), "arguments": fn.get("arguments") or ""},
    }


def _classify(exc: Exception) -> AgentError:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        cause = exc.__cause__
        if type(cause).__name__ == "ConnectTimeout":
            # the SDK's aiohttp transport reports a refused connection as a connect timeout;
            # its message ("Cannot connect to host ...") says what happened, the SDK's does not
            return AgentError("connection", f"connection failed: {cause}")
        return AgentError("timeout", f"request timed out: {exc}")
    if isinstance(exc, openai.APIConnectionError):
        return AgentError("connection", f"connection failed: {exc}")
    if isinstance(exc, openai.APIStatusError):
        retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
        return AgentError(
            status_kind(exc.status_code),
            f"HTTP {exc.status_code}: {exc.message}",
            retry_after_s=retry_after,
        )
    if isinstance(exc, json.JSONDecodeError):
        return AgentError("invalid_json", f"the endpoint's reply is not valid JSON: {exc}")
    return AgentError("exception", f"{type(exc).__name__}: {exc}")
