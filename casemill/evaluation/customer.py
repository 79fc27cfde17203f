"""The simulated customer: what answers the agent between its turns, so episodes are multi-turn.

After each agent turn the runner shows the agent's reply to the case's customer session, which
either says something (a new `user` message, marked as simulated in the trajectory, and the agent
runs again) or ends the episode. The default, `ScriptedCustomer`, is deterministic and offline;
in this order it:

1. says the case's next scripted turn (`case.customer.script`: for a mined conversation, the
   logged customer turns that followed the case's own conversation, replayed in order);
2. answers a question about one of the customer's facts ("What is your user id?", "please
   confirm your email") from the case's customer facts (`customer.facts`, or what the domain
   derives from the case);
3. answers a request for confirmation ("Shall I go ahead?", "Do you want me to refund ...?",
   "please confirm") with yes, or no where the case says the customer declines
   (`customer.declines`); after a no it has nothing more to say. A choice between options
   ("cancel A or B?") and an offer of more help ("anything else?") are not confirmations;
4. otherwise has nothing to add, and the episode ends: the agent's last reply is its final one.

It also ends the episode when the agent says the same thing twice in a row (asking again what
was answered), and when the customer-turn maximum is used up (`hit_turn_limit`, recorded).

The script goes first because it is what this customer really said next; an agent that asks in
another order than the logged one still gets the logged answers, in the logged order.

`casemill.evaluation.customer_llm` plays the customer with a model instead (`--user-model`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from casemill.case.model import DEFAULT_CUSTOMER_TURNS, Case
from casemill.domains import get_domain

DEFAULT_MAX_TURNS = DEFAULT_CUSTOMER_TURNS
YES = "Yes, please go ahead."
NO = "No, please don't do that."

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_ASKS = re.compile(
    r"\?\s*$|\(yes/no\)|\bplease confirm\b"
    r"|\b(?:please|kindly)\s+(?:provide|send|share|tell|give|let me know)\b",
    re.I,
)
_CONFIRM = re.compile(
    r"\b(?:shall|should) i\b|\b(?:may|can) i (?:go ahead|proceed)\b"
    r"|\b(?:do you want|would you like) me to\b|\bconfirm\b"
    r"|\bgo ahead\b|\bproceed\b|\(yes/no\)|\byes or no\b",
    re.I,
)
_ALTERNATIVE = re.compile(r"\bor\b", re.I)
# an offer of more help ("Would you like me to help with anything else?") is not an action
_MORE_HELP = re.compile(r"\b(?:anything|something) else\b|\bhelp (?:you )?with\b|\bassist\b", re.I)
_WH = re.compile(r"^\W*(?:which|what|where|when|who|whom|whose|why|how)\b", re.I)
_ID_WORDS = frozenset({"id", "ids", "number", "numbers", "no", "code", "identifier"})


@dataclass(frozen=True)
class Said:
    """What the customer says next: `text`, or None when the episode ends (`ended` says why)."""

    text: str | None
    ended: str = ""


class Session(Protocol):
    async def respond(self, reply: str | None, messages: list[dict[str, Any]]) -> Said: ...


class Customer(Protocol):
    """A kind of simulated customer: `name` and `fingerprint` land in the run's provenance."""

    name: str
    fingerprint: str

    def session(self, case: Case) -> Session: ...


class ScriptedCustomer:
    """The deterministic, offline customer (see the module docstring)."""

    name = "scripted"
    fingerprint = "scripted-1"

    def session(self, case: Case) -> ScriptedSession:
        return ScriptedSession(case)


class NoCustomer:
    """No simulated customer: every episode is one agent turn (the behaviour before it)."""

    name = "none"
    fingerprint = "none"

    def session(self, case: Case) -> Session:
        return _Silent()


class _Silent:
    async def respond(self, reply: str | None, messages: list[dict[str, Any]]) -> Said:
        return Said(None, "no simulated customer")


@dataclass
class ScriptedSession:
    case: Case
    script: list[str] = field(init=False)
    agrees: bool = field(init=False)
    said_no: bool = False
    last_reply: str = ""
    answered: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        customer = self.case.customer
        self.script = customer.turns() if customer else []
        self.agrees = not (customer is not None and customer.declines)

    @cached_property
    def facts(self) -> dict[str, Any]:
        """Worked out when the agent first asks something (most episodes never do)."""
        return customer_facts(self.case)

    async def respond(self, reply: str | None, messages: list[dict[str, Any]]) -> Said:
        return self.next(reply)

    def next(self, reply: str | None) -> Said:
        text = " ".join((reply or "").split())
        if not text:
            return Said(None, "the agent said nothing")
        repeated = text == self.last_reply
        self.last_reply = text
        if self.script:
            return Said(self.script.pop(0))
        if repeated:
            return Said(None, "the agent repeated its last reply")
        answer = self._facts_answer(text)  # "please confirm your email" asks for the email
        if answer:
            return Said(answer)
        if asks_confirmation(text):
            if self.said_no:
                return Said(None, "the customer declined already")
            self.said_no = not self.agrees
            return Said(YES if self.agrees else NO)
        return Said(None, "the customer has nothing to add")

    def _facts_answer(self, text: str) -> str | None:
        asked = [name for name in facts_asked(text, self.facts) if name not in self.answered]
        if not asked:
            return None
        self.answered.update(asked)
        return " ".join(fact_sentence(name, self.facts[name]) for name in asked)


def questions(text: str) -> list[str]:
    """The sentences of `text` that ask something: they end in '?', or say '(yes/no)', 'please
    confirm', 'please provide/send/tell ...'."""
    return [s.strip() for s in _SPLIT.split(text) if _ASKS.search(s.strip())]


def asks_confirmation(text: str) -> bool:
    """Whether `text` asks the customer to confirm an action, not to choose between options
    ("cancel A or B?" is a question to clarify, answered from facts or not at all)."""
    for question in questions(text):
        if not _CONFIRM.search(question) or _WH.search(question) or _MORE_HELP.search(question):
            continue
        if _ALTERNATIVE.search(question.replace("yes or no", "").replace("Yes or no", "")):
            continue
        return True
    return False


def _words(name: str) -> list[str]:
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words]


def facts_asked(text: str, facts: dict[str, Any]) -> list[str]:
    """The facts a question of `text` asks for: every word of the fact's name (but the id-like
    ones, which any of id/number/code stands for) in one question sentence."""
    out = []
    for question in questions(text):
        said = set(_words(question))
        idlike = bool(said & _ID_WORDS)
        for name in facts:
            words = _words(name)
            plain = [w for w in words if w not in _ID_WORDS]
            needs_id = len(plain) < len(words)
            if plain and all(w in said for w in plain) and (idlike or not needs_id):
                if name not in out:
                    out.append(name)
            elif not plain and idlike and name not in out:
                out.append(name)
    return out


def fact_sentence(name: str, value: Any) -> str:
    words = " ".join(w for w in re.split(r"[^A-Za-z0-9]+", name) if w).lower()
    if isinstance(value, dict):
        value = ", ".join(str(v) for v in value.values() if not isinstance(v, dict | list))
    elif isinstance(value, list | tuple):
        value = ", ".join(str(v) for v in value)
    return f"My {words} is {value}."


def customer_facts(case: Case) -> dict[str, Any]:
    """What the customer of `case` knows: the case's own facts, else what its domain derives
    (a pack's optional `customer_facts(case)`), else the user records a mined case holds."""
    if case.customer is not None and case.customer.facts:
        return dict(case.customer.facts)
    derive = getattr(get_domain(case.domain), "customer_facts", None)
    if callable(derive):
        return dict(derive(case) or {})
    return recorded_user_facts(case.environment.state)


def recorded_user_facts(state: dict[str, Any]) -> dict[str, Any]:
    """A user's id, name and email from the records of a mined case, when they hold one user
    (`records.user_details.<id>`, `records.customer.<id>`, ...)."""
    records = state.get("records") if isinstance(state, dict) else None
    if not isinstance(records, dict):
        return {}
    for collection, bucket in records.items():
        if not re.search(r"user|customer|account", collection) or not isinstance(bucket, dict):
            continue
        if len(bucket) != 1:
            continue
        key, record = next(iter(bucket.items()))
        facts: dict[str, Any] = {"user_id": key}
        if isinstance(record, dict):
            name = record.get("name")
            if isinstance(name, dict):
                name = " ".join(str(v) for v in name.values() if isinstance(v, str))
            if isinstance(name, str) and name:
                facts["name"] = name
            if isinstance(record.get("email"), str):
                facts["email"] = record["email"]
        return facts
    return {}
