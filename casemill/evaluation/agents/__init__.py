"""Agents under test: one protocol (`Agent`), several transports.

Specs `load_agent` understands:
- `reference` / `reference:NAME`: the built-in rule-based support agent and its faulty variants;
- `python:package.module:function`: a Python callable (sync or async);
- `http://...` / `https://...`: an HTTP endpoint speaking `casemill-agent/1`;
- `openai:MODEL`: an OpenAI-compatible model driven by Casemill's tool-calling loop.
"""

from __future__ import annotations

from typing import Any

from casemill.errors import UserError
from casemill.evaluation.agents.base import (
    AGENT_FAULT_KINDS,
    TRANSIENT_KINDS,
    Agent,
    AgentError,
    AgentInfo,
    AgentReply,
    Episode,
    EpisodeClosed,
    StepLimitReached,
)
from casemill.evaluation.agents.episode import case_messages, new_episode
from casemill.evaluation.agents.retry import RetryPolicy
from casemill.settings import Settings

SPEC_HELP = "reference, reference:NAME, python:package.module:function, http(s)://..., openai:MODEL"


def takes_temperature(spec: str) -> bool:
    """Whether the agent `spec` names takes a sampling temperature from Casemill (`openai:MODEL`
    does; the others choose their own)."""
    return spec.strip().startswith("openai:")


def load_agent(
    spec: str, settings: Settings | None = None, *, temperature: float | None = None
) -> Agent:
    """The agent a spec names; `UserError` with what to write when the spec is not understood.
    `temperature` (None: the default, 0) is the sampling temperature of an `openai:MODEL` agent;
    the other agents choose their own, so giving one to them is an error, not ignored."""
    spec = spec.strip()
    if temperature is not None and not takes_temperature(spec):
        raise UserError(
            f"a temperature ({temperature:g}) is for openai:MODEL agents only; {spec!r} sets its "
            "own (leave --temperature out)"
        )
    if spec == "reference" or spec.startswith("reference:"):
        from casemill.evaluation.reference import reference_agent

        return reference_agent(spec.partition(":")[2] or None)
    if spec.startswith("python:"):
        from casemill.evaluation.agents.python_agent import PythonAgent

        return PythonAgent.from_spec(spec[len("python:") :])
    if spec.startswith(("http://", "https://")):
        from urllib.parse import urlsplit

        from casemill.evaluation.agents.http_agent import HTTPAgent, shown_url

        if not urlsplit(spec).hostname:
            raise UserError(
                f"agent URL {shown_url(spec)!r} names no host; write it as "
                "http://HOST:PORT/PATH (e.g. http://localhost:8000/agent)"
            )

        timeout = (settings or Settings()).llm_timeout_s
        return HTTPAgent(url=spec, timeout_s=timeout)
    if spec.startswith("openai:"):
        from casemill.evaluation.agents.openai_agent import OpenAIAgent

        return OpenAIAgent.from_spec(spec[len("openai:") :], settings, temperature=temperature)
    raise UserError(f"unknown agent spec {spec!r}; expected one of: {SPEC_HELP}")


def agent_settings(agent: Agent) -> dict[str, Any]:
    """What a run records of the agent's configuration (`settings`, e.g. an `openai:` agent's
    model and temperature); empty for agents that have none to tell."""
    return dict(getattr(agent, "settings", None) or {})


def builtin_agents() -> list[AgentInfo]:
    """The reference agent and each faulty variant, with the bug it has."""
    from casemill.evaluation.reference import builtin_infos

    return builtin_infos()


__all__ = [
    "AGENT_FAULT_KINDS",
    "TRANSIENT_KINDS",
    "Agent",
    "AgentError",
    "AgentInfo",
    "AgentReply",
    "Episode",
    "EpisodeClosed",
    "RetryPolicy",
    "StepLimitReached",
    "agent_settings",
    "builtin_agents",
    "case_messages",
    "load_agent",
    "new_episode",
]
