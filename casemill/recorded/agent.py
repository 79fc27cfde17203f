"""`recorded:LOG`: a logged conversation's agent, replayed as the agent under test.

For each case linked to a conversation of the log (`provenance.source.conversation_id`, as
mining writes it), the agent makes the logged agent's tool calls again, in order, through the
episode's sandbox (the sandbox answers them; the logged results are not used) and replies with
the logged agent's last text of that turn (`casemill.recorded.segments`). A case the log holds
no conversation for ends with error kind `not_covered`: scoring counts it apart, neither passed
nor failed. A log that cannot be replayed (a record mining would set aside, a case's opening
that is not the log's as redacted with the spec's seed) ends the case with `recorded_log`.

    >>> from casemill.evaluation.agents import load_agent
    >>> agent = load_agent("recorded:logs/support.jsonl?seed=3")  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from casemill.case.ids import short_hash
from casemill.case.model import Case
from casemill.errors import UserError
from casemill.evaluation.agents import AgentError, AgentReply, Episode
from casemill.evaluation.trajectory import NOT_COVERED as TRAJECTORY_NOT_COVERED
from casemill.recorded.log import Found, LogProblem, RecordedLog
from casemill.recorded.segments import opening_differs, segment
from casemill.recorded.spec import LogSpec, parse_spec
from casemill.settings import Settings

VERSION = "1"  # bump when the replay changes what a recorded agent does
NOT_COVERED = TRAJECTORY_NOT_COVERED  # re-exported
LOG_ERROR = "recorded_log"


class RecordedAgent:
    """The agent of one log; the log is parsed once, on the first case, for every case (and
    for every agent of the same log and options in the process: the evaluate flow loads the
    agent once a batch)."""

    def __init__(self, spec: LogSpec, name: str | None = None):
        if not spec.path.is_file():
            raise UserError(f"recorded agent: no such log file: {spec.path}")
        self.spec = spec
        self.name = name or _name(spec)
        digest = _digest(spec.path)
        self.log = _shared_log(spec, digest)
        self.settings: dict[str, Any] = {
            "log": str(spec.path),
            "format": spec.fmt,
            "seed": spec.seed,
            "redact": spec.redact,
            **({"names_model": spec.names_model} if spec.names_model else {}),
        }
        self.fingerprint = short_hash(
            json.dumps({"recorded": VERSION, **self.settings, "digest": digest})
        )

    async def run(self, episode: Episode) -> AgentReply:
        if episode.case is None:
            raise AgentError(NOT_COVERED, "the episode names no case: nothing links it to a log")
        found = await asyncio.to_thread(self.conversation_of, episode.case)
        part = segment(found.conversation, episode.case, episode.turn)
        for call in part.calls:
            episode.call(call.tool, dict(call.arguments))
        return AgentReply(part.reply)

    def conversation_of(self, case: Case) -> Found:
        """The case's logged conversation, redacted; `AgentError` `not_covered` when the log
        holds none, `recorded_log` when the log cannot be replayed for it."""
        source = case.provenance.source
        wanted = source.conversation_id if source is not None else None
        if not wanted:
            raise AgentError(
                NOT_COVERED,
                f"case {case.id} names no logged conversation "
                "(provenance.source.conversation_id): not covered by the recorded agent",
            )
        try:
            found = self.log.find(wanted, source.line if source is not None else None)
        except LogProblem as exc:
            raise AgentError(LOG_ERROR, str(exc)) from None
        if found is None:
            raise AgentError(
                NOT_COVERED,
                f"{self.spec.path} holds no conversation {wanted!r} (case {case.id}): "
                "not covered by the recorded agent",
            )
        where = opening_differs(found.conversation, case)
        if where is not None:
            raise AgentError(LOG_ERROR, self._mismatch(case, found, where))
        return found

    def _mismatch(self, case: Case, found: Found, where: str) -> str:
        as_read = f"redacted with seed {self.spec.seed}" if self.spec.redact else "not redacted"
        return (
            f"case {case.id}: its {where} is not that of the logged conversation "
            f"{found.raw_id!r} as read ({as_read}): were the cases mined with another --seed "
            "or with --no-redact? Say so in the spec: recorded:LOG?seed=N, recorded:LOG?redact=off"
        )


def _name(spec: LogSpec) -> str:
    options = spec.options
    return f"recorded:{spec.path}" + (f"?{options}" if options else "")


@lru_cache(maxsize=2)
def _shared_log(spec: LogSpec, digest: str) -> RecordedLog:
    """The log of `spec` as its content `digest` is, parsed once for the agents that share it."""
    return RecordedLog(spec)


def _digest(path: Path) -> str:
    """The log's content hash: a changed log is another agent (its results are not mixed)."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def recorded(
    rest: str, *, spec: str, settings: Settings | None = None, temperature: float | None = None
) -> RecordedAgent:
    """`recorded:LOG[?seed=N&redact=off&format=F]`: the agent of a logged conversation,
    replayed for the cases mined from it."""
    return RecordedAgent(parse_spec(rest))
