"""Recorded agents: a logged conversation's agent replayed as the agent under test.

`recorded:LOG` (`casemill eval --agent recorded:LOG`) replays, for each case mined from a
conversation of LOG, the logged agent's tool calls and replies against the case's sandbox, so
yesterday's production behaviour is scored against today's labels. It sits above the stages:
it reads logs as mining does and runs as an evaluation agent, and evaluation finds it through the
`casemill.agents` entry point `recorded` (docs/agents.md, "Recorded agents").
"""

from __future__ import annotations

from casemill.recorded.agent import LOG_ERROR, NOT_COVERED, RecordedAgent, recorded
from casemill.recorded.log import LogProblem, RecordedLog
from casemill.recorded.segments import Segment, segment
from casemill.recorded.spec import LogSpec, parse_spec

__all__ = [
    "LOG_ERROR",
    "NOT_COVERED",
    "LogProblem",
    "LogSpec",
    "RecordedAgent",
    "RecordedLog",
    "Segment",
    "parse_spec",
    "recorded",
    "segment",
]
