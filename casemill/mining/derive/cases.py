"""Candidate cases from one (already redacted) conversation.

- decision points: for each burst of writes (the agent's first write after a customer turn and
  the writes that follow before the customer speaks again), the conversation up to that write,
  with the burst's successful writes as the expected calls (reads are not required; a call whose
  result reports an error changed nothing and is not expected);
- the conversation as a whole: its opening and a `user_scenario` in the customer's words, with
  every successful write as the expected calls.

Confidence: a resolved conversation whose calls are visible gives `high` labels; anything else
(unresolved, resolution unknown, a transcript without calls, a capped conversation, a support
case that fails its semantic checks, a call that breaks its tool specification) gives `low`
labels tagged `needs_label`, the expected calls being what the agent did: observed, may be wrong.

With tool specifications (the log line's own, else `DeriveOptions.tools`), expected calls lose
the arguments their tool does not declare, and the case's notes say which (`casemill.mining.toolspec`).
Support cases' expected calls are built with the support policy's constructors, which keep the
arguments the support tools take and the policy compares: the notes name the others dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from casemill.case.model import Case, ExpectedCall, OperatorStep, Review, Tags
from casemill.mining.derive import airline, generic, support
from casemill.mining.derive.common import (
    Burst,
    bursts,
    is_read,
    opening,
    outcome_of,
    successful_writes,
    user_scenario,
)
from casemill.mining.derive.parts import SharedParts
from casemill.mining.model import Conversation, LoggedCall, Message
from casemill.mining.toolspec import Conformed, ToolSpecs, conform
from casemill.validation.semantic import semantic_findings

MINER_VERSION = "1"
OBSERVED = "expected calls are what the agent did: observed, may be wrong"
SUPPORT_DROPPED = "arguments the support tools' expected calls do not keep were dropped: "


@dataclass(frozen=True)
class DeriveOptions:
    domain_label: str = "mined"
    seed: int = 0
    validate: bool = True
    max_decision_points: int = 20
    tools: ToolSpecs | None = None  # for logs whose lines carry none
    pack: str | None = None  # a pack to mine into (`PACKS`) instead of `generic:<label>`


# the packs logs can be mined into by name; support cases are told by the tools a log calls
PACKS = ("airline",)


@dataclass
class Derived:
    cases: list[Case] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # cases that could not be built, and why
    dropped_decision_points: int = 0


@dataclass
class _Draft:
    kind: str  # decision_point | conversation
    messages: list[Message]
    writes: list[LoggedCall]
    state: dict[str, Any]
    scenario: str | None
    outcome_messages: list[Message]
    notes: list[str] = field(default_factory=list)  # lower the confidence
    phrases: list[str] = field(default_factory=list)
    reads: int = 0
    info: list[str] = field(default_factory=list)  # notes that do not
    rebuilt: support.Rebuilt | None = None  # support: the conversation's states parsed so far


def _confidence_notes(conv: Conversation) -> list[str]:
    notes = []
    if conv.resolved is not True:
        notes.append("unresolved" if conv.resolved is False else "resolution not recorded")
    if not conv.calls_visible:
        notes.append("tool calls not visible in the log; expected calls need a label")
    if conv.partial:
        notes.append(f"may be only a part of the logged conversation: {conv.partial}")
    if conv.capped:
        notes.append(
            f"conversation capped at {len(conv.messages)} of {conv.total_messages} messages"
        )
    return notes


def derive_cases(conv: Conversation, options: DeriveOptions = DeriveOptions()) -> Derived:
    domain = "support" if support.is_support(conv) else f"generic:{options.domain_label}"
    if domain == "support":
        conv = support.zips_as_text(support.without_instructions(conv))
    out = Derived()
    if not any(m.role == "customer" for m in conv.messages):
        out.problems.append("no customer turn")
        return out
    drafts = _drafts(conv, domain, out, options.max_decision_points)
    if conv.tools is not None:
        options = replace(options, tools=conv.tools)
    if options.tools is not None:
        _conform(drafts, options.tools)
    base_notes = _confidence_notes(conv)
    checked: dict[tuple, list[str]] = {}
    parts = SharedParts(support.expected_call if domain == "support" else generic.expected_call)
    rebuilt = airline.initial_state(conv) if options.pack == airline.NAME else None
    for draft in drafts:
        try:
            case = None
            if rebuilt is not None:
                case, draft = _airline_case(conv, draft, rebuilt, base_notes, options, parts)
            if case is None:
                case = _case(conv, domain, draft, base_notes, options, checked, parts)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            out.problems.append(f"{draft.kind} case is invalid at {where}: {err['msg']}")
            continue
        out.cases.append(case)
    return out


def _airline_case(
    conv: Conversation,
    d: _Draft,
    rebuilt: airline.Rebuilt,
    base_notes: list[str],
    options: DeriveOptions,
    parts: SharedParts,
) -> tuple[Case | None, _Draft]:
    """The airline case of a draft, its state rebuilt from the log (`airline`); else None and
    the draft noting why it stays on the log's recorded tools."""
    state = rebuilt.state
    if d.kind == "decision_point":
        prior = [c for m in d.messages for c in m.calls if not is_read(c.tool) and not c.error]
        state = airline.state_before(state, prior)
    size = {k: len(v) for k, v in state.items()}
    info = [
        f"environment rebuilt from the log's reads ({size['users']} users, "
        f"{size['reservations']} reservations, {size['flights']} flights)"
    ]
    draft = replace(d, state=state, info=d.info + info + airline.notes(rebuilt))
    case = _case(conv, airline.NAME, draft, base_notes, options, {}, parts)
    why = airline.problem(case, rebuilt)
    if why is None:
        return case, d
    return None, replace(d, info=[*d.info, f"not an airline case: {why}; kept on recorded tools"])


def _drafts(conv: Conversation, domain: str, out: Derived, limit: int) -> list[_Draft]:
    rebuilt = support.initial_state(conv) if domain == "support" else None
    found = bursts(conv) if conv.calls_visible else []
    out.dropped_decision_points = max(0, len(found) - limit)
    done = successful_writes(conv) if conv.calls_visible else []
    answers = generic.Answers()  # the generic drafts' reads, worked out once
    drafts = [
        d for b in found[:limit] if (d := _decision(conv, b, rebuilt, done, answers)) is not None
    ]
    return [*drafts, _whole(conv, rebuilt, done, answers)]


def _decision(
    conv: Conversation,
    burst: Burst,
    rebuilt: support.Rebuilt | None,
    done: list[LoggedCall],
    answers: generic.Answers,
) -> _Draft | None:
    msgs, writes = conv.messages, burst.writes
    prefix = msgs[: burst.start]
    if not writes or not any(m.role == "customer" for m in prefix):
        return None
    if rebuilt is None:
        state = generic.state(msgs, burst.start, msgs, answers)
        return _Draft("decision_point", prefix, writes, state, None, msgs)
    ids = {id(c) for c in done}
    prior = [c for m in prefix for c in m.calls if id(c) in ids]
    before = support.state_before(rebuilt.state, prior)
    rebuilt.parsed.update(before.parsed)
    return _Draft(
        "decision_point",
        prefix,
        writes,
        before.state,
        None,
        msgs,
        rebuilt.problems + before.problems,
        support.phrases(writes, before.state, rebuilt.parsed),
        rebuilt=rebuilt,
    )


def _whole(
    conv: Conversation,
    rebuilt: support.Rebuilt | None,
    writes: list[LoggedCall],
    answers: generic.Answers,
) -> _Draft:
    msgs = conv.messages
    scenario = user_scenario(msgs)
    if rebuilt is None:
        return _Draft(
            "conversation",
            opening(msgs),
            writes,
            generic.state(msgs, None, msgs, answers),
            scenario,
            msgs,
            reads=generic.reads_needed(msgs),
        )
    return _Draft(
        "conversation",
        opening(msgs),
        writes,
        rebuilt.state,
        scenario,
        msgs,
        list(rebuilt.problems),
        support.phrases(writes, rebuilt.state, rebuilt.parsed),
        support.reads_needed(writes),
        rebuilt=rebuilt,
    )


def _conform(drafts: list[_Draft], specs: ToolSpecs) -> None:
    """Each draft's writes with the arguments their spec does not declare dropped; what was
    dropped and what else breaks a spec in the draft's notes. Each call is checked once."""
    seen: dict[int, tuple[LoggedCall, Conformed]] = {}
    for d in drafts:
        writes, dropped, problems = [], [], []
        for call in d.writes:
            if id(call) not in seen:
                got = conform(call.tool, call.arguments, specs)
                kept = call
                if got.dropped:
                    kept = LoggedCall(call.id, call.tool, got.arguments, call.result, call.error)
                seen[id(call)] = (kept, got)
            kept, got = seen[id(call)]
            writes.append(kept)
            dropped += [got.dropped_text(call.tool)] if got.dropped else []
            problems += got.problems
        d.writes = writes
        if dropped:
            d.info.append(
                "arguments the tool specification does not declare were dropped: "
                + "; ".join(dropped)
            )
        if problems:
            d.notes.append("call does not match its tool specification: " + "; ".join(problems))


def _support_dropped(writes: list[LoggedCall], calls: tuple[ExpectedCall, ...]) -> list[str]:
    """`tool(argument, ...)` for each write whose support expected call, built with the
    policy's constructors, leaves out arguments the agent passed (the support tools do not
    take them, or the policy does not compare them), as `_conform` reports them."""
    out = []
    for write, call in zip(writes, calls, strict=True):
        if not write.arguments.keys() <= call.params.keys():
            left = [k for k in write.arguments if k not in call.params]
            out.append(Conformed(call.params, left).dropped_text(write.tool))
    return out


def _case(
    conv: Conversation,
    domain: str,
    d: _Draft,
    base_notes: list[str],
    options: DeriveOptions,
    checked: dict[tuple, list[str]],
    parts: SharedParts,
) -> Case:
    is_support = domain == "support"
    is_airline = domain == airline.NAME
    calls = airline.expected_calls(d.state, d.writes) if is_airline else parts.calls(d.writes)
    outcome_msgs = d.messages if d.kind == "decision_point" else d.outcome_messages
    outcome, outcome_note = outcome_of(d.writes, outcome_msgs)
    low = list(base_notes) + d.notes
    info = d.info + ([outcome_note] if outcome_note else [])
    if is_support and (dropped := _support_dropped(d.writes, calls)):
        info.append(SUPPORT_DROPPED + "; ".join(dropped))
    intents = (
        support.intents(d.writes)
        if is_support
        else airline.intents(d.writes)
        if is_airline
        else generic.intents(d.writes)
    )
    case = _build(conv, domain, d, calls, outcome, intents, low, info, options, parts)
    if is_support and options.validate:
        # the decision point of a one-burst conversation and the conversation itself share
        # environment and calls: check them once
        key = (id(d.state), tuple(id(c) for c in d.writes), outcome)
        if key not in checked:
            # the state as the drafts parsed it, if they did, instead of parsing it again
            parsed = d.rebuilt.take_parsed(d.state) if d.rebuilt is not None else None
            found = semantic_findings(case, parsed=parsed)
            checked[key] = [f"{f.field}: {f.message}" for f in found[:3]]
        if checked[key]:
            low.append("semantic check: " + "; ".join(checked[key]))
            case = _build(conv, domain, d, calls, outcome, intents, low, info, options, parts)
    return case


def _customer(conv: Conversation, domain: str, d: _Draft) -> dict[str, Any] | None:
    """The simulated customer of a generic case: a conversation-level case replays the logged
    customer turns; a decision point tests the one decision the agent makes right after the
    customer's turn, so it has no customer turns (`max_turns` 0: whatever the log or an agent
    did next, a write the customer agreed to later, is another test)."""
    if domain == "support":
        return None
    if d.kind != "conversation":
        return {"max_turns": 0}
    return generic.customer(conv.messages, d.messages)


def _build(
    conv: Conversation,
    domain: str,
    d: _Draft,
    calls: tuple[ExpectedCall, ...],
    outcome: str,
    intents: list[str],
    low: list[str],
    info: list[str],
    options: DeriveOptions,
    parts: SharedParts,
) -> Case:
    """The case validated from one prepared dict, holding the conversation's shared parts."""
    labels = ["mined", d.kind]
    notes = [*low, *info]
    if low:
        labels.append("needs_label")
        notes = [OBSERVED, *notes]
    writes = len(calls)
    args: dict[str, Any] = {"format": conv.format}
    if options.tools is not None:
        args["tool_specs"] = len(options.tools)
    step_key = (d.kind, conv.format, args.get("tool_specs"))
    difficulty = "easy" if writes <= 1 else "medium" if writes == 2 else "hard"
    tags = {
        "category": "capability",
        "intents": intents,
        "difficulty": difficulty,
        "labels": labels,
    }
    steps = (writes + 1) if d.kind == "decision_point" else (d.reads + writes + 1)
    operator = {"kind": "mine", "name": d.kind, "version": MINER_VERSION, "args": args}
    return Case.model_validate(
        {
            "domain": domain,
            "environment": parts.environment(d.state),
            "conversation": parts.turns(d.messages),
            "user_scenario": d.scenario or None,
            "customer": _customer(conv, domain, d),
            "expected": {
                "tool_calls": calls,
                "outcome": outcome,
                "reply_contains": d.phrases,
                "optimal_steps": max(1, steps),
            },
            "tags": parts.lasting(Tags, (tuple(intents), difficulty, tuple(labels)), tags),
            "provenance": {
                "origin": "mined",
                "operators": [parts.lasting(OperatorStep, step_key, operator)],
                "seed": options.seed,
                "source": parts.source(conv),
                "label_confidence": "low" if low else "high",
                "notes": "; ".join(notes) or None,
            },
            "review": parts.lasting(Review, None, {"status": "pending"}),
        }
    )
