"""The validated parts that the cases of one conversation share.

A conversation's decision points and its conversation-level case hold many of the same turns,
often the same environment and the same expected calls. Each of these parts is validated once
here and the cases hold the same frozen objects, so what is computed from a part (its
canonical JSON, for the content id and the dedup signature) is computed once too. Parts are
keyed by the identity of what they are made from (messages, states, logged calls), which lives
as long as the conversation is being derived.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from casemill.case.model import Environment, ExpectedCall, SourceRef, Turn
from casemill.mining.derive.common import turn_data
from casemill.mining.model import Conversation, LoggedCall, Message

M = TypeVar("M", bound=BaseModel)
_TURNS = TypeAdapter(list[Turn])


class SharedParts:
    def __init__(self, expected_call: Callable[[LoggedCall], ExpectedCall]):
        self._expected_call = expected_call
        self._turns: dict[int, Turn] = {}
        self._environments: dict[int, Environment] = {}
        self._calls: dict[int, ExpectedCall] = {}
        self._source: SourceRef | None = None

    def turns(self, messages: list[Message]) -> tuple[Turn, ...]:
        known = self._turns
        new = list({id(m): m for m in messages if id(m) not in known}.values())
        if new:
            try:  # one validation call for the new turns
                made = _TURNS.validate_python([turn_data(m) for m in new])
            except ValidationError:  # the first bad turn's error, as validated on its own
                made = [Turn.model_validate(turn_data(m)) for m in new]
            for m, turn in zip(new, made, strict=True):
                known[id(m)] = turn
        return tuple([known[id(m)] for m in messages])

    def environment(self, state: dict[str, Any]) -> Environment:
        env = self._environments.get(id(state))
        if env is None:
            env = self._environments[id(state)] = Environment.model_validate({"state": state})
        return env

    def calls(self, writes: list[LoggedCall]) -> tuple[ExpectedCall, ...]:
        out = []
        for c in writes:
            call = self._calls.get(id(c))
            if call is None:
                call = self._calls[id(c)] = self._expected_call(c)
            out.append(call)
        return tuple(out)

    def source(self, conv: Conversation) -> SourceRef:
        """Where the conversation is in its log: the same for all its cases, validated once."""
        if self._source is None:
            self._source = SourceRef.model_validate(
                {
                    "file": portable(conv.file, os.getcwd()),
                    "line": conv.line,
                    "format": conv.format,
                    "conversation_id": conv.id,
                }
            )
        return self._source

    @staticmethod
    def lasting(cls: type[M], key: Hashable, data: dict[str, Any]) -> M:
        """`cls` validated from `data`, once for each `key` in the process: for the parts that
        cases of every conversation may hold alike (the review status, the miner's step for
        each kind of case and log format); `key` must determine `data`."""
        found = _LASTING.get((cls, key))
        if found is None:
            if len(_LASTING) >= _LASTING_MAX:
                _LASTING.clear()
            found = _LASTING[(cls, key)] = cls.model_validate(data)
        return found


_LASTING: dict[tuple[type, Hashable], Any] = {}
_LASTING_MAX = 256


@lru_cache(maxsize=256)
def portable(file: str, cwd: str) -> str:
    """A log's path as a case records it: relative to the working folder `cwd` when the log is
    in it (`samples/support_logs.jsonl`, not the machine's `/home/ana/casemill/samples/...`,
    which would differ in the corpus from machine to machine), else as given."""
    path = Path(file)
    if not path.is_absolute():
        return file
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return file
