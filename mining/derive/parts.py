"""The validated parts that the cases of one conversation share.

A conversation's decision points and its conversation-level case hold many of the same turns,
often the same environment and the same expected calls. Each of these parts is validated once
here and the cases hold the same frozen objects, so what is computed from a part (its
canonical JSON, for the content id and the dedup signature) is computed once too. Parts are
keyed by the identity of what they are made from (messages, states, logged calls), which lives
as long as the conversation is being derived.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from pydantic import BaseModel

from casemill.case.model import Environment, ExpectedCall, Turn
from mining.derive.common import turn_data
from mining.model import LoggedCall, Message

M = TypeVar("M", bound=BaseModel)


class SharedParts:
    def __init__(self, expected_call: Callable[[LoggedCall], ExpectedCall]):
        self._expected_call = expected_call
        self._turns: dict[int, Turn] = {}
        self._environments: dict[int, Environment] = {}
        self._calls: dict[int, ExpectedCall] = {}
        self._models: dict[tuple[type, Hashable], Any] = {}

    def turns(self, messages: list[Message]) -> tuple[Turn, ...]:
        out = []
        for m in messages:
            turn = self._turns.get(id(m))
            if turn is None:
                turn = self._turns[id(m)] = Turn.model_validate(turn_data(m))
            out.append(turn)
        return tuple(out)

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

    def model(self, cls: type[M], key: Hashable, data: dict[str, Any]) -> M:
        """`cls` validated from `data`, once for each `key`: for the parts that every case of the
        conversation holds alike (its source, the miner's step for each kind of case)."""
        found = self._models.get((cls, key))
        if found is None:
            found = self._models[(cls, key)] = cls.model_validate(data)
        return found
