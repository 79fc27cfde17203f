"""Agents under test: one protocol (`Agent`), several transports.

Specs `load_agent` understands:
- `reference` / `reference:NAME`: the built-in rule-based support agent and its faulty variants;
- `python:package.module:function`: a Python callable (sync or async);
- `http://...` / `https://...`: an HTTP endpoint speaking `casemill-agent/1`;
- `openai:MODEL`: an OpenAI-compatible model driven by Casemill's tool-calling loop;
- `recorded:LOG`: a logged conversation's agent replayed for the cases mined from it
  (`casemill.recorded`);
- `NAME:...`: a transport an installed package declares under the `casemill.agents` entry
  points (docs/agents.md).
"""

from __future__ import annotations

from typing import Any

from casemill import plugins
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

PLUGIN_KIND = "agent"
SPEC_HELP = (
    "reference, reference:NAME, python:package.module:function, http(s)://..., openai:MODEL, "
    "recorded:LOG"
)


def takes_temperature(spec: str) -> bool:
    """Whether the agent `spec` names takes a sampling temperature from Casemill (`openai:MODEL`
    does; the others choose their own)."""
    prefix, sep, _ = spec.strip().partition(":")
    factory = plugins.find(PLUGIN_KIND, prefix) if sep else None
    return bool(getattr(factory, "takes_temperature", False))


def load_agent(
    spec: str, settings: Settings | None = None, *, temperature: float | None = None
) -> Agent:
    """The agent a spec names; `UserError` with what to write when the spec is not understood.
    `temperature` (None: the default, 0) is the sampling temperature of an `openai:MODEL` agent;
    the other agents choose their own, so giving one to them is an error, not ignored.

    The spec's prefix (before the first `:`) names a `casemill.agents` entry point, whose
    factory makes the agent from the rest (`casemill.evaluation.agents.factories`)."""
    spec = spec.strip()
    if temperature is not None and not takes_temperature(spec):
        raise UserError(
            f"a temperature ({temperature:g}) is for openai:MODEL agents only; {spec!r} sets its "
            "own (leave --temperature out)"
        )
    prefix, sep, rest = spec.partition(":")
    factory = plugins.find(PLUGIN_KIND, prefix) if prefix else None
    if factory is None or not (sep or getattr(factory, "bare", False)):
        raise UserError(f"unknown agent spec {spec!r}; expected one of: {spec_help()}")
    return factory(rest, spec=spec, settings=settings, temperature=temperature)


def spec_help() -> str:
    """The specs `load_agent` understands: the built-in ones, then `NAME:...` for each prefix
    an installed package adds."""
    return ", ".join([SPEC_HELP, *(f"{n}:..." for n in plugins.added(PLUGIN_KIND))])


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
