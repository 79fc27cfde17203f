"""One multi-turn episode: the agent's turns and the simulated customer's, in between.

`Conversation.run(agent)` calls `agent.run(episode)` for the agent's first turn and shows its
reply to the customer session (`casemill.evaluation.customer`). While the customer says
something, the message list grows by the agent's turn (its tool calls, their results, its reply,
in OpenAI chat format, built from what the sandbox recorded, so every transport continues from
the same conversation) and the customer's `user` message, `episode.turn` goes up, and the agent
runs again. It ends when the customer has nothing to add, when the agent stops (step limit, gave
up), or when the customer-turn maximum is used up while the customer still had something to say
(`hit_limit`: an agent that keeps asking). The agent's last reply is the final one.

In the trajectory every user message after the case's own is a simulated turn: `marked` gives
them `"simulated": true` (agents never see the key).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from casemill.case.model import Case
from casemill.evaluation.agents import Agent, AgentReply, Episode
from casemill.evaluation.customer import DEFAULT_MAX_TURNS, Session
from casemill.evaluation.trajectory import RecordedCall


class Conversation:
    def __init__(
        self,
        episode: Episode,
        session: Session,
        case: Case,
        max_turns: int = DEFAULT_MAX_TURNS,
    ):
        self.episode = episode
        self.session = session
        own = case.customer.max_turns if case.customer is not None else None
        self.max_turns = own if own is not None else max_turns
        self.case_users = sum(1 for m in episode.messages if m.get("role") == "user")
        self.turns = 0
        self.turn_started = 0  # index of the first call of the current agent turn
        self.hit_limit = False
        self.ended = ""

    async def run(self, agent: Agent) -> AgentReply:
        last: AgentReply | None = None
        tokens = [0, 0]  # the prompt and completion tokens of the turns before this one
        while True:
            self.turn_started = self.episode.turn_start = len(self.episode.calls)
            reply = await agent.run(self.episode)
            if last is not None:
                reply = self._later(reply, last, tokens)
            if reply.hit_step_limit or reply.gave_up or self.max_turns == 0:
                return reply
            text = reply.text if isinstance(reply.text, str) else None
            said = await self.session.respond(text, self.episode.messages)
            if said.text is None:
                self.ended = said.ended
                return reply
            if self.turns >= self.max_turns:
                self.hit_limit = True
                self.ended = f"the customer-turn maximum ({self.max_turns}) was reached"
                return reply
            messages = turn_messages(self.episode, text, self.turn_started)
            messages.append({"role": "user", "content": said.text})
            self.episode.messages = messages
            self.episode.turn += 1
            self.turns += 1
            last, tokens = reply, [reply.prompt_tokens, reply.completion_tokens]

    def _later(self, reply: AgentReply, last: AgentReply, tokens: list[int]) -> AgentReply:
        """A later turn's reply with the tokens of every turn, and, when the agent said nothing
        and called nothing (the customer's thanks left unanswered), the last thing it said."""
        silent = not (reply.text or "").strip() and len(self.episode.calls) == self.turn_started
        text = last.text if silent and not reply.hit_step_limit else reply.text
        return replace(
            reply,
            text=text,
            prompt_tokens=tokens[0] + reply.prompt_tokens,
            completion_tokens=tokens[1] + reply.completion_tokens,
        )

    def marked(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`messages` with each user message after the case's own marked as simulated."""
        if not self.turns:
            return list(messages)
        out, users = [], 0
        for message in messages:
            if isinstance(message, dict) and message.get("role") == "user":
                users += 1
                if users > self.case_users:
                    message = {**message, "simulated": True}
            out.append(message)
        return out


def turn_messages(episode: Episode, text: str | None, since: int = 0) -> list[dict[str, Any]]:
    """The conversation so far plus the calls the agent made this turn (from call `since` on)
    and its reply, in OpenAI chat format."""
    return list(episode.messages) + call_messages(episode.calls[since:], text)


def call_messages(calls: Sequence[RecordedCall], text: str | None) -> list[dict[str, Any]]:
    """Recorded calls, each an assistant `tool_calls` message and its `tool` result, then the
    reply, in OpenAI chat format."""
    out: list[dict[str, Any]] = []
    for call in calls:
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call.call_id,
                        "type": "function",
                        "function": {"name": call.tool, "arguments": json.dumps(call.params)},
                    }
                ],
            }
        )
        out.append(
            {
                "role": "tool",
                "tool_call_id": call.call_id,
                "content": json.dumps(call.result, sort_keys=True),
            }
        )
    if text is not None:
        out.append({"role": "assistant", "content": text})
    return out
