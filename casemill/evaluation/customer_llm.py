"""The customer played by a model (`casemill eval --user-model MODEL`), as tau-bench's user
simulator plays it: the model is told the case's scenario and the customer's facts, sees the
conversation from the customer's side (the agent's replies as the other party's turns), and
answers one customer message at a time, or `###STOP###` when the customer is done.

Any OpenAI-compatible endpoint (`casemill.llm.LLMEndpoint`: `CASEMILL_LLM_BASE_URL` or
`OPENAI_BASE_URL`). Without one, `LLMCustomer.from_settings` raises `EndpointNotConfigured`
with what to set, and the run does not start: nothing is faked. An endpoint that fails after
the client's retries, or answers with nothing, ends the trial with error kind `user_simulator`,
which the runner retries like an agent's transient errors and never counts as a pass.

The model and the prompt's hash land in the run's provenance (`fingerprint`, the summary's agent
settings).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from casemill.case.model import STOP, Case
from casemill.evaluation.agents.base import AgentError
from casemill.evaluation.customer import Said, customer_facts
from casemill.llm import LLMEndpoint, prompt_hash
from casemill.settings import Settings

PROMPT_VERSION = "1"
INSTRUCTIONS = f"""You are a customer talking to a customer-support agent. Play the customer \
described below, one message at a time, in the first person, briefly, as a real customer would.
- Say only what the customer would say; do not invent facts that are not given below: if asked \
for something you do not know, say you do not know it.
- Give a fact only when the agent asks for it or when you need it for your request.
- When the agent asks you to confirm an action that serves your request, confirm it.
- When your request is done, or cannot be done, or you have nothing more to say, answer with \
exactly {STOP} and nothing else."""


class LLMCustomer:
    """A kind of customer that asks `endpoint`'s model what to say."""

    def __init__(self, endpoint: LLMEndpoint):
        self.endpoint = endpoint
        self.name = f"llm:{endpoint.model}"
        self.prompt_hash = prompt_hash([{"role": "system", "content": INSTRUCTIONS}])
        self.fingerprint = f"llm:{endpoint.model}:{PROMPT_VERSION}:{self.prompt_hash}"

    @classmethod
    def from_settings(cls, model: str, settings: Settings | None = None) -> LLMCustomer:
        return cls(LLMEndpoint.from_settings(settings, model=model))

    def session(self, case: Case) -> LLMSession:
        return LLMSession(self.endpoint, system_prompt(case))


def system_prompt(case: Case) -> str:
    """The instructions, the case's scenario (or the customer's own opening turns) and facts."""
    scenario = (case.user_scenario or "").strip() or case.customer_text.strip()
    facts = customer_facts(case)
    parts = [INSTRUCTIONS, f"\nWhat you want (your scenario):\n{scenario or '(not given)'}"]
    if facts:
        parts.append("\nWhat you know about yourself:\n" + json.dumps(facts, indent=1))
    if case.customer is not None and case.customer.script:
        parts.append(
            "\nWhat you said in the original conversation, in order (follow it where it fits):\n"
            + "\n".join(f"- {line}" for line in case.customer.script)
        )
    return "\n".join(parts)


@dataclass
class LLMSession:
    endpoint: LLMEndpoint
    prompt: str

    async def respond(self, reply: str | None, messages: list[dict[str, Any]]) -> Said:
        if not (reply or "").strip():
            return Said(None, "the agent said nothing")
        asked = [{"role": "system", "content": self.prompt}, *_flipped(messages, reply or "")]
        try:
            response = await self.endpoint.async_client.chat.completions.create(
                model=self.endpoint.model, messages=asked, temperature=0.0
            )
            text = (response.choices[0].message.content or "").strip()
        except Exception as exc:  # noqa: BLE001 - the simulator's failure is the trial's error
            raise AgentError(
                "user_simulator", self.endpoint.scrub(f"the user simulator failed: {exc}")
            ) from exc
        if not text:
            raise AgentError("user_simulator", "the user simulator answered with nothing")
        if STOP in text:
            said = text.replace(STOP, "").strip()
            return Said(None, "the simulated customer stopped" + (f": {said}" if said else ""))
        return Said(text)


def _flipped(messages: list[dict[str, Any]], reply: str) -> list[dict[str, Any]]:
    """The conversation as the customer sees it: their turns as `assistant`, the agent's
    customer-facing replies as `user`; system turns, tool calls and results left out."""
    out = []
    for message in messages:
        role, content = message.get("role"), message.get("content")
        if not isinstance(content, str) or not content.strip() or message.get("tool_calls"):
            continue
        if role == "user":
            out.append({"role": "assistant", "content": content})
        elif role == "assistant":
            out.append({"role": "user", "content": content})
    out.append({"role": "user", "content": reply})
    return out
