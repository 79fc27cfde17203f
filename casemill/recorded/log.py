"""The logged conversations a recorded agent replays: read as `casemill mine` reads them,
redacted as it redacts them, looked up by the conversation a case was mined from.

The log is parsed once, on the first look-up, with the parser `casemill mine --format` uses
(`casemill.mining.pipeline.parsed`); a conversation is redacted (`redact_conversation`, with the
mine run's seed) when a case first asks for it. Redaction draws its surrogates from the seed and
the conversation's own content, not from the rest of the file, so one conversation redacted on
its own gets the surrogates a whole-file mine run gave it, and its id the same redacted id.

A case names its conversation by `provenance.source.conversation_id` (as mining wrote it:
redacted) and, as a hint, `provenance.source.line` (where the conversation starts in its log).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from casemill.errors import UserError
from casemill.mining.derive import support
from casemill.mining.model import Conversation, Quarantined
from casemill.mining.pipeline import MineOptions, parsed
from casemill.mining.redact.redactor import redact_conversation
from casemill.mining.tally import Tally
from casemill.recorded.spec import LogSpec

log = logging.getLogger(__name__)


class LogProblem(UserError):
    """The log cannot be replayed: a record mining would set aside, no tool calls at all."""


@dataclass(frozen=True)
class Found:
    """A case's logged conversation, redacted as mining redacted it."""

    conversation: Conversation
    raw_id: str  # as the log writes it (shown to the user: the log is theirs)


class RecordedLog:
    """The conversations of one log, parsed once (thread-safe), redacted when first asked for."""

    def __init__(self, spec: LogSpec):
        self.spec = spec
        self._lock = threading.Lock()
        self._conversations: list[Conversation] | None = None
        self._problem: LogProblem | None = None
        self._redacted: dict[int, Conversation] = {}
        self._by_line: dict[int, list[int]] = {}
        self._by_raw_id: dict[str, list[int]] = {}
        self._by_id: dict[str, int] | None = None  # every redacted id, once a look-up needs it

    def __len__(self) -> int:
        return len(self.conversations())

    def conversations(self) -> list[Conversation]:
        """Every conversation of the log, as parsed (not redacted); `LogProblem` when the log
        cannot be replayed (raised again on every call: the log is read once)."""
        with self._lock:
            return self._load()

    def find(self, conversation_id: str, line: int | None = None) -> Found | None:
        """The conversation whose id (redacted as mining did) is `conversation_id`; `line`
        (where it starts in the log) is tried first. None when the log holds no such one."""
        with self._lock:
            self._load()
            tried: set[int] = set()
            hints = [*self._by_line.get(line, []), *self._by_raw_id.get(conversation_id, [])]
            for at in hints:
                if at not in tried and self._id(at) == conversation_id:
                    return self._found(at)
                tried.add(at)
            at = self._index().get(conversation_id)
            return self._found(at) if at is not None else None

    # -- reading -----------------------------------------------------------------------------
    def _load(self) -> list[Conversation]:
        if self._problem is not None:
            raise self._problem
        if self._conversations is None:
            try:
                self._conversations = self._read()
            except LogProblem as exc:
                self._problem = exc
                raise
            for at, conv in enumerate(self._conversations):
                self._by_line.setdefault(conv.line, []).append(at)
                self._by_raw_id.setdefault(conv.id, []).append(at)
            log.info("%s: %d conversations", self.spec.path, len(self._conversations))
        return self._conversations

    def _read(self) -> list[Conversation]:
        spec = self.spec
        if not spec.path.is_file():
            raise LogProblem(f"no such log file: {spec.path}")
        if spec.redact and spec.names_model:
            _check_names_model(spec.names_model)
        options = MineOptions(
            redact=spec.redact, seed=spec.seed, csv_mapping=_mapping(spec), workers=1
        )
        out: list[Conversation] = []
        for _, item in parsed([spec.path], spec.fmt, options, Tally()):
            if isinstance(item, Quarantined):
                raise LogProblem(_quarantined(item, spec))
            out.append(item)
        if not any(m.calls for conv in out for m in conv.messages):
            raise LogProblem(
                f"{spec.path}: no conversation of this {spec.fmt} log holds a tool call: "
                "there is nothing to replay (a recorded agent replays the calls and replies "
                "of a log that shows them)"
            )
        return out

    # -- redaction ---------------------------------------------------------------------------
    def _redact(self, at: int) -> Conversation:
        conv = self._redacted.get(at)
        if conv is None:
            conv = self._conversations[at]  # type: ignore[index]
            if self.spec.redact:
                conv = redact_conversation(
                    conv, self.spec.seed, names_model=self.spec.names_model
                ).conversation
            if support.is_support(conv):  # the calls as the support cases hold them
                conv = support.zips_as_text(conv)
            self._redacted[at] = conv
        return conv

    def _id(self, at: int) -> str:
        return self._redact(at).id

    def _index(self) -> dict[str, int]:
        """Every conversation by its redacted id (the first of a repeated id), redacting all:
        for cases whose line does not lead to their conversation."""
        if self._by_id is None:
            self._by_id = {}
            for at in range(len(self._conversations or ())):
                self._by_id.setdefault(self._id(at), at)
        return self._by_id

    def _found(self, at: int) -> Found:
        return Found(self._redact(at), self._conversations[at].id)  # type: ignore[index]


def _check_names_model(model: str) -> None:
    """The named-entity layer's model loads, or `LogProblem` saying what to install."""
    from casemill.mining.redact.entities import pipeline

    try:
        pipeline(model)
    except UserError as exc:
        raise LogProblem(f"names-model={model}: {exc}") from None


def _mapping(spec: LogSpec):
    if spec.csv_mapping is None:
        return None
    from casemill.mining.stage import load_csv_mapping

    return load_csv_mapping(spec.csv_mapping)


def _quarantined(item: Quarantined, spec: LogSpec) -> str:
    return (
        f"{item} (a recorded agent replays a log that `casemill mine --format {spec.fmt}` "
        "reads without setting a record aside: fix or remove that record)"
    )
