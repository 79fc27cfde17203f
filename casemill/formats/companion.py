"""The companion-repository JSONL format: one scenario a line,

    {"sample_id": "refund_0", "input": [{"role", "content"}],
     "expected_function_call": {"name": "issue_refund", "arguments": {...}},
     "order": {...}?, "expected_routing": ...?}

with roles that vary by domain (`customer`, `user`, `patient`, `attorney`, `analyst`,
`warehouse_manager`, ...). Field mapping:

| companion | case |
| --- | --- |
| `sample_id` | `provenance.source.conversation_id` |
| `input[].role` | `customer` for the person served, the original name kept as a label |
|                | (`role:NAME`, or `roles:A,B,..` one a customer turn); others kept |
| `expected_function_call` | the one `expected.tool_calls` entry |
| `order` | `environment.state` (support domain, as in the chapter format) |
| `expected_routing` | a `routing:VALUE` label (`routing-json:JSON` when not a string) |

E-commerce samples (whose function is a support tool or a book name for one, see
`support_map.TOOL_MAP`) go to the `support` domain, their `order` as the environment; without an
`order` the environment is synthesised from the expected call (noted, low label confidence).
Other samples have no tool specifications: they go to `generic:LABEL` with the call kept as
written (and their `order`, if any, as the environment, noted), and the import reports the tools
inferred for the domain.
LABEL is the sample's speaker role (`patient`, `attorney`, `warehouse_manager`), else its
sample-id prefix; `label=` sets one label for the whole file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from casemill.case.model import Case
from casemill.formats import support_calls as sc
from casemill.formats import support_map as sm
from casemill.formats.chapter import export_turns
from casemill.formats.common import (
    case_data,
    difficulty,
    export_records,
    import_records,
    no_unknown_fields,
    no_user_scenario,
    require,
)
from casemill.formats.fidelity import faithful
from casemill.formats.generic import infer_tools_by_domain
from casemill.formats.records import SourceRecord
from casemill.formats.result import ExportResult, FieldProblem, ImportResult

FORMAT = "companion"
TOP_FIELDS = ("sample_id", "input", "expected_function_call", "order", "expected_routing")
SPEAKER_RE = re.compile(r"^[a-z][a-z0-9_]*$")
FIXED_ROLES = {
    "assistant": "assistant",
    "agent": "assistant",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
}


def is_support(value: dict[str, Any]) -> bool:
    call = value.get("expected_function_call")
    name = call.get("name") if isinstance(call, dict) else None
    return name in sc.TOOL_MAP


def speaker_role(role: str, where: str) -> str:
    """Any lower-case identifier is a speaker (the person the agent serves)."""
    low = role.strip().lower()
    if low in FIXED_ROLES:
        return FIXED_ROLES[low]
    if not SPEAKER_RE.match(low):
        raise FieldProblem(
            where,
            f"unknown role {role!r}: a speaker role is a lower-case identifier such as "
            "customer, patient or warehouse_manager",
            "unknown-role",
        )
    return "customer"


def _prefix(sample_id: Any) -> str | None:
    found = re.match(r"[A-Za-z]+", str(sample_id or ""))
    return found.group(0).lower() if found else None


def domain_label(value: dict[str, Any]) -> str:
    """The generic domain label of one sample: its first speaker role other than
    customer / user, else its sample-id prefix (`intake_0` -> `intake`), else 'companion'."""
    for turn in value.get("input") or []:
        role = str(turn.get("role", "")).strip().lower() if isinstance(turn, dict) else ""
        if (
            SPEAKER_RE.match(role)
            and role not in FIXED_ROLES
            and role not in ("customer", "user", "human")
        ):
            return role
    return _prefix(value.get("sample_id")) or "companion"


def _call(value: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    call = require(value, "expected_function_call", dict)
    no_unknown_fields(call, ("name", "arguments"), FORMAT, "expected_function_call.")
    name = call.get("name")
    if not isinstance(name, str) or not name.strip():
        raise FieldProblem("expected_function_call.name", f"expected a function name, got {name!r}")
    args = call.get("arguments", {})
    if not isinstance(args, dict):
        raise FieldProblem(
            "expected_function_call.arguments",
            f"arguments must be an object, got {type(args).__name__}",
        )
    return name.strip(), args


def _labels(roles: list[str], turns: list, routing: Any, present: bool) -> list[str]:
    speakers = [r for r, t in zip(roles, turns, strict=True) if t.role == "customer"]
    labels = []
    if len(set(speakers)) > 1:
        labels.append("roles:" + ",".join(speakers))
    elif speakers and speakers[0] != "customer":
        labels.append(f"role:{speakers[0]}")
    if present:
        labels.append(
            f"routing:{routing}"
            if isinstance(routing, str)
            else "routing-json:" + json.dumps(routing, sort_keys=True, separators=(",", ":"))
        )
    return labels


def synthesise_state(
    tool: str, args: dict[str, Any], text: str, notes: list[str]
) -> dict[str, Any]:
    """A one-order support state that makes the expected call meaningful, for samples without
    an `order`: the order named by the call, a status the call needs, one line item."""
    status = "delivered" if tool in ("refund_items", "exchange_item") else "pending"
    amount = args.get("amount")
    price = amount if isinstance(amount, int | float) and not isinstance(amount, bool) else 0.0
    found = re.search(r"\bmy ([a-z]+(?: [a-z]+)?) (?:arrived|came|is|was|broke)", text.lower())
    name = found.group(1).capitalize() if found else "Item"
    order = {
        "order_id": args.get("order_id", sm.DEFAULT_ORDER_ID),
        "status": status,
        "items": [{"name": name, "qty": 1, "unit_price": price}],
    }
    if isinstance(args.get("shipping_address"), dict) and args["shipping_address"].get("name"):
        order["shipping_address"] = args["shipping_address"]
    notes.append(
        f"no order given: order with status {status} and one line item '{name}' at "
        f"{price:.2f} synthesised from the expected call"
    )
    return sm.map_order(order, notes)


class _Mapper:
    def __init__(self, label: str | None):
        self.label = label

    def __call__(self, record: SourceRecord) -> dict[str, Any]:
        value: dict[str, Any] = record.value
        no_unknown_fields(value, TOP_FIELDS, FORMAT)
        sample_id = require(value, "sample_id", (str, int))
        name, args = _call(value)
        support = is_support(value)
        turns, roles = sm.map_turns(
            value.get("input"), "input", sm.chapter_role if support else speaker_role
        )
        labels = _labels(roles, turns, value.get("expected_routing"), "expected_routing" in value)
        notes: list[str] = []
        recorded = False
        if support:
            try:
                domain, state, conversation, expected = self._support(
                    value, name, args, turns, notes
                )
            except FieldProblem as exc:  # the pack cannot take it whole: recorded tools can
                domain, state, conversation, expected = self._recorded(value, name, args, turns)
                notes = [_recorded_note(domain, exc)]
                labels.append("recorded-tools")
                recorded = True
            if not recorded and expected["outcome"] == "clarify":
                labels.append("clarify")
        else:
            domain, state, conversation, expected = self._generic(value, name, args, turns, notes)
        return case_data(
            record,
            FORMAT,
            domain=domain,
            state=state,
            conversation=conversation,
            expected=expected,
            intents=sc.intents_of_dumped(expected["tool_calls"])
            if support and not recorded
            else (),
            labels=labels,
            difficulty_=difficulty(len(expected["tool_calls"]), len(turns)),
            source_id=str(sample_id),
            confident=not (support and "order" not in value) and not recorded,
            notes=notes,
        )

    def _support(self, value: dict, name: str, args: dict, turns: list, notes: list[str]) -> tuple:
        text = "\n".join(t.content for t in turns if t.role == "customer")
        if "order" in value:
            state = sm.map_order(value["order"], notes)
        else:
            state = synthesise_state(sc.TOOL_MAP[name], args, text, notes)
        built = sc.support_call(name, args, state, text, notes, "expected_function_call")
        outcome = sc.infer_outcome(built, "", notes)
        conversation = [sm.auth_turn(state).model_dump(mode="json")]
        conversation += [t.model_dump(mode="json") for t in turns]
        expected = {
            "tool_calls": [c.model_dump(mode="json") for c in built],
            "forbidden_calls": sc.no_write_rule(outcome),
            "outcome": outcome,
            "optimal_steps": sc.optimal_steps(built, text),
        }
        return "support", state, conversation, expected

    def _recorded(self, value: dict, name: str, args: dict, turns: list) -> tuple:
        """A sample the support pack cannot take whole (an order without line items, say), as
        a case of a generic domain that runs on recorded tools (`casemill.domains.recorded`):
        its order as the record a `get_order` returns, its call as the expected write."""
        domain = f"generic:{self.label or 'ecommerce'}"
        order = value.get("order")
        state: dict[str, Any] = {"tools": {name: {"kind": "write", "params": sorted(args)}}}
        if isinstance(order, dict):
            key = order.get("order_id", order.get("id", args.get("order_id", "order")))
            state["records"] = {"order": {str(key): order}}
            state["tools"]["get_order"] = {"kind": "read", "params": ["order_id"]}
        expected = {"tool_calls": [{"tool": name, "params": args}], "outcome": "resolve"}
        expected["optimal_steps"] = 3 if isinstance(order, dict) else 2
        return domain, state, [t.model_dump(mode="json") for t in turns], expected

    def _generic(self, value: dict, name: str, args: dict, turns: list, notes: list[str]) -> tuple:
        domain = f"generic:{self.label or domain_label(value)}"
        state = sm.map_order(value["order"], notes) if "order" in value else {}
        if "order" in value:
            notes.append(f"{name} is not a support tool: the sample's order kept in {domain}")
        notes.append(
            f"domain has no tool specifications: {name} kept as written; "
            "outcome 'resolve' assumed (a function call is expected)"
        )
        expected = {
            "tool_calls": [{"tool": name, "params": args}],
            "outcome": "resolve",
            "optimal_steps": 2,
        }
        return domain, state, [t.model_dump(mode="json") for t in turns], expected


def _recorded_note(domain: str, problem: FieldProblem) -> str:
    return (
        f"the support pack cannot take this sample whole ({problem.field}: {problem.message}): "
        f"imported into {domain} to run on recorded tools (its order answers get_order, its "
        "call is the expected write); check the label in review"
    )


def import_companion(path: str | Path, label: str | None = None) -> ImportResult:
    """Import a companion-repository JSONL file. `label` names one generic domain for every
    non-e-commerce sample (default: per sample, see `domain_label`)."""
    result, _ = import_records(FORMAT, path, _Mapper(label))
    inferred = infer_tools_by_domain(result.cases)
    notes = []
    for domain, specs in inferred.items():
        count = sum(1 for c in result.cases if c.domain == domain)
        notes.append(
            f"{count} case(s) imported into {domain}: that domain has no tool specifications; "
            f"{len(specs)} tool(s) inferred from the cases: "
            + ", ".join(s["function"]["name"] for s in specs)
        )
    return ImportResult(
        result.format,
        result.source,
        result.read,
        result.cases,
        result.quarantined,
        tuple(notes),
        inferred,
    )


# -- export -------------------------------------------------------------------------------------
def _labelled_id(record: dict[str, Any], domain: str) -> str:
    """The sample id of a generic case, prefixed with its domain label when the import would not
    read that label back from the record (a case made in casemill has its bare id, c_...)."""
    sample_id = str(record["sample_id"])
    label = domain.partition(":")[2]
    if re.fullmatch(r"[a-z]+", label) and domain_label(record) != label:
        return f"{label}_{sample_id}"
    return sample_id


def export_record(case: Case) -> dict[str, Any]:
    no_user_scenario(case, FORMAT)
    if len(case.expected.tool_calls) != 1:
        raise FieldProblem(
            "expected.tool_calls",
            "the companion format holds exactly one expected call; "
            f"this case has {len(case.expected.tool_calls)}",
            rule="not one expected call",
        )
    if not any(t.role == "customer" for t in case.conversation):
        raise FieldProblem(
            "conversation",
            "the companion format needs a conversation with a customer turn",
            rule="no customer turn",
        )
    call = case.expected.tool_calls[0]
    state = case.environment.state
    source = case.provenance.source
    out: dict[str, Any] = {
        "sample_id": source.conversation_id if source and source.conversation_id else case.id,
        "input": export_turns(case),
    }
    if case.domain == "support":
        exported = sc.export_call(call, state)
        out["expected_function_call"] = {"name": exported["tool"], "arguments": exported["params"]}
        synthesised = "no order given" in (case.provenance.notes or "")
        if len(state.get("orders") or {}) > 1:
            raise FieldProblem(
                "environment.state.orders",
                f"the companion format holds one order; this case has {len(state['orders'])}",
                rule="more than one order",
            )
        if not synthesised:
            out["order"] = sm.export_order(state)
    else:
        out["expected_function_call"] = {"name": call.tool, "arguments": dict(call.params)}
        if isinstance(state.get("orders"), dict) and isinstance(state.get("customers"), dict):
            out["order"] = sm.export_order(state)
        out["sample_id"] = _labelled_id(out, case.domain)
    for label in case.tags.labels:
        if label.startswith("routing:"):
            out["expected_routing"] = label[len("routing:") :]
        elif label.startswith("routing-json:"):
            out["expected_routing"] = json.loads(label[len("routing-json:") :])
    return out


def export_companion(cases: Iterable[Case], path: str | Path) -> ExportResult:
    """Write `cases` in the companion JSONL format; cases it cannot hold are skipped and
    reported (see `export_record`, and `fidelity` for the state and read-back reasons)."""
    guarded = faithful(FORMAT, export_record, _Mapper(None))
    return export_records(FORMAT, cases, path, guarded, guarded.narrowed)
