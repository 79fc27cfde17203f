"""`http://...` / `https://...`: an agent behind an HTTP endpoint, driven as a tool-calling loop.

Casemill POSTs a JSON request and the agent answers with either tool calls to execute or its
final reply; after executing the tool calls, Casemill POSTs again with the calls and their
results appended to `messages`. The protocol (`casemill-agent/1`, see docs/agents.md):

    request:  {"protocol": "casemill-agent/1", "case_id": "...", "step": 0,
               "messages": [...OpenAI chat messages...], "tools": [...OpenAI function specs...]}
    response: {"tool_calls": [{"id": "c1", "name": "get_order",
                               "arguments": {"order_id": "W1001"}}]}
          or: {"reply": "Your refund of 14.50 is on its way."}
    optional: "usage": {"prompt_tokens": 12, "completion_tokens": 3}

`arguments` may be an object or a JSON string; OpenAI-shaped calls
(`{"id", "function": {"name", "arguments"}}`) are accepted too. Timeouts, connection errors,
429 (honouring `Retry-After`) and 5xx are retried with backoff; a body that is not JSON, or JSON
of another shape, ends the case with `invalid_json` / `invalid_reply`.
"""

from __future__ import annotations

import json
import logging
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

from casemill.case.ids import short_hash
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

log = logging.getLogger(__name__)

PROTOCOL = "casemill-agent/1"


SECRET_PARAM = re.compile(r"key|token|secret|passw|auth|sig|credential", re.IGNORECASE)


def shown_url(url: str) -> str:
    """`url` fit to be shown and written: a password in it and the values of query parameters
    that look like credentials (`api_key`, `token`, `sig`, ...) become `***`."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    query = [
        (k, "***" if SECRET_PARAM.search(k) else v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query, safe="*")))


@dataclass
class HTTPAgent:
    url: str
    timeout_s: float = 60.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    seed: int = 0
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    sleep: Any = time.sleep

    def __post_init__(self) -> None:
        self.name = shown_url(self.url)  # the name lands in every file of the run
        self.fingerprint = short_hash(json.dumps({"spec": self.url, "protocol": PROTOCOL}))
        self._client = httpx.Client(timeout=self.timeout_s, headers=self.headers)

    async def run(self, episode: Episode) -> AgentReply:
        return await episode.in_thread(self.run_sync, episode)

    def run_sync(self, episode: Episode) -> AgentReply:
        rng = random.Random(f"{self.seed}:{episode.case_id}")
        messages = list(episode.messages)
        prompt = completion = 0
        for step in range(episode.max_steps):
            body = self._post(
                {
                    "protocol": PROTOCOL,
                    "case_id": episode.case_id,
                    "step": step,
                    "messages": messages,
                    "tools": episode.tools,
                },
                rng,
                episode,
            )
            usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
            prompt += int(usage.get("prompt_tokens") or 0)
            completion += int(usage.get("completion_tokens") or 0)
            calls = body.get("tool_calls")
            if not calls:
                reply = body.get("reply")
                if not isinstance(reply, str):
                    raise AgentError(
                        "invalid_reply",
                        f"response has neither 'tool_calls' nor a string 'reply': {_clip(body)}",
                    )
                messages.append({"role": "assistant", "content": reply})
                return AgentReply(reply, messages, prompt, completion)
            if not isinstance(calls, list):
                raise AgentError("invalid_reply", f"'tool_calls' is not a list: {_clip(body)}")
            made, limit = _execute(episode, calls, step)
            messages.extend(made)
            if limit:
                break
        return AgentReply(None, messages, prompt, completion, hit_step_limit=True)

    def _post(
        self, payload: dict[str, Any], rng: random.Random, episode: Episode
    ) -> dict[str, Any]:
        """The agent's answer to `payload`; transient errors retried, but never into the case's
        time limit (the error is raised as it is, not cut off as a time-out)."""
        for attempt in range(1, self.retry.attempts + 1):
            error = self._post_once(payload)
            if isinstance(error, dict):
                return error
            if not error.transient or attempt == self.retry.attempts:
                raise error
            wait = self.retry.delay(attempt, rng, error.retry_after_s)
            if episode.outlasts(wait):
                said = not_retried(str(error), wait)
                raise AgentError(error.kind, said, retry_after_s=error.retry_after_s) from error
            log.info("%s: %s; retry %d in %.2fs", self.name, error.kind, attempt, wait)
            self.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _post_once(self, payload: dict[str, Any]) -> dict[str, Any] | AgentError:
        try:
            response = self._client.post(self.url, json=payload)
        except httpx.TimeoutException as exc:
            return AgentError("timeout", f"request timed out: {exc}")
        except httpx.TransportError as exc:
            return AgentError("connection", f"connection failed: {exc}")
        if response.status_code >= 400:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            return AgentError(
                status_kind(response.status_code),
                f"HTTP {response.status_code}: {response.text[:200]}",
                retry_after_s=retry_after,
            )
        try:
            body = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return AgentError(
                "invalid_json", f"response is not valid JSON ({exc}): {response.text[:200]!r}"
            )
        if not isinstance(body, dict):
            return AgentError("invalid_reply", f"response is not a JSON object: {_clip(body)}")
        return body


def _execute(episode: Episode, calls: list[Any], step: int) -> tuple[list[dict[str, Any]], bool]:
    """Run the agent's tool calls: the assistant message with the calls, then one tool message
    per call, and whether the step limit stopped them. At the limit the messages hold only the
    calls made, each with its tool message, as a chat conversation must."""
    shaped, out = [], []
    for index, call in enumerate(calls):
        call = call if isinstance(call, dict) else {}
        fn = call.get("function") if isinstance(call.get("function"), dict) else call
        name = str(fn.get("name") or "")
        raw = fn.get("arguments", {})
        call_id = str(call.get("id") or f"call_{step}_{index}")
        args = parse_arguments(raw)
        try:
            if args is None:
                result = episode.record_malformed(name, str(raw), call_id)
            else:
                result = episode.call(name, args, call_id=call_id)
        except StepLimitReached:
            return _step_messages(shaped, out), True
        shaped.append(
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": raw if isinstance(raw, str) else json.dumps(raw),
                },
            }
        )
        out.append({"role": "tool", "tool_call_id": call_id, "content": result.as_text()})
    return _step_messages(shaped, out), False


def _step_messages(shaped: list[dict[str, Any]], out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": None, "tool_calls": shaped}, *out] if shaped else []


def _clip(value: Any) -> str:
    return json.dumps(value, default=str)[:200]
