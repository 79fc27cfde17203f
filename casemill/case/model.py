"""The case: one scenario an agent must handle, and what a correct agent ends with.

Every model is frozen and forbids unknown fields. `Case.id` is a content id (see `ids.py`): it is
computed when absent and checked when present, so a case whose content was edited by hand
without a new id is caught on load. Build changed cases with `derive()`, never by mutation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from orjson import Fragment
from pydantic import BaseModel, ConfigDict, Field, model_validator

from casemill.case.ids import (
    IdentityMemo,
    NotPlain,
    canonical_array,
    canonical_bytes,
    canonical_fragments,
    canonical_member,
    canonical_object,
    canonical_pruned,
    id_of_canonical,
    maybe_small_float,
    member_of_pruned,
    prune_plain,
)
from casemill.case.migrate import migrate
from casemill.case.values import (
    JsonBool,
    JsonData,
    JsonFloat,
    JsonInt,
    JsonObject,
    JsonTime,
)

SCHEMA_VERSION = 1
MAX_TEXT = 100_000  # characters in one turn or scenario; longer text is refused, not truncated

Role = Literal["customer", "assistant", "tool", "system"]
Outcome = Literal["resolve", "clarify", "refuse", "escalate"]
Category = Literal["capability", "robustness", "adversarial", "efficiency"]
Difficulty = Literal["easy", "medium", "hard"]
Origin = Literal["seed", "mined", "generated", "imported"]
ReviewStatus = Literal["pending", "approved", "rejected"]
FaultKind = Literal["timeout", "server_error", "corrupted", "missing"]
MatchKind = Literal["exact", "number", "casefold", "id", "set", "contains", "any"]

OUTCOMES: tuple[str, ...] = ("resolve", "clarify", "refuse", "escalate")
CATEGORIES: tuple[str, ...] = ("capability", "robustness", "adversarial", "efficiency")


class Frozen(BaseModel):
    """Frozen, no unknown fields, and JSON values as the JSON Schema has them (see `values.py`):
    no NaN or infinity, no string or bool coerced into a number."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class ToolCall(Frozen):
    """A call an assistant turn made (or a mined log shows)."""

    tool: str = Field(min_length=1)
    params: JsonObject = Field(default_factory=dict)
    id: str | None = None


class Turn(Frozen):
    role: Role
    content: str = Field(default="", max_length=MAX_TEXT)
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    @model_validator(mode="after")
    def _calls_only_on_assistant(self) -> Turn:
        if self.tool_calls and self.role != "assistant":
            raise ValueError(f"only assistant turns carry tool_calls, not a {self.role} turn")
        return self


class ParamRule(Frozen):
    """How one expected parameter is compared with what the agent sent.

    - exact: equal after JSON normalisation (the default when no rule is given);
    - number: numerically equal within `tolerance`;
    - casefold: strings equal ignoring case and surrounding white space;
    - id: identifiers equal after stripping '#', white space and case (`#W123` == `w123`);
    - set: lists equal ignoring order (elements compared with `exact`, or `id` when `ids`);
    - contains: the sent string contains the expected one, ignoring case;
    - any: the parameter must be present, any value.
    """

    kind: MatchKind = "exact"
    tolerance: JsonFloat = Field(default=0.0, ge=0)
    ids: JsonBool = False


class ExpectedCall(Frozen):
    tool: str = Field(min_length=1)
    params: JsonObject = Field(default_factory=dict)
    match: dict[str, ParamRule] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _rules_name_params(self) -> ExpectedCall:
        if self.match.keys() <= self.params.keys():  # the common case, without building sets
            return self
        unknown = sorted(set(self.match) - set(self.params))
        if unknown:
            raise ValueError(f"match rules for parameters not in params: {unknown}")
        return self


class ForbiddenCall(Frozen):
    """A call that must not happen: one tool (optionally only with these parameter values) or,
    with `any_write`, every tool that changes state."""

    tool: str | None = None
    params: JsonObject = Field(default_factory=dict)
    any_write: JsonBool = False
    reason: str = ""

    @model_validator(mode="after")
    def _one_target(self) -> ForbiddenCall:
        if (self.tool is None) == (not self.any_write):
            raise ValueError("a forbidden call names exactly one of 'tool' or 'any_write: true'")
        if self.any_write and self.params:
            raise ValueError("'any_write' forbids every write call; it takes no params")
        return self


class Expected(Frozen):
    tool_calls: tuple[ExpectedCall, ...] = ()
    forbidden_calls: tuple[ForbiddenCall, ...] = ()
    outcome: Outcome
    reply_contains: tuple[str, ...] = ()
    reply_excludes: tuple[str, ...] = ()
    reference_reply: str | None = None
    optimal_steps: JsonInt = Field(ge=1)


class ToolFault(Frozen):
    """A tool that misbehaves in this case: the first `times` matching calls fail this way."""

    tool: str = Field(min_length=1)
    kind: FaultKind
    params: JsonObject = Field(default_factory=dict)
    times: JsonInt = Field(default=1, ge=1)


class Environment(Frozen):
    """The initial world state the tools act on (shape owned by the domain pack) and faults."""

    state: JsonObject = Field(default_factory=dict)
    faults: tuple[ToolFault, ...] = ()


DEFAULT_CUSTOMER_TURNS = 10  # the customer turns a simulated customer adds, unless told
STOP = "###STOP###"  # what a simulated customer (tau-bench's, Casemill's LLM one) ends with


def until_stop(lines: Iterable[str]) -> list[str]:
    """Customer turns up to the one that ends the conversation (`STOP`: the words before it
    kept), each with its white space collapsed, empty ones left out."""
    out = []
    for line in lines:
        text = " ".join(line.replace(STOP, " ").split())
        if text:
            out.append(text)
        if STOP in line:
            break
    return out


class Customer(Frozen):
    """What the simulated customer of an episode knows and does (`casemill.evaluation.customer`).

    - facts: what the customer may say when asked (ids, name, email, items, preferences), by a
      name the agent's question is matched against (`user_id`, `email`, `order_ids`, ...);
    - script: customer turns to say next, in order, after the case's own conversation (for a
      mined conversation: the logged customer turns that followed it);
    - declines: the customer answers a request for confirmation with no (default: yes);
    - max_turns: the most customer turns the simulator adds (default: the run's maximum).
    """

    def turns(self) -> list[str]:
        """The script as the simulator says it: up to `STOP`."""
        return until_stop(self.script)

    facts: dict[str, JsonData] = Field(default_factory=dict)
    script: tuple[Annotated[str, Field(max_length=MAX_TEXT)], ...] = ()
    declines: JsonBool | None = None
    max_turns: JsonInt | None = None

    @model_validator(mode="after")
    def _turns_not_negative(self) -> Customer:
        if self.max_turns is not None and self.max_turns < 0:
            raise ValueError("customer.max_turns must be 0 or more")
        return self


class Tags(Frozen):
    category: Category = "capability"
    intents: tuple[str, ...] = ()
    difficulty: Difficulty = "medium"
    labels: tuple[str, ...] = ()


class OperatorStep(Frozen):
    """One operator application in a case's lineage."""

    kind: str
    name: str
    version: str
    args: JsonObject = Field(default_factory=dict)
    model: str | None = None
    prompt_hash: str | None = None


class SourceRef(Frozen):
    file: str
    line: JsonInt | None = None
    format: str | None = None
    conversation_id: str | None = None


class Provenance(Frozen):
    origin: Origin = "seed"
    parents: tuple[str, ...] = ()
    operators: tuple[OperatorStep, ...] = ()
    seed: JsonInt | None = None
    source: SourceRef | None = None
    label_confidence: Literal["high", "low"] | None = None
    notes: str | None = None


class ReviewEdit(Frozen):
    path: str
    before: JsonData = None
    after: JsonData = None


class Review(Frozen):
    status: ReviewStatus = "pending"
    reviewer: str | None = None
    decided_at: JsonTime | None = None
    notes: str | None = None
    edits: tuple[ReviewEdit, ...] = ()
    auto_approved: JsonBool = False


def _is_none(value: Any) -> bool:
    return value is None


MEANING_FIELDS = (
    "domain",
    "environment",
    "conversation",
    "user_scenario",
    "customer",
    "expected",
)


class Case(Frozen):
    schema_version: JsonInt = SCHEMA_VERSION
    id: str = ""
    domain: str = Field(min_length=1)
    environment: Environment = Field(default_factory=Environment)
    conversation: tuple[Turn, ...] = ()
    user_scenario: str | None = Field(default=None, max_length=MAX_TEXT)
    # left out of a dump when None, so files of cases without one read as they did before it
    customer: Customer | None = Field(default=None, exclude_if=_is_none)
    expected: Expected
    tags: Tags = Field(default_factory=Tags)
    provenance: Provenance = Field(default_factory=Provenance)
    review: Review = Field(default_factory=Review)

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        if type(data) is dict:
            version = data.get("schema_version", SCHEMA_VERSION)
            if type(version) is int and version == SCHEMA_VERSION:
                return data  # current: nothing to migrate
        return migrate(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _check(self) -> Case:
        if not self.conversation and not (self.user_scenario or "").strip():
            raise ValueError("a case needs a conversation or a user_scenario")
        want = id_of_canonical(self.canonical_meaning())
        if not self.id:
            object.__setattr__(self, "id", want)
        elif self.id != want:
            raise ValueError(
                f"id {self.id!r} does not match the case's content (expected {want!r}); "
                "remove the id to have it computed, or undo the edit"
            )
        return self

    def meaning(self) -> dict[str, Any]:
        """The part of the case its id is a hash of (`customer` only when the case has one, so
        the ids of cases without one are what they were before it existed)."""
        dumped = self.model_dump(mode="json", include=set(MEANING_FIELDS))
        return {k: dumped[k] for k in MEANING_FIELDS if k in dumped}

    def canonical_meaning(self) -> bytes:
        """`canonical_json(self.meaning())` as UTF-8 bytes, composed from the canonical JSON of
        the environment, each turn and `expected`, which is remembered per (frozen) part: a case
        derived from this one serialises only the parts it changes."""
        environment = canonical_environment(self.environment)
        expected = canonical_dump(self.expected)
        turns = [canonical_dump(t) for t in self.conversation]
        members: dict[str, Any] = {}
        if self.domain:
            members["domain"] = self.domain
        if environment != b"{}":
            members["environment"] = Fragment(environment)
        if turns:
            members["conversation"] = [Fragment(t) for t in turns]
        if self.user_scenario:
            members["user_scenario"] = self.user_scenario
        if self.customer is not None and (customer := canonical_dump(self.customer)) != b"{}":
            members["customer"] = Fragment(customer)
        if expected != b"{}":
            members["expected"] = Fragment(expected)
        try:  # the parts are canonical already, and the two strings hold no float
            return canonical_fragments(members)
        except NotPlain:  # a string orjson refuses (a lone surrogate)
            pass
        members = {
            "domain": canonical_member(self.domain),
            "environment": None if environment == b"{}" else environment,
            "conversation": canonical_array(turns) if turns else None,
            "user_scenario": canonical_member(self.user_scenario),
            "customer": None if self.customer is None else _customer_member(self.customer),
            "expected": None if expected == b"{}" else expected,
        }
        return canonical_object(members)

    @property
    def customer_text(self) -> str:
        return "\n".join(t.content for t in self.conversation if t.role == "customer")


def _customer_member(customer: Customer) -> bytes | None:
    return canonical_member(customer.model_dump(mode="json"))


def _canonical_dump(model: BaseModel) -> bytes:
    kind = type(model)
    try:  # read from the fields: the same as the dump's for plain data, without the copy
        if kind is Turn:
            return _plain_turn(model)
        if kind is ExpectedCall:
            return _composed_call(model)
        if kind is Expected and model.tool_calls:
            return _composed_expected(model)
        return canonical_pruned(prune_plain(model))
    except NotPlain:
        return canonical_bytes(model.model_dump(mode="json"))


def _fields(model: BaseModel) -> dict[str, Any]:
    """The fields of a model of this module, its dump's keys (`NotPlain` if it has others or
    lacks some: one built without validation)."""
    fields = model.__dict__
    if fields.keys() != _FIELD_NAMES[type(model)] or model.__pydantic_extra__:
        raise NotPlain
    return fields


_FIELD_NAMES = {m: frozenset(m.model_fields) for m in (Turn, ToolCall, ExpectedCall, Expected)}


def _strings(fields: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: fields[name] for name in names if fields[name]}


def _plain_turn(turn: Turn) -> bytes:
    """A turn's strings and its calls' (pruned: empty ones dropped), written at once."""
    fields = _fields(turn)
    members = _strings(fields, ("role", "content", "tool_call_id"))
    if not turn.tool_calls:
        return canonical_fragments(members)  # strings only: no float to check
    calls = []
    for call in turn.tool_calls:
        if type(call) is not ToolCall:
            raise NotPlain
        got = _fields(call)
        one = _strings(got, ("tool", "id"))
        params = prune_plain(got["params"])
        if params:
            one["params"] = params
        calls.append(one)
    members["tool_calls"] = calls
    return _checked(canonical_fragments(members))


def _composed_call(call: ExpectedCall) -> bytes:
    """An expected call's canonical JSON with each matching rule's remembered (the policy's
    rules are shared constants)."""
    fields = _fields(call)
    members = _strings(fields, ("tool",))
    params = prune_plain(fields["params"])
    if params:
        members["params"] = params
    rules = {}
    for name, rule in fields["match"].items():
        if (got := canonical_dump(rule)) != b"{}":
            rules[name] = Fragment(got)
    if rules:
        members["match"] = rules
    return _checked(canonical_fragments(members))


def _checked(out: bytes) -> bytes:
    if maybe_small_float(out):  # the standard library's path, for the whole
        raise NotPlain
    return out


def _composed_expected(expected: Expected) -> bytes:
    """`expected`'s canonical JSON with each expected call's remembered (the cases of one mined
    conversation and the dedup signature share them)."""
    fields = _fields(expected)
    members = prune_plain({k: v for k, v in fields.items() if k != "tool_calls"})
    members["tool_calls"] = [Fragment(canonical_dump(c)) for c in expected.tool_calls]
    return _checked(canonical_fragments(members))


# the canonical JSON of a frozen model's JSON dump, remembered for as long as the model lives
canonical_dump = IdentityMemo(_canonical_dump)


def _environment_parts(env: Environment) -> tuple[bytes | None, bytes | None, bool]:
    try:  # plain data is its own dump (see `_canonical_dump`)
        faults = member_of_pruned(prune_plain(env.faults)) if env.faults else None
        return faults, member_of_pruned(prune_plain(env.state)), True
    except NotPlain:
        pass
    dumped = env.model_dump(mode="json")
    state = dumped["state"]
    return canonical_member(dumped["faults"]), canonical_member(state), state == env.state


def _canonical_environment(env: Environment) -> bytes:
    faults, state, _ = environment_parts(env)
    return canonical_object({"faults": faults, "state": state})


# (faults, state, whether the state is its own dump) of an environment: the `canonical_member`s
# of its JSON dump's fields, remembered for as long as it lives; the state as it is has the same
# canonical JSON as its dump when the two are equal (JSON data, as read from a file)
environment_parts = IdentityMemo(_environment_parts)
# the canonical JSON of an environment's JSON dump, remembered for as long as it lives
canonical_environment = IdentityMemo(_canonical_environment)


def derive(case: Case, **updates: Any) -> Case:
    """A new case from `case` with `updates` (top-level fields), validated, with a fresh id.

    What the new case keeps of `case` is passed on as the validated, frozen parts it is: the
    fields not updated and, in an updated field, the values and tuple items that are `case`'s
    own (turns of the conversation, `expected`'s calls, the environment's state and faults).
    Everything else is new and validated from its JSON dump (models, as they may come from
    `model_copy`), and so is the new case as a whole (its id, its validators)."""
    data = {name: getattr(case, name) for name in Case.model_fields}
    for key, value in updates.items():
        data[key] = _new_value(value, data.get(key))
    data["id"] = ""
    return Case.model_validate(data)


def _new_value(value: Any, old: Any) -> Any:
    """`value` for validation in place of `old`: a JSON dump, but `old`'s own parts kept."""
    if value is old:
        return value
    if isinstance(value, BaseModel):
        data = value.model_dump(mode="json")
        if type(value) is type(old):
            for name in type(value).model_fields:
                mine, theirs = getattr(value, name), getattr(old, name)
                if mine is theirs:
                    data[name] = mine
                elif isinstance(mine, tuple) and mine:
                    data[name] = _kept(mine, theirs, data[name])
        return data
    if isinstance(value, list | tuple) and isinstance(old, tuple):
        return _kept(
            value,
            old,
            [
                item.model_dump(mode="json") if isinstance(item, BaseModel) else item
                for item in value
            ],
        )
    return value


def _kept(items: list | tuple, old: tuple, dumped: list) -> list:
    """`dumped` (the dump of `items`) with the items that are also in `old` kept as they are."""
    own = {id(item) for item in old if isinstance(item, BaseModel)}
    return [item if id(item) in own else new for item, new in zip(items, dumped, strict=True)]
