"""The domain contract: what a pack tells the operators so that they can edit its cases and keep
the expected state right by construction (docs/domains.md walks through it).

A pack that wants more than noise from `casemill expand` gives its `Domain` a `contract`
attribute, an object with what `Contract` lists:

- `entities`: the kinds of things its writes name (`EntityKind`: the parameter that carries the
  id, where the ids are in the state, whose each one is). Swaps rename them; attacks aim at
  another customer's.
- `rules`: the policy as predicates (`Rule`): for a write tool, `check(state, params)` answers
  None (allowed) or the reason it is refused; each rule lists the environment edits that flip
  it (`Flip`), and what a refused write becomes (`refusal`: refuse, escalate or clarify).
- `escalation(reason, entity)`: the call that hands the case to a human, or None.
- `refusal_phrases(outcome)`: what the reply must say when a write is refused or escalated.
- `customer(case)`: the customer's own id (entities of others are attack targets).
- `requests(case)`: writes this customer could also ask for, each with the words to ask: intent
  interpolation adds one, and the policy labels it.
- `conflicts(a, b)`: whether two writes cannot both be what the customer wants (a clarifying
  question instead of both).
- `plant(state, case, text)`: puts text in a free-text field of a record the agent reads (where
  an attacker could write it) and names the read tool that shows it; None when there is none.
- `swappable`: the entity kinds whose ids a swap may rename.
- `protected(case)`: words that carry the label and that noise must leave as they are.

Everything is judged on the state (the `environment.state` of the case, in the pack's shape):
the operators replay the expected calls on the pack's sandbox and ask the rules again, so a
flip that does not flip, or a request the policy refuses, is labelled by the policy, not by the
operator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from casemill.case.model import Case, ExpectedCall
from casemill.domains.registry import get_domain
from casemill.errors import UserError

State = dict[str, Any]
Params = dict[str, Any]
Refusal = Literal["refuse", "escalate", "clarify"]


@dataclass(frozen=True)
class Flip:
    """An environment edit that changes a rule's answer for one write: `edit(state, params)`
    changes `state` in place (a copy the operator owns) and returns a short description of the
    change, or None when it does not apply to this write. `visible`: a read tool shows the
    edited fact, so trying the write is a fault; else (stock no tool shows) only the write's own
    refusal tells the agent, and trying it is not forbidden."""

    name: str
    edit: Callable[[State, Params], str | None]
    visible: bool = True


@dataclass(frozen=True)
class Rule:
    """The policy for one write tool: `check(state, params)` is None when the write is allowed,
    else the reason; `flips` edit the state so that an allowed write is refused; a refused write
    becomes `refusal`, or `escalate` when `escalates(state, params)` says only a human can help."""

    name: str
    tool: str
    check: Callable[[State, Params], str | None]
    flips: tuple[Flip, ...] = ()
    refusal: Refusal = "refuse"
    escalates: Callable[[State, Params], bool] | None = None

    def outcome(self, state: State, params: Params) -> Refusal:
        if self.escalates is not None and self.escalates(state, params):
            return "escalate"
        return self.refusal


@dataclass(frozen=True)
class EntityKind:
    """Things of one kind the writes name by `param` (`reservation_id`): `ids(state)` lists
    those in the state, `owner(state, id)` says whose one is (None: nobody's in particular),
    `pattern` is the shape of a new id (`A` a capital letter, `9` a digit, any other
    character kept; None: ids are shaped like the existing ones)."""

    name: str
    param: str
    ids: Callable[[State], list[str]]
    owner: Callable[[State, str], str | None] = lambda state, entity: None
    pattern: str | None = None


@dataclass(frozen=True)
class Request:
    """A write the customer could ask for, and how they would ask for it."""

    call: ExpectedCall
    text: str


@runtime_checkable
class Contract(Protocol):
    entities: tuple[EntityKind, ...]
    rules: tuple[Rule, ...]
    swappable: tuple[str, ...]

    def escalation(self, reason: str, entity: str | None) -> ExpectedCall | None: ...

    def refusal_phrases(self, outcome: str) -> tuple[str, ...]: ...

    def customer(self, case: Case) -> str | None: ...

    def requests(self, case: Case) -> list[Request]: ...

    def conflicts(self, a: ExpectedCall, b: ExpectedCall) -> bool: ...

    def protected(self, case: Case) -> set[str]: ...

    def plant(self, state: State, case: Case, text: str) -> str | None: ...


def contract_of(domain: Any) -> Contract | None:
    """The contract of a domain pack, or None when it has none."""
    contract = getattr(domain, "contract", None)
    return contract if isinstance(contract, Contract) else None


def contract_for(name: str) -> Contract | None:
    """The contract of the domain called `name` when the operators can use it (a known pack,
    with a simulator and a contract), else None."""
    try:
        domain = get_domain(name)
    except UserError:
        return None
    return contract_of(domain) if domain.has_simulator else None


def rule_for(contract: Contract, tool: str) -> Rule | None:
    return next((r for r in contract.rules if r.tool == tool), None)


def entity_of(contract: Contract, params: Params) -> tuple[EntityKind, str] | None:
    """The first entity a call's parameters name (by the kinds' order), with its kind."""
    for kind in contract.entities:
        value = params.get(kind.param)
        if isinstance(value, str) and value:
            return kind, value
    return None
