"""`python:package.module:function`: an agent that is a Python callable.

The function receives the `Episode` (`episode.messages`, `episode.tools`,
`episode.call(tool, params)`) and returns the final reply: a string, an `AgentReply`, a
`(reply, messages)` pair or a dict `{"reply": ..., "messages": [...], "usage": {...}}`. It may be
sync (run in its own thread, so a blocking agent never stalls the others) or `async def`.

The fingerprint hashes the spec and the function's version: a `version` attribute on the
function, else the module's `__version__`, else nothing. Set one and bump it when the agent
changes, so that a resumed run does not mix results of two versions of the agent.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from casemill.case.ids import short_hash
from casemill.errors import UserError
from casemill.evaluation.agents.base import AgentError, AgentReply, Episode
from casemill.loading import load_object


def import_callable(target: str) -> Callable[..., Any]:
    """`package.module:function` (or `package.module:Class.method`) to the object."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise UserError(f"python agent {target!r}: expected 'python:package.module:function'")
    if "/" in module_name or "\\" in module_name or module_name.endswith(".py"):
        dotted = module_name.removesuffix(".py").replace("\\", "/").strip("/").replace("/", ".")
        raise UserError(
            f"python agent {target!r}: {module_name!r} is a file path; name the module the way "
            f"Python imports it, with dots (python:{dotted}:{attr}), from the folder that holds "
            "it or with that folder on PYTHONPATH"
        )
    obj = load_object(module_name, attr, f"python agent {target!r}", from_cwd=True)
    if not callable(obj):
        raise UserError(f"python agent {target!r}: {attr!r} is not callable")
    return obj


@dataclass
class PythonAgent:
    fn: Callable[..., Any]
    spec: str = ""

    def __post_init__(self) -> None:
        self.spec = self.spec or f"python:{self.fn.__module__}:{self.fn.__qualname__}"
        self.name = self.spec
        module = inspect.getmodule(self.fn)
        version = getattr(self.fn, "version", None) or getattr(module, "__version__", None) or ""
        self.fingerprint = short_hash(json.dumps({"spec": self.spec, "version": str(version)}))
        call = type(self.fn).__call__ if not inspect.isfunction(self.fn) else None
        self._is_async = inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(call)

    @classmethod
    def from_spec(cls, target: str) -> PythonAgent:
        return cls(fn=import_callable(target), spec=f"python:{target}")

    async def run(self, episode: Episode) -> AgentReply:
        if self._is_async:
            out = await self.fn(episode)
        else:
            out = await episode.in_thread(self.fn, episode)
        return as_reply(out)


def as_reply(out: Any) -> AgentReply:
    """Whatever a Python agent returned, as an `AgentReply`."""
    if isinstance(out, AgentReply):
        return out
    if isinstance(out, str):
        return AgentReply(out)
    if (
        isinstance(out, tuple)
        and len(out) == 2
        and isinstance(out[0], str | None)
        and isinstance(out[1], list)
    ):
        return AgentReply(out[0], list(out[1]))
    if isinstance(out, dict) and isinstance(out.get("reply"), str | None):
        usage = out.get("usage") or {}
        messages = out.get("messages")
        return AgentReply(
            out.get("reply"),
            list(messages) if isinstance(messages, list) else None,
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
        )
    raise AgentError(
        "invalid_reply",
        f"agent returned {type(out).__name__}, not a reply string, (reply, messages), "
        "a dict with a 'reply' or an AgentReply",
    )
