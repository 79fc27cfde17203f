"""The one way Casemill talks to an LLM: the `openai` client against any OpenAI-compatible
endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

Nothing here runs at import time. `LLMEndpoint.from_settings` says plainly when no endpoint is
configured (`EndpointNotConfigured`); callers skip their LLM-backed work with that message.
`chat_json` asks for a JSON object, validates it with a pydantic model, and retries a bounded
number of times on transport errors (timeouts, 429 honouring Retry-After, 5xx: the SDK's own
backoff) and on malformed replies; the raw reply of a rejected answer travels in the exception,
never to a log. The API key is a `SecretStr` and never appears in logs, reprs or provenance.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, SecretStr, ValidationError

from casemill.case.ids import short_hash
from casemill.errors import CasemillError, EndpointNotConfigured
from casemill.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

NOT_CONFIGURED = (
    "no OpenAI-compatible endpoint is configured: set CASEMILL_LLM_BASE_URL (or OPENAI_BASE_URL), "
    "CASEMILL_LLM_MODEL and, if the endpoint needs one, CASEMILL_LLM_API_KEY (or OPENAI_API_KEY)"
)
# the same, for a caller that names its model (`--agent openai:MODEL`): no CASEMILL_LLM_MODEL
NOT_CONFIGURED_FOR_MODEL = (
    "no OpenAI-compatible endpoint is configured for model {model!r}: set CASEMILL_LLM_BASE_URL "
    "(or OPENAI_BASE_URL) and, if the endpoint needs one, CASEMILL_LLM_API_KEY (or OPENAI_API_KEY)"
)


def _closed_with_loop(client: Any) -> Any:
    """An async generator, started here and parked at its `yield`, whose `finally` closes
    `client`: starting it registers it with the running loop, whose `shutdown_asyncgens()` (run
    by `asyncio.run` before it closes the loop) finalises it. The loop holds it weakly: the
    caller keeps the returned generator alive as long as the client."""

    async def closer() -> Any:
        try:
            yield
        finally:
            await client.close()

    generator = closer()
    step = generator.__anext__()  # the loop's first-iteration hook registers the generator
    with contextlib.suppress(StopIteration):
        step.send(None)  # runs to the bare `yield` without suspending
    return generator


def prompt_hash(messages: list[dict[str, Any]]) -> str:
    """The hash of a prompt that provenance and rejects record."""
    return short_hash(json.dumps(messages, sort_keys=True))


def masked(text: str, secrets: Iterable[str]) -> str:
    """`text` with each secret in it as `***` (secrets shorter than 4 characters, which would
    mask ordinary text, are left: no real key is that short)."""
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


class LLMReplyError(CasemillError):
    """The endpoint answered, but not with what was asked for, after every retry."""

    def __init__(self, message: str, raw: str | None = None):
        super().__init__(message)
        self.raw = raw


@dataclass
class LLMEndpoint:
    base_url: str
    model: str
    api_key: SecretStr | None = None
    timeout_s: float = 60.0
    max_retries: int = 3
    _client: Any = field(default=None, repr=False)
    # event loop -> (AsyncOpenAI, its closer); not copied by `dataclasses.replace`
    _async_clients: Any = field(default_factory=weakref.WeakKeyDictionary, init=False, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings | None = None, model: str = "") -> LLMEndpoint:
        """The endpoint of `settings`; `model`, when given, is the model to use (the settings'
        model is then not needed)."""
        settings = settings or Settings()
        base, configured, key = settings.resolved_llm()
        if not base or not (model or configured):
            named = NOT_CONFIGURED_FOR_MODEL.format(model=model) if model else ""
            raise EndpointNotConfigured(named or NOT_CONFIGURED)
        model = model or configured or ""
        return cls(
            base_url=base,
            model=model,
            api_key=key,
            timeout_s=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
        )

    def scrub(self, text: str) -> str:
        """`text` with the API key masked: some servers quote the key they were sent in an
        error message, and error messages land in trajectories, reports and logs."""
        return masked(text, [self.api_key.get_secret_value() if self.api_key else ""])

    @property
    def client(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(
                base_url=self.base_url,
                api_key=self.api_key.get_secret_value() if self.api_key else "not-needed",
                timeout=self.timeout_s,
                max_retries=self.max_retries,
            )
        return self._client

    @property
    def async_client(self) -> Any:
        """An `openai.AsyncOpenAI` with the same settings as `client`, one per running event
        loop: an async client's connections belong to the loop they were opened on, so a client
        is never shared across `asyncio.run` calls. Its transport is the SDK's aiohttp one
        (`openai[aiohttp]`, `DefaultAioHttpClient`), which the SDK recommends for concurrency: it
        costs about a third less CPU a request than the default httpx2 transport, which is what
        bounds a run at high concurrency. Must be read inside a running loop; the
        client is closed when that loop shuts down its async generators (as `asyncio.run` does
        before it returns), so no connection outlives its loop."""
        loop = asyncio.get_running_loop()
        entry = self._async_clients.get(loop)
        if entry is None:
            from openai import AsyncOpenAI, DefaultAioHttpClient

            for old in [old for old in self._async_clients if old.is_closed()]:
                del self._async_clients[old]
            client = AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key.get_secret_value() if self.api_key else "not-needed",
                timeout=self.timeout_s,
                max_retries=self.max_retries,
                http_client=DefaultAioHttpClient(timeout=self.timeout_s),
            )
            entry = self._async_clients[loop] = (client, _closed_with_loop(client))
        return entry[0]

    def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        """One chat completion (the SDK retries transport errors with backoff)."""
        return self.client.chat.completions.create(model=self.model, messages=messages, **kwargs)

    def chat_json(
        self,
        messages: list[dict[str, Any]],
        schema: type[T],
        *,
        attempts: int = 3,
        temperature: float = 0.0,
    ) -> tuple[T, str]:
        """Ask for a JSON object matching `schema`; returns it with the prompt hash.

        A reply that is not JSON or does not fit the schema is asked again, up to `attempts`
        times; then `LLMReplyError` carries the reason and the last raw reply."""
        hashed = prompt_hash(messages)
        last_raw, reason = None, ""
        for _ in range(attempts):
            response = self.chat(
                messages, temperature=temperature, response_format={"type": "json_object"}
            )
            # scrubbed: a server may echo the key it was sent into the reply, and what the reply
            # says lands in cases, rejects and logs
            raw = (response.choices[0].message.content or "") if response.choices else ""
            last_raw = self.scrub(raw)
            try:
                return schema.model_validate(json.loads(last_raw)), hashed
            except json.JSONDecodeError as exc:
                reason = f"reply is not JSON ({exc.msg})"
            except ValidationError as exc:
                reason = f"reply does not fit {schema.__name__}: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}"
            log.info("LLM reply rejected (%s); asking again", reason)
        raise LLMReplyError(f"{self.model}: {reason} after {attempts} attempts", raw=last_raw)
