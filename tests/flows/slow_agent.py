"""A deliberately slow agent for the kill-and-resume test: the reference agent, 0.3 s later."""

from __future__ import annotations

import asyncio

from casemill.evaluation.agents import load_agent

_REFERENCE = load_agent("reference")
version = "1"


async def slow(episode):  # noqa: ANN001, ANN201 - the python adapter's contract
    await asyncio.sleep(0.3)
    return await _REFERENCE.run(episode)


slow.version = version
