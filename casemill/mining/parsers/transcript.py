"""Role-prefixed plain transcripts, where tool calls are not visible, only their results:

    user: Hi, I need to return a lamp.
    assistant: None
    tool: {"order_id": "#W4923227", ...}
    assistant: Your order ...

Two containers are read: JSONL with the transcript in a string field (`messages_display`,
`transcript`, `conversation` or `text`; an id and a resolution flag as in `openai-jsonl`), or
plain text with conversations separated by a line of `---` or `===` (an optional first line
`id: ...` names it). A line that starts with a known role and a colon opens a message; other
lines continue the message before. An assistant message reading `None` is a hidden tool call.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from casemill.mining.model import Conversation, Message, Quarantined, RecordProblem
from casemill.mining.parsers.messages import ROLES
from casemill.mining.parsers.openai_jsonl import record_id, record_resolved
from casemill.mining.reading import Progress, iter_lines, json_objects

TEXT_KEYS = ("messages_display", "transcript", "conversation", "text")
PREFIX = re.compile(
    r"^(user|customer|human|assistant|agent|ai|tool|function|system)\s*:\s?", re.IGNORECASE
)
SEPARATOR = re.compile(r"^\s*(-{3,}|={3,})\s*$")
ID_LINE = re.compile(r"^\s*(?:id|conversation_id)\s*:\s*(\S+)\s*$", re.IGNORECASE)


class TranscriptBuilder:
    """Accumulates transcript lines into messages, keeping at most `max_turns`."""

    def __init__(self, max_turns: int):
        self.max_turns = max_turns
        self.messages: list[Message] = []
        self.total = 0
        self._open: list[str] | None = None
        self._role = ""

    def line(self, text: str) -> None:
        m = PREFIX.match(text)
        if m:
            self._close()
            self.total += 1
            self._role = ROLES[m.group(1).lower()]
            self._open = [text[m.end() :]] if len(self.messages) < self.max_turns else None
        elif self._open is not None:
            self._open.append(text)
        elif self.total == 0 and text.strip():
            raise RecordProblem(
                "unknown_role",
                "the transcript does not start with a role prefix "
                "(user:, assistant:, tool:, system:)",
                "transcript",
            )

    def _close(self) -> None:
        if self._open is None:
            return
        content = "\n".join(self._open).strip()
        if self._role == "assistant" and content == "None":
            content = ""
        self.messages.append(Message(self._role, content))  # type: ignore[arg-type]
        self._open = None

    def conversation(
        self, conv_id: str, file: str, line: int, resolved: bool | None
    ) -> Conversation:
        self._close()
        return Conversation(
            id=conv_id,
            messages=self.messages,
            file=file,
            line=line,
            format="transcript",
            resolved=resolved,
            calls_visible=False,
            total_messages=self.total,
            capped=self.total > len(self.messages),
        )


def parse(
    path: Path, *, max_turns: int, progress: Progress | None = None, **_: Any
) -> Iterator[Conversation | Quarantined]:
    lines = iter_lines(path, progress)
    first = next(lines, None)
    if first is None:
        return
    if first.data.lstrip().startswith(b"{"):
        yield from _jsonl(path, first, lines, max_turns)
    else:
        yield from _plain(path, first, lines, max_turns)


def _jsonl(path: Path, first, lines, max_turns: int) -> Iterator[Conversation | Quarantined]:
    file = str(path)
    for item in json_objects(file, _chain(first, lines)):
        if isinstance(item, Quarantined):
            yield item
            continue
        number, record = item
        conv_id = record_id(record, path, number)
        key = next((k for k in TEXT_KEYS if isinstance(record.get(k), str)), None)
        if key is None:
            yield Quarantined(
                file=file,
                line=number,
                reason="missing_messages",
                message=f"no transcript field ({', '.join(TEXT_KEYS)})",
                conversation_id=conv_id,
            )
            continue
        builder = TranscriptBuilder(max_turns)
        try:
            for part in record[key].split("\n"):
                builder.line(part)
        except RecordProblem as p:
            yield Quarantined(
                file=file,
                line=number,
                reason=p.reason,
                message=p.message,
                field=key,  # the line's own key, whichever it is
                conversation_id=conv_id,
            )
            continue
        yield builder.conversation(conv_id, file, number, record_resolved(record))


def _chain(first, rest):
    yield first
    yield from rest


def _plain(path: Path, first, lines, max_turns: int) -> Iterator[Conversation | Quarantined]:
    file = str(path)
    builder, start, conv_id, failed = TranscriptBuilder(max_turns), first.number, None, None
    for raw in _chain(first, lines):
        if raw.too_long:  # only its first bytes were kept: the conversation is not mined
            failed = failed or (
                "line_too_long",
                f"line {raw.number} is over the 16 MiB limit; the conversation is skipped",
            )
            continue
        try:
            text = raw.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            failed = failed or (
                "invalid_utf8",
                f"invalid UTF-8 at byte {exc.start} of line {raw.number}",
            )
            continue
        if SEPARATOR.match(text):
            yield from _emit(builder, conv_id or f"{path.stem}:{start}", file, start, failed)
            builder, start, conv_id, failed = (
                TranscriptBuilder(max_turns),
                raw.number + 1,
                None,
                None,
            )
            continue
        if builder.total == 0 and conv_id is None and ID_LINE.match(text):
            conv_id = ID_LINE.match(text).group(1)
            continue
        if failed is None:
            try:
                builder.line(text)
            except RecordProblem as p:
                failed = (p.reason, p.message)
    yield from _emit(builder, conv_id or f"{path.stem}:{start}", file, start, failed)


def _emit(
    builder: TranscriptBuilder, conv_id: str, file: str, line: int, failed: tuple[str, str] | None
) -> Iterator[Conversation | Quarantined]:
    if failed is not None:
        yield Quarantined(
            file=file, line=line, reason=failed[0], message=failed[1], conversation_id=conv_id
        )
    elif builder.total:
        yield builder.conversation(conv_id, file, line, None)
