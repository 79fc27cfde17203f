"""The chapter format: the test-case shape of the book chapter on evaluating customer-support
agents, one JSON object a line (or a JSON array file):

    {"order": {...}, "conversation": [{"role", "content"}],
     "expected": {"final_state": {"tool_calls": [{"tool", "params"}] | ["tool name", ...],
                                  "customer_msg_contains": ["phrase", ...]}}}

Field mapping (see `support_map` for the order, `support_calls` for the tools):

| chapter | case |
| --- | --- |
| `order` | `environment.state` (one customer, one order) |
| `conversation[].role` user / customer / human | `customer` (assistant, system, tool kept) |
| (none) | a leading `system` turn naming the synthesised signed-in customer |
| `final_state.tool_calls` | `expected.tool_calls`, book tool names mapped to support tools |
| `final_state.customer_msg_contains` | `expected.reply_contains` |
| (none) | `expected.outcome` inferred (write calls: resolve; none: clarify or refuse by wording) |
| (none) | `expected.optimal_steps` estimated: reads needed + writes + 1 |
| `id` / `sample_id` (optional) | `provenance.source.conversation_id` |

A tool name the mapping table does not know sends the case to the `generic:chapter` domain with
its calls as written (the import notes say so). Every inference lands in `provenance.notes`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from casemill.case.model import Case
from casemill.formats import support_calls as sc
from casemill.formats import support_map as sm
from casemill.formats.common import (
    case_data,
    difficulty,
    export_records,
    import_records,
    no_unknown_fields,
    no_user_scenario,
    phrases,
    require,
)
from casemill.formats.fidelity import faithful
from casemill.formats.records import SourceRecord
from casemill.formats.result import ExportResult, FieldProblem, ImportResult

FORMAT = "chapter"
GENERIC_DOMAIN = "generic:chapter"
TOP_FIELDS = ("order", "conversation", "expected", "id", "sample_id")
GUESSES = ("assumed", "mapped to", "names no amount", "read from")


def _raw_calls(final: dict[str, Any]) -> list[tuple[str, Any]]:
    calls = require(final, "tool_calls", list, "expected.final_state.tool_calls")
    out = []
    for n, call in enumerate(calls):
        where = f"expected.final_state.tool_calls[{n}]"
        if isinstance(call, str) and call.strip():
            out.append((call.strip(), None))
            continue
        if not isinstance(call, dict):
            raise FieldProblem(
                where,
                f"expected a {{tool, params}} object or a tool name, got {type(call).__name__}",
            )
        name = call.get("tool", call.get("name"))
        if not isinstance(name, str) or not name.strip():
            raise FieldProblem(f"{where}.tool", f"expected a tool name, got {name!r}")
        params = call.get("params", call.get("arguments", {}))
        if not isinstance(params, dict):
            raise FieldProblem(
                f"{where}.params", f"arguments must be an object, got {type(params).__name__}"
            )
        out.append((name.strip(), params))
    return out


def map_record(record: SourceRecord) -> dict[str, Any]:
    value: dict[str, Any] = record.value
    no_unknown_fields(value, TOP_FIELDS, FORMAT)
    expected = require(value, "expected", dict)
    final = require(expected, "final_state", dict, "expected.final_state")
    no_unknown_fields(
        final, ("tool_calls", "customer_msg_contains"), FORMAT, "expected.final_state."
    )
    notes: list[str] = []
    state = sm.map_order(require(value, "order", dict), notes)
    turns, roles = sm.map_turns(value.get("conversation"), "conversation", sm.chapter_role)
    reply = phrases(
        final.get("customer_msg_contains"), "expected.final_state.customer_msg_contains"
    )
    speakers = (r for r in roles if sm.ROLE_IN[r.strip().lower()] == "customer")
    labels = [f"role:{r}" for r in dict.fromkeys(speakers) if r != "customer"]
    domain, calls, outcome, steps, intents, confident = _expected(
        _raw_calls(final), state, turns, reply, notes
    )
    if domain == "support" and outcome == "clarify":
        labels.append("clarify")
    source_id = value.get("id", value.get("sample_id"))
    return case_data(
        record,
        FORMAT,
        domain=domain,
        state=state,
        conversation=[sm.auth_turn(state).model_dump(mode="json")]
        + [t.model_dump(mode="json") for t in turns],
        expected={
            "tool_calls": calls,
            "forbidden_calls": sc.no_write_rule(outcome) if domain == "support" else [],
            "outcome": outcome,
            "reply_contains": list(reply),
            "optimal_steps": steps,
        },
        intents=intents,
        labels=labels,
        difficulty_=difficulty(len(calls), len(turns)),
        source_id=None if source_id is None else str(source_id),
        confident=confident,
        notes=notes,
    )


def _expected(
    raw_calls: list[tuple[str, Any]],
    state: dict[str, Any],
    turns: list,
    reply: tuple[str, ...],
    notes: list[str],
) -> tuple:
    """(domain, calls, outcome, optimal steps, intents, confident) for the record's calls."""
    unknown = sorted({name for name, _ in raw_calls if name not in sc.TOOL_MAP})
    if unknown:
        calls = [{"tool": name, "params": params or {}} for name, params in raw_calls]
        notes.append(
            f"tools {', '.join(unknown)} are not support tools: the case is in {GENERIC_DOMAIN}"
        )
        return GENERIC_DOMAIN, calls, "resolve" if calls else "clarify", len(calls) + 1, (), False
    text = "\n".join(t.content for t in turns if t.role == "customer")
    built = _support_calls(raw_calls, state, text, notes)
    outcome = sc.infer_outcome(built, " ".join(reply) + " " + _last_assistant(turns), notes)
    guessed = any(p is None for _, p in raw_calls) or any(w in n for n in notes for w in GUESSES)
    calls = [c.model_dump(mode="json") for c in built]
    return "support", calls, outcome, sc.optimal_steps(built, text), sc.intents(built), not guessed


def _support_calls(
    raw_calls: list[tuple[str, Any]], state: dict[str, Any], text: str, notes: list[str]
) -> list:
    names = [sc.TOOL_MAP[n] for n, _ in raw_calls]
    out = []
    for n, (name, params) in enumerate(raw_calls):
        if sc.TOOL_MAP[name] == "refund_items" and params is None and "cancel_order" in names:
            notes.append(f"{name} folded into cancel_order (cancelling refunds the order in full)")
            continue
        out.extend(
            sc.support_call(
                name, params, state, text, notes, f"expected.final_state.tool_calls[{n}]"
            )
        )
    return out


def _last_assistant(turns: list) -> str:
    return next((t.content for t in reversed(turns) if t.role == "assistant"), "")


def import_chapter(path: str | Path) -> ImportResult:
    """Import a chapter-format file (JSON Lines or a JSON array)."""
    result, _ = import_records(FORMAT, path, map_record)
    generic = sum(1 for c in result.cases if c.domain == GENERIC_DOMAIN)
    notes = ()
    if generic:
        notes = (
            f"{generic} case(s) name tools the support domain does not have and were imported "
            f"into {GENERIC_DOMAIN} (no tool specifications, no replay)",
        )
    from casemill.formats.generic import infer_tools_by_domain

    return ImportResult(
        result.format,
        result.source,
        result.read,
        result.cases,
        result.quarantined,
        notes,
        infer_tools_by_domain(result.cases),
    )


# -- export -------------------------------------------------------------------------------------
def export_record(case: Case) -> dict[str, Any]:
    """The chapter-format record for one case; FieldProblem when the format cannot hold it."""
    no_user_scenario(case, FORMAT)
    state = case.environment.state
    order = (
        sm.export_order(state)
        if isinstance(state.get("orders"), dict) and isinstance(state.get("customers"), dict)
        else None
    )
    orders = state.get("orders") or {}
    if len(orders) > 1:
        raise FieldProblem(
            "environment.state.orders",
            f"the chapter format holds one order; this case has {len(orders)}",
            rule="more than one order",
        )
    if order is None:
        raise FieldProblem(
            "environment.state",
            f"the chapter format needs a support order; domain {case.domain!r} has none",
            rule="no support order",
        )
    if not any(t.role == "customer" for t in case.conversation):
        raise FieldProblem(
            "conversation",
            "the chapter format needs a conversation with a customer turn",
            rule="no customer turn",
        )
    if case.domain == "support":
        calls = [sc.export_call(c, state) for c in case.expected.tool_calls]
    else:
        calls = [{"tool": c.tool, "params": dict(c.params)} for c in case.expected.tool_calls]
    return {
        "order": order,
        "conversation": export_turns(case),
        "expected": {
            "final_state": {
                "tool_calls": calls,
                "customer_msg_contains": list(case.expected.reply_contains),
            }
        },
    }


def export_turns(case: Case) -> list[dict[str, str]]:
    """The conversation without the synthesised sign-in turn, customer turns under their
    original role (a `role:NAME` label, or `roles:A,B,..` one a customer turn)."""
    turns = list(case.conversation)
    if turns and turns[0].role == "system" and turns[0].content.startswith(sm.AUTH_PREFIX):
        turns = turns[1:]
    names = _customer_roles(case.tags.labels)
    out, seen = [], 0
    for turn in turns:
        role = turn.role
        if role == "customer":
            role = names[min(seen, len(names) - 1)] if names else "customer"
            seen += 1
        out.append({"role": role, "content": turn.content})
    return out


def _customer_roles(labels: Iterable[str]) -> list[str]:
    for label in labels:
        if label.startswith("roles:"):
            return label[len("roles:") :].split(",")
        if label.startswith("role:"):
            return [label[len("role:") :]]
    return []


def export_chapter(cases: Iterable[Case], path: str | Path) -> ExportResult:
    """Write `cases` in the chapter format (JSON Lines); cases it cannot hold are skipped and
    reported, each with the reason (the finding's `rule`): a user scenario (conversation-level
    case: instructions for a simulated customer, which the format's scripted turns cannot
    hold), more than one order, no support order, no customer turn, and the state and
    read-back reasons of `fidelity` (product catalogue, order history, tool faults, round
    trip, ...)."""
    guarded = faithful(FORMAT, export_record, map_record)
    return export_records(FORMAT, cases, path, guarded, guarded.narrowed)
