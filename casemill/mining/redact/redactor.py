"""Redaction of one conversation before anything derived from it is written.

Two passes over the conversation:
1. collect (`collect`): personal data in known fields of structured records (tool results and
   arguments that are JSON: profiles, addresses with their postal codes and cities, passengers,
   ids), the signed-in customer named in a support system turn, and what the text detectors
   find in every text;
2. replace (`replace`, by the surrogates `assign` draws): every occurrence of every collected
   value, in every text, argument, result and the conversation id, by its surrogate, as a whole
   token and ignoring case. So a postal code or a
   city a record holds is replaced where the customer types it too, and no other number or
   word. A city or postal code of many words is also found with other whitespace between its
   words (San Antonio typed across lines, M5V3L9), and a ZIP+4's zip alone (by its surrogate's
   zip). Names found in fields are also searched for token by token. Names and cities keep the
   case they are written in (AUSTIN, austin). A short name token or city that the records also
   hold in capitals, but never as a name or city (Mia's airport, MIA: a value, or a key of a
   tool result), is left alone where it is written in capitals: the code stays coherent, and
   does not show which value its surrogate replaced.

The same value gets the same surrogate everywhere in the conversation, so cases derived from the
redacted conversation stay coherent (the ids in expected calls exist in the environment).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from casemill.mining.model import Conversation, LoggedCall, Message
from casemill.mining.redact.assign import Assigner
from casemill.mining.redact.collect import Collector, parse_json, parse_literal
from casemill.mining.redact.detect import LONG
from casemill.mining.redact.entities import persons
from casemill.mining.redact.replace import Replacer
from casemill.mining.redact.surrogates import Surrogates

# how `run` rebuilds a message from the texts replaced in one pass: ("json", its redacted
# content), or ("text", where its content is, [(call, where its arguments are or None, the
# redacted arguments when they are not among the texts)])
Step = tuple


@dataclass(frozen=True)
class RawValue:
    """One redacted value: only ever written to the file `--keep-raw` names."""

    conversation_id: str
    kind: str
    raw: str
    surrogate: str


@dataclass
class Redaction:
    conversation: Conversation
    counts: Counter = field(default_factory=Counter)
    raw: list[RawValue] = field(default_factory=list)


class ConversationRedactor:
    """Redacts one conversation; build a new one per conversation."""

    def __init__(
        self,
        conversation: Conversation,
        seed: int,
        keep_raw: bool = False,
        context: Any = None,
        names_model: str | None = None,
    ):
        """`context`: a record whose personal data is collected too (`scrub_text`);
        `names_model`: the spaCy pipeline package of the named-entity layer (`entities`)."""
        self.source = conversation
        self.names_model = names_model
        self.context = context
        self.keep_raw = keep_raw
        # drawn by what the conversation holds, not by its id: the same conversation logged under
        # two ids gets the same surrogates, so its cases are duplicates that dedup drops
        self.sur = Surrogates(seed, conversation.content_key())
        self.parsed: dict[int, Any] = {}  # message index -> its content parsed as JSON

    # -- collect ----------------------------------------------------------------------------
    def collect(self) -> Collector:
        """Known fields walked record by record; the text detectors run once over all the short
        texts of the conversation joined (long texts, such as repeated instructions, one by one
        through a cache)."""
        c = Collector()
        batch = [self.source.id]
        for index, m in enumerate(self.source.messages):
            content = m.content
            if m.role == "tool":
                value = parse_json(content)
                if value is not None:
                    self.parsed[index] = value
                    c.walk(value)
                    continue
                literal = parse_literal(content)  # replaced as text, like any other
                if literal is not None:
                    c.walk(literal)
            if len(content) > LONG:
                c.text(content)
            else:
                batch.append(content)
            for call in m.calls:
                c.walk(call.arguments)
        if self.context is not None:
            c.walk(self.context)
        batch += c.strings
        c.texts(batch)
        if self.names_model:
            texts = [m.content for m in self.source.messages if m.role != "tool"]
            for name in persons(self.names_model, texts):
                c.add_name(name)
        return c

    # -- surrogates -------------------------------------------------------------------------
    def build(self, c: Collector) -> Assigner:
        """The surrogate of every value collected."""
        assigner = Assigner(self.sur)
        assigner.build(c, lambda capitals: self._is_code(capitals, c.strings))
        return assigner

    def _is_code(self, capitals: str, strings: list[str]) -> bool:
        """Whether the records hold `capitals` as a string of their own (a value, or a key of
        a tool result: `{"MIA": "Miami"}`)."""
        if capitals in strings:
            return True
        quoted = f'"{capitals}"'
        messages = self.source.messages
        return any(quoted in messages[index].content for index in self.parsed)

    # -- replace ----------------------------------------------------------------------------
    def run(self) -> Redaction:
        """The conversation redacted: its texts, call arguments and id replaced in one pass
        (`Replacer.many`), then the messages rebuilt from them."""
        assigner = self.build(self.collect())
        replacer = Replacer(assigner.map, assigner.codes, assigner.word_names)
        texts, plan = self._texts(replacer)
        done = replacer.many(texts) if replacer.map else texts
        conv = self.source.with_messages(self._messages(replacer, plan, done))
        conv.id = done[0]
        raw = []
        if self.keep_raw:
            raw = [
                RawValue(self.source.id, kind, assigner.originals[key], sur)
                for key, (kind, sur) in sorted(assigner.map.items())
            ]
        return Redaction(conv, replacer.counts, raw)

    def _texts(self, replacer: Replacer) -> tuple[list[str], list[Step]]:
        """The texts to replace in one pass (the id, then each message's content and the
        arguments of its calls serialised), and how to rebuild each message from them; a JSON
        tool result or arguments holding escape sequences is redacted value by value."""
        src = self.source
        texts: list[str] = [src.id]
        plan: list[Step] = []
        for index, m in enumerate(src.messages):
            parsed = self.parsed.get(index) if m.role == "tool" else None
            if parsed is not None and "\\" in m.content:
                plan.append(("json", replacer.json_text(m.content, parsed)))
                continue
            content_at = len(texts)
            texts.append(m.content)
            calls = []
            for call in m.calls:
                dumped = orjson.dumps(call.arguments).decode()
                if "\\" in dumped:
                    calls.append((call, None, replacer.value(call.arguments)))
                else:
                    calls.append((call, len(texts), None))
                    texts.append(dumped)
            plan.append(("text", content_at, calls))
        return texts, plan

    def _messages(self, replacer: Replacer, plan: list[Step], done: list[str]) -> list[Message]:
        """The messages rebuilt from the replaced texts `done`, by `plan`; a logged call's
        result is its tool message's, or (when none answers it) its own redacted."""
        messages = []
        # a result answers the latest call with its id before it (as the parsers link them):
        # logs reuse call ids, so an id alone does not name one call
        latest: dict[str, LoggedCall] = {}
        answered: set[int] = set()
        ids: dict[str, str] = {}  # call ids redacted (logs make them of conversation ids)

        def redacted_id(call_id: str) -> str:
            if call_id not in ids:
                ids[call_id] = replacer.text(call_id)
            return ids[call_id]

        for m, step in zip(self.source.messages, plan, strict=True):
            content = step[1] if step[0] == "json" else done[step[1]]
            if m.role == "tool":
                call = latest.get(m.call_id) if m.call_id is not None else None
                if call is not None and call.result is not None:
                    call.result = content
                    answered.add(id(call))
                call_id = redacted_id(m.call_id) if m.call_id is not None else None
                messages.append(Message("tool", content, call_id=call_id))
                continue
            calls = [
                LoggedCall(
                    redacted_id(c.id),
                    c.tool,
                    args if at is None else orjson.loads(done[at]),
                    c.result,
                    c.error,
                )
                for c, at, args in step[2]
            ]
            for original, call in zip(step[2], calls, strict=True):
                latest[original[0].id] = call
            call_id = redacted_id(m.call_id) if m.call_id is not None else None
            messages.append(Message(m.role, content, calls, call_id))
        for m in messages:
            for call in m.calls:
                if call.result is not None and id(call) not in answered:
                    call.result = replacer.text(call.result)
        return messages


def redact_conversation(
    conversation: Conversation,
    seed: int = 0,
    keep_raw: bool = False,
    names_model: str | None = None,
) -> Redaction:
    """The conversation with every piece of personal data replaced by a surrogate, the number
    of replacements per kind, and (only with `keep_raw`) the raw values and their surrogates;
    with `names_model`, names the named-entity layer finds in text too."""
    return ConversationRedactor(conversation, seed, keep_raw, names_model=names_model).run()


def scrub_text(text: str, seed: int = 0, context: Any = None) -> str:
    """Free text with what the detectors find replaced (for ids and messages outside any
    conversation, such as a quarantined record's conversation id), and the personal data
    `context` holds (the record the text came from, as read: its known fields and texts)."""
    conv = Conversation(id=text, messages=[], file="", line=0, format="")
    return ConversationRedactor(conv, seed, context=context).run().conversation.id
