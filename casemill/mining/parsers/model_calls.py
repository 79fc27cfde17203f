"""Logs of model calls, one a line, joined into the conversations they belong to.

What gateways and call loggers write is one line a model call: the request's whole history and
the model's answer, as LiteLLM's standard logging payload has them,

    {"id": "...", "messages": [...], "response": {"choices": [{"message": {...}}]}, ...}

or a proxy's request and response (`{"request": {"messages": [...]}, "response": {...}}`, as
Helicone's export has them in `request_body` and `response_body`, OpenPipe's in `input` and
`output`).
An agent's conversation is several such lines: each call's history is the last call's history,
its answer, and what came after (tool results, the customer's next words). Mined a line at a
time, every call would be a conversation of its own, each a prefix of the next, the last
without the agent's final answer.

`CallJoiner` joins them back: a line whose history begins with an open conversation's latest
history and answer continues it, and the conversation is its last call's history plus that
call's answer (each history holds everything before it). Calls may interleave, as concurrent
customers' do. Two conversations that open alike (the same system prompt, greeting and answer)
stay apart: each continuation takes the conversation of its session id if the calls give one,
else the one that reached that point first, never one of another session. A call with no answer
(a failed call) leaves its conversation at its history, so its retry continues it; a call made
again from the last call's history (a retry, a regeneration, a line logged twice) takes the last
call's place. System messages are left out of the comparison: an agent may put the time or
retrieved context in its prompt, new at every call. A conversation no call has continued for
`WINDOW` lines is finished and handed on (the files of a run are read as one, so a conversation
a rotated log split goes on in the next file); one whose history was trimmed (by an agent that
keeps its context short) comes out in parts.

The line's id, resolution flag and tool specs are read as on any OpenAI JSONL line: the
conversation takes its first call's id and line, and its last call's flag and specs.
"""

from __future__ import annotations

import hashlib
import zlib
from collections import OrderedDict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from casemill.mining.parsers.messages import as_text
from casemill.mining.reading import iter_lines, json_objects

WINDOW = 2000  # lines: a conversation none of whose calls came in as many is finished
# where a line keeps a call's request and response: LiteLLM's payload (the request's messages
# on the line), a proxy's, Helicone's export, OpenPipe's export
CALL_FIELDS = (
    ("", "response"),
    ("request", "response"),
    ("request_body", "response_body"),
    ("input", "output"),
)
# what only a model's response holds (a conversation's line may have a `response` of its own)
RESPONSE_KEYS = frozenset({"choices", "output", "role", "error", "object"})
# what may name a call's conversation (on the line, in its `metadata`, Helicone's custom
# `request_properties` or OpenPipe's `tags`): the same on all its calls when the logger knows it
SESSION_KEYS = ("conversation_id", "session_id", "thread_id", "trace_id", "Helicone-Session-Id")
PER_CALL_KEYS = frozenset({"trace_id"})  # may be new on every call (LiteLLM's, with no session)
SESSION_PLACES = ("metadata", "request_properties", "tags")


@dataclass(frozen=True, slots=True)
class Call:
    """Where a model-call line keeps its call: the request (its `messages`, maybe its `tools`)
    and the response, and the fields that hold them (`request_at` ends in a dot, or is empty for
    a request on the line itself)."""

    request: dict[str, Any]
    response: Any
    request_at: str
    response_at: str


def _response_like(value: Any) -> bool:
    """A model's response as loggers keep it: a completion, Responses API output or an
    Anthropic message; or none, an error, a text (a failed or streamed call's)."""
    if value is None or isinstance(value, str):
        return True
    return isinstance(value, dict) and (not value or not RESPONSE_KEYS.isdisjoint(value))


def call_of(record: dict[str, Any]) -> Call | None:
    """The call a line logs, by the first of `CALL_FIELDS` it holds (a request with a
    `messages` list beside a response); None when it logs none, so it is a conversation."""
    for request_key, response_key in CALL_FIELDS:
        if response_key not in record or not _response_like(record[response_key]):
            continue
        request = record.get(request_key) if request_key else record
        if isinstance(request, dict) and isinstance(request.get("messages"), list):
            at = f"{request_key}." if request_key else ""
            return Call(request, record[response_key], at, response_key)
    return None


def holds_calls(path: str | Path, records: int = 20, lines: int = 1000) -> bool:
    """Whether the file logs model calls (a gateway's log, whose conversations may go on in
    the next file): one of its first `records` records that hold messages is a call. Other
    lines (a health check, a line that is not JSON) are passed over, within the first `lines`;
    a file that cannot be read holds none."""
    chats = 0
    try:
        for item in islice(json_objects(str(path), iter_lines(path)), lines):
            if not isinstance(item, tuple):
                continue
            if call_of(item[1]) is not None:
                return True
            chats += isinstance(item[1].get("messages"), list)
            if chats >= records:
                break
    except (EOFError, OSError, zlib.error):
        pass
    return False


def answer_of(response: Any) -> list[Any]:
    """The messages of a call's answer: a chat completion's first choice, the output items of
    a Responses API response, an Anthropic message; none when the call failed (a text in its
    place is an error's or a stream's, not the answer)."""
    if not isinstance(response, dict):
        return []
    choices = response.get("choices")
    if isinstance(choices, list):
        first = choices[0] if choices else None
        message = first.get("message") if isinstance(first, dict) else None
        return [message] if isinstance(message, dict) else []
    output = response.get("output")
    if isinstance(output, list):
        return [item for item in output if isinstance(item, dict)]
    if response.get("role") == "assistant":
        return [response]
    return []


def _session(record: dict[str, Any]) -> Any:
    """The first of `SESSION_KEYS` the call's line (or one of its `SESSION_PLACES`) gives."""
    places = [record, *(record.get(k) for k in SESSION_PLACES)]
    for place in places:
        if not isinstance(place, dict):
            continue
        for key in SESSION_KEYS:
            value = place.get(key)
            if isinstance(value, str | int) and str(value):
                return key, str(value)
    return None


def shared_id(joined: Joined) -> str | None:
    """The id that the first and the last call of a conversation of several both give (one
    a call, such as a fresh `trace_id` for each, names no conversation)."""
    if joined.calls < 2:
        return None
    first, last = _session(joined.first), _session(joined.last)
    return first[1] if first is not None and first == last else None


def _arguments(raw: Any) -> Any:
    """Arguments as the same text however the log wrote them (a JSON string, an object)."""
    if isinstance(raw, str):
        try:
            raw = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw
    try:
        return orjson.dumps(raw, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return repr(raw)


def _calls(m: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    calls = m.get("tool_calls")
    out = []
    for tc in calls if isinstance(calls, list) else []:
        fn = tc.get("function") if isinstance(tc, dict) else None
        if isinstance(fn, dict):
            out.append((tc.get("id"), fn.get("name"), _arguments(fn.get("arguments"))))
    return out


def _content(value: Any) -> Any:
    """Content as the same value however a client sent it back: text parts as their text,
    other blocks (Anthropic's tool_use, tool_result) with their keys in order."""
    if not isinstance(value, list):
        return as_text(value)
    out = []
    for part in value:
        text = part.get("text") if isinstance(part, dict) else part
        if isinstance(text, str):
            out.append(text)
        else:
            out.append(orjson.dumps(part, option=orjson.OPT_SORT_KEYS, default=repr).decode())
    return out


def fingerprint(m: Any) -> bytes:
    """What of a message must match for two calls to share it: its role, its words, its tool
    calls (id, name, arguments) and the call a result answers. Keys a gateway adds or drops on
    the way back (`refusal: null`, `annotations`, a null `content` for an empty one) do not
    count."""
    if not isinstance(m, dict):
        return orjson.dumps(_content(m))
    role = m.get("role", m.get("type"))
    if m.get("type") in ("function_call", "function_call_output"):  # Responses API items
        key: tuple = (m["type"], m.get("call_id"), m.get("name"), _arguments(m.get("arguments")))
        key += (_content(m.get("output")),)
    else:
        key = (role, _content(m.get("content")), _calls(m), m.get("tool_call_id"), m.get("name"))
    return orjson.dumps(key, default=repr)


def _said_by_system(m: Any) -> bool:
    return isinstance(m, dict) and m.get("role") in ("system", "developer")


def _chain(previous: bytes, m: Any) -> bytes:
    return hashlib.blake2b(previous + fingerprint(m), digest_size=16).digest()


@dataclass(slots=True)
class Joined:
    """One conversation as its calls have given it so far."""

    first_file: str
    first_line: int
    first: dict[str, Any]  # the first call's line: the conversation's id
    last: dict[str, Any]  # the latest call's line: its flag, its specs
    call: Call  # the latest call, as `call_of` found it on that line
    messages: list[Any]  # the latest call's history and answer
    last_file: str
    last_line: int
    last_at: int  # where the latest call's line is in the run's lines (its files one after another)
    asked: bytes = b""  # the key of the latest call's history: a call made again has it
    state: bytes = b""  # the key of `messages`, which the next call's history begins with
    calls: int = 1


@dataclass
class CallJoiner:
    """Joins model-call lines (`add`) into conversations, handed back as they finish."""

    window: int = WINDOW
    file: str = ""  # the file being read
    _before: int = 0  # the lines of the run's files before it
    _line: int = 0  # the last line read of it
    _open: OrderedDict[int, Joined] = field(default_factory=OrderedDict)  # by last line
    _at: dict[bytes, deque[int]] = field(default_factory=dict)  # a state: who reached it
    _asked: dict[bytes, deque[int]] = field(default_factory=dict)  # a history: who asked it
    _ids: int = 0
    taken: int = 0  # the call lines taken

    def begin(self, file: str) -> None:
        """Go on with the run's next file (a rotated log's next part): its lines come after
        the last file's, and a conversation open at its end may go on in it."""
        self._before += self._line
        self.file, self._line = file, 0

    def add(self, line: int, record: dict[str, Any], call: Call) -> list[Joined]:
        """Take one call's line (`call`, as `call_of` found it) of the file being read; give
        back the conversations that no call has continued for `window` lines before it."""
        self._line, self.taken = line, self.taken + 1
        at = self._before + line
        finished = self._finished(at)
        history = call.request["messages"]
        keys, key = [], b""
        for m in history:
            if not _said_by_system(m):  # (a prompt may change from call to call: a clock)
                key = _chain(key, m)
                keys.append(key)
        asked, slot = key, None
        if (waiting := self._asked.get(asked)) is not None:  # the last call, made again
            slot = self._pick(waiting, record, again=True)
        if slot is None:
            slot = self._continued(keys, record)
        answer = answer_of(call.response)
        for m in answer:
            key = _chain(key, m)
        joined = self._open.pop(slot) if slot is not None else None
        if joined is None:
            self._ids += 1
            slot = self._ids
            joined = Joined(
                first_file=self.file,
                first_line=line,
                first=record,
                last=record,
                call=call,
                messages=[],
                last_file=self.file,
                last_line=line,
                last_at=at,
            )
        else:
            self._leave(slot, joined)
            joined.calls += 1
        joined.last, joined.call, joined.messages = record, call, [*history, *answer]
        joined.last_file, joined.last_line, joined.last_at = self.file, line, at
        joined.asked, joined.state = asked, key
        self._open[slot] = joined
        self._asked.setdefault(asked, deque()).append(slot)
        self._at.setdefault(key, deque()).append(slot)
        return finished

    def _continued(self, keys: list[bytes], record: dict[str, Any]) -> int | None:
        """The conversation the call goes on with: of those that reached a prefix of its
        history (`keys`, the prefixes'), the longest one's (`_pick`)."""
        for prefix in reversed(keys):
            waiting = self._at.get(prefix)
            if waiting is not None and (slot := self._pick(waiting, record)) is not None:
                return slot
        return None

    def _pick(self, waiting: deque[int], record: dict[str, Any], again: bool = False) -> int | None:
        """Of the conversations that reached the history, the one of the line's session, else
        the first to reach it that is of no other session. A call made `again` (its history
        matches, not only begins with, the conversation's) is weaker evidence: it takes no
        conversation whose line names another id at all (a fresh `trace_id` a call too)."""
        session = _session(record)
        free = None
        for slot in waiting:
            joined = self._open[slot]
            theirs = _session(joined.last)
            if session is not None and theirs == session:
                return slot
            if free is None and not _apart(session, theirs, joined, again):
                free = slot
        return free

    def finish(self) -> Iterator[Joined]:
        """The conversations still open, at the end of the input."""
        while self._open:
            _, joined = self._open.popitem(last=False)
            yield joined
        self._at.clear()
        self._asked.clear()

    def _finished(self, at: int) -> list[Joined]:
        out = []
        while self._open:
            slot, joined = next(iter(self._open.items()))
            if at - joined.last_at <= self.window:
                break
            del self._open[slot]
            self._leave(slot, joined)
            out.append(joined)
        return out

    def _leave(self, slot: int, joined: Joined) -> None:
        for index, key in ((self._asked, joined.asked), (self._at, joined.state)):
            waiting = index[key]
            waiting.remove(slot)
            if not waiting:
                del index[key]


def _apart(ours: Any, theirs: Any, joined: Joined, strict: bool) -> bool:
    """Whether a call of session `ours` is of another conversation than `joined` (of
    `theirs`): both name one, and differently, by a key that names a conversation, not only a
    call (a `trace_id` does once the conversation's calls have shared it), or by any key when
    `strict`."""
    if ours is None or theirs is None or ours == theirs:
        return False
    return strict or theirs[0] not in PER_CALL_KEYS or shared_id(joined) is not None
