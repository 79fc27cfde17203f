"""The agent adapters a spec `PREFIX:REST` names, one `casemill.agents` entry point a prefix.

`load_agent("openai:gpt-4o-mini")` looks `openai` up among the `casemill.agents` entry points
and calls the factory it names with the rest of the spec. Casemill declares `reference`,
`python`, `http`, `https` and `openai` in its own `pyproject.toml`; a package adds a transport
the same way (`grpc = "my_pkg.agents:grpc_agent"` makes `--agent grpc:HOST:PORT` work).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from casemill.errors import UserError
from casemill.settings import Settings

if TYPE_CHECKING:
    from casemill.evaluation.agents.base import Agent


class AgentFactory(Protocol):
    """Makes the agent of a spec. `rest` is what follows `PREFIX:` (the whole spec is `spec`);
    `temperature` is given only to a factory whose `takes_temperature` attribute is true, and
    a factory whose `bare` attribute is true also answers the spec `PREFIX` alone."""

    def __call__(
        self, rest: str, *, spec: str, settings: Settings | None, temperature: float | None
    ) -> Agent: ...


class _Factory:
    """A built-in factory: a function with the two flags `load_agent` reads."""

    def __init__(self, make, *, bare: bool = False, takes_temperature: bool = False):
        self.make = make
        self.bare = bare
        self.takes_temperature = takes_temperature
        self.__doc__ = make.__doc__

    def __call__(
        self, rest: str, *, spec: str, settings: Settings | None, temperature: float | None
    ) -> Agent:
        return self.make(rest, spec=spec, settings=settings, temperature=temperature)


def _reference(rest: str, **_: object) -> Agent:
    """`reference` / `reference:NAME`: the rule-based support agent and its faulty variants."""
    from casemill.evaluation.reference import reference_agent

    return reference_agent(rest or None)


def _python(rest: str, **_: object) -> Agent:
    """`python:package.module:function`: a Python callable (sync or async)."""
    from casemill.evaluation.agents.python_agent import PythonAgent

    return PythonAgent.from_spec(rest)


def _http(rest: str, *, spec: str, settings: Settings | None, **_: object) -> Agent:
    """`http(s)://HOST:PORT/PATH`: an HTTP endpoint speaking `casemill-agent/1`."""
    from urllib.parse import urlsplit

    from casemill.evaluation.agents import spec_help
    from casemill.evaluation.agents.http_agent import HTTPAgent, shown_url

    if not rest.startswith("//"):
        raise UserError(f"unknown agent spec {spec!r}; expected one of: {spec_help()}")
    if not urlsplit(spec).hostname:
        raise UserError(
            f"agent URL {shown_url(spec)!r} names no host; write it as "
            "http://HOST:PORT/PATH (e.g. http://localhost:8000/agent)"
        )
    return HTTPAgent(url=spec, timeout_s=(settings or Settings()).llm_timeout_s)


def _openai(rest: str, *, settings: Settings | None, temperature: float | None, **_) -> Agent:
    """`openai:MODEL`: an OpenAI-compatible model driven by Casemill's tool-calling loop."""
    from casemill.evaluation.agents.openai_agent import OpenAIAgent

    return OpenAIAgent.from_spec(rest, settings, temperature=temperature)


reference = _Factory(_reference, bare=True)
python = _Factory(_python)
http = _Factory(_http)
openai = _Factory(_openai, takes_temperature=True)
