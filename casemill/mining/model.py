"""The common intermediate shape every log parser produces, and the records mining reports.

`Conversation`, `Message` and `LoggedCall` are plain slotted dataclasses rather than pydantic
models: they live only inside one mining pass and are built millions of times on large logs
(with workers, `casemill.mining.parallel`, they are pickled to the worker that mines them). What mining
hands back (`Quarantined`, the summary) is typed and frozen; a worker hands back each case as a
`PackedCase`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, PrivateAttr

if TYPE_CHECKING:
    from casemill.mining.toolspec import ToolSpecs

Role = Literal["customer", "assistant", "tool", "system"]

# Why a record was set aside; the CLI summary counts quarantined records by these codes.
REASONS = (
    "invalid_utf8",
    "invalid_json",
    "truncated",
    "not_an_object",
    "line_too_long",
    "unreadable",
    "missing_messages",
    "bad_message",
    "unknown_role",
    "orphan_tool_result",
    "bad_tool_arguments",
    "bad_tools",
    "too_many_turns",
    "no_customer_turn",
    "bad_row",
    "bad_span",
    "invalid_case",
    "mining_error",
)


@dataclass(slots=True)
class LoggedCall:
    """One tool call an assistant made, with its result once the log shows it."""

    id: str
    tool: str
    arguments: dict[str, Any]
    result: str | None = None
    error: bool = False  # the result reports an error: the call changed nothing


@dataclass(slots=True)
class Message:
    role: Role
    content: str = ""
    calls: list[LoggedCall] = field(default_factory=list)  # assistant messages only
    call_id: str | None = None  # tool messages: the call this result answers


@dataclass(slots=True)
class Conversation:
    """One logged conversation, parsed; `line` is where it starts in its file."""

    id: str
    messages: list[Message]
    file: str
    line: int
    format: str
    resolved: bool | None = None  # None: the log does not say
    calls_visible: bool = True  # False for transcripts that show only tool results
    total_messages: int = 0  # before capping
    capped: bool = False
    tools: ToolSpecs | None = None  # the agent's tool specs, when the log line carries them
    partial: str | None = None  # why this may be only a part of the logged conversation

    def calls(self) -> list[LoggedCall]:
        return [c for m in self.messages for c in m.calls]

    def content_key(self) -> str:
        """A digest of what was said and done (roles, texts, tool calls with their arguments and
        results), without the conversation's id, file or call ids: the same conversation logged
        twice under two ids has one key."""
        said = [
            [m.role, m.content, [[c.tool, c.arguments, c.result, c.error] for c in m.calls]]
            for m in self.messages
        ]
        blob = orjson.dumps(
            said, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str
        )
        return hashlib.sha256(blob).hexdigest()

    def with_messages(self, messages: list[Message]) -> Conversation:
        """This conversation with other messages: `dataclasses.replace(self, messages=...)`
        without its per-call look-up of the fields."""
        return Conversation(
            self.id,
            messages,
            self.file,
            self.line,
            self.format,
            self.resolved,
            self.calls_visible,
            self.total_messages,
            self.capped,
            self.tools,
            self.partial,
        )


@dataclass(frozen=True, slots=True)
class PackedCase:
    """A mined case as a worker process hands it back: its JSON line and what deduplication and
    the summary read from it, worked out in the worker (cheaper to send than the model)."""

    json: bytes  # the case's JSON, byte for byte what the Case model serialises to
    id: str
    signature: str  # mining.dedup.signature
    text: str  # casemill.dedup.case_text
    kind: str  # the miner's step: decision_point or conversation
    confidence: str
    domain: str

    def case(self) -> Any:
        """The `Case` model again (for deduplication against a corpus)."""
        from casemill.case.model import Case

        return Case.model_validate_json(self.json)


class Quarantined(BaseModel):
    """A record mining set aside: where it is, why, and what to do. Never holds raw content."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    line: int | None
    reason: str
    message: str
    field: str | None = None
    conversation_id: str | None = None
    # the record as read, when the parser had one: redaction collects the personal data it
    # holds to scrub `conversation_id` with (`pipeline._scrubbed`); never written
    _record: Any = PrivateAttr(default=None)

    def with_record(self, record: Any) -> Quarantined:
        self._record = record
        return self

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        at = f" field '{self.field}'" if self.field else ""
        return f"{where}:{at} [{self.reason}] {self.message}"


class RecordProblem(Exception):
    """Raised by a parser for one bad record; the pipeline turns it into `Quarantined`."""

    def __init__(self, reason: str, message: str, field: str | None = None):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.field = field


def is_error_result(text: str | None) -> bool:
    """Whether a tool result reports a failure (so the call changed nothing): text starting
    with `Error`, or a JSON object with a top-level `error` key (the support tools' shape)."""
    if not text:
        return False
    head = text.lstrip()
    if head[:5].lower() == "error":
        return True
    if head.startswith("{") and '"error"' in head[:200]:
        try:
            import orjson

            value = orjson.loads(head)
        except ValueError:
            return False
        return isinstance(value, dict) and bool(value.get("error"))
    return False
