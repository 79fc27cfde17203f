"""Whether an export carries a case faithfully: what the book's formats have no place for, and
the read-back check every exported record passes.

The book's order (`support_map`) holds one customer's order and its line items; the customer is
synthesised again on import (id `C1001`, e-mail from the name) and payment methods, item
variants and the product catalogue are left out. That is faithful while the test does not
depend on them. It is not when the support policy or the agent's view of the order does:

| case state | why it matters | skip reason (`rule`) |
| --- | --- | --- |
| `environment.faults` | the tool failures the case tests | `tool faults` |
| `state.products` in an exchange case | the exchange policy checks the new variant (same | `product catalogue` |
|                                      | product, in stock, same price) against it | |
| `orders[].refunds` / `exchanges` | refunds already made cap what is left to refund; | `order history` |
|                                  | `get_order` shows both to the agent | |
| `orders[].note` | free text the agent reads in `get_order` | `order note` |
| `state.tickets` | escalations already open | `tickets` |

Then the read-back check (`read_back`): the exported record, as written, goes through the
format's own importer (mapper, model, semantic checks with the replay of the expected calls),
and the case it gives must be in the same domain with the same outcome and expected calls that
match the original's under their rules (and, outside the support domain, the same state); a
record its importer would quarantine or read as another test is skipped (`round trip`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from casemill.case.matching import params_match
from casemill.case.model import Case, ForbiddenCall
from casemill.formats.common import Mapper, build_case, model_findings
from casemill.formats.records import SourceRecord
from casemill.formats.result import FieldProblem
from casemill.text import count
from casemill.validation.findings import Finding

ExportRecord = Callable[[Case], dict[str, Any]]

# order history the book's order cannot hold, and why the test depends on it
HISTORY: dict[str, str] = {
    "refunds": "the refund policy refunds no more than is left after them, "
    "and the agent sees them in the order",
    "exchanges": "the agent sees them in the order",
}


def _listed(ids: list[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def is_exchange(case: Case) -> bool:
    """An exchange case: its intents, its expected calls or its forbidden calls say so."""
    tools = [c.tool for c in case.expected.tool_calls]
    tools += [c.tool for c in case.expected.forbidden_calls if c.tool]
    return "exchange" in case.tags.intents or "exchange_item" in tools


def unheld_state(case: Case, fmt: str) -> None:
    """`FieldProblem` for the first part of the case's environment the book's order has no place
    for and the test depends on (see the module's table)."""
    faults = case.environment.faults
    if faults:
        raise FieldProblem(
            "environment.faults",
            f"the {fmt} format has no place for injected tool faults "
            f"({_listed([f'{f.tool} {f.kind}' for f in faults])}); "
            "without them the case no longer tests how the agent handles a failing tool",
            rule="tool faults",
        )
    if case.domain != "support":
        return
    state = case.environment.state
    products = state.get("products") or {}
    if products and is_exchange(case):
        raise FieldProblem(
            "environment.state.products",
            f"the {fmt} format has no place for the product catalogue "
            f"(products {_listed(sorted(products))}, with their variants) this exchange case "
            "is decided on: the exchange policy checks the new variant against it (same "
            "product, in stock, same price), and without it no exchange replays",
            rule="product catalogue",
        )
    for order_id, order in (state.get("orders") or {}).items():
        where = f"environment.state.orders.{order_id}"
        for key, why in HISTORY.items():
            if order.get(key):
                raise FieldProblem(
                    f"{where}.{key}",
                    f"the {fmt} format's order has no place for the {len(order[key])} {key} "
                    f"already made on order {order_id}: {why}",
                    rule="order history",
                )
        if order.get("note"):
            raise FieldProblem(
                f"{where}.note",
                f"the {fmt} format's order has no place for the note on order {order_id}, "
                "which the agent reads in the order",
                rule="order note",
            )
    if state.get("tickets"):
        raise FieldProblem(
            "environment.state.tickets",
            f"the {fmt} format has no place for the {len(state['tickets'])} escalation "
            "ticket(s) already open",
            rule="tickets",
        )


def read_back(case: Case, record: dict[str, Any], fmt: str, mapper: Mapper) -> Case:
    """The case the format's own importer reads `record` back as; `FieldProblem` (reason
    `round trip`) when it would be quarantined or give another test than `case`."""
    source = SourceRecord(f"<{fmt} export>", 1, json.loads(json.dumps(record)))

    def problem(field: str, detail: str) -> FieldProblem:
        message = f"the {fmt} importer would not read the exported record back as this case: "
        return FieldProblem(field, message + detail, rule="round trip")

    try:
        data = mapper(source)
    except FieldProblem as exc:
        raise problem(exc.field, exc.message) from None
    except ValidationError as exc:
        finding = model_findings(exc, source.file, None)[0]
        raise problem(finding.field or "", finding.message) from None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise problem("", f"{type(exc).__name__}: {exc}") from None
    back, findings = build_case(data, source)
    if back is None:
        raise problem(findings[0].field or "", "; ".join(f.message for f in findings))
    if back.domain != case.domain:
        raise problem("domain", f"it would be in domain {back.domain!r}, not {case.domain!r}")
    if back.expected.outcome != case.expected.outcome:
        raise problem(
            "expected.outcome",
            f"its outcome would be {back.expected.outcome!r}, not {case.expected.outcome!r}",
        )
    want, got = case.expected.tool_calls, back.expected.tool_calls
    if len(want) != len(got):
        raise problem("expected.tool_calls", f"it would expect {len(got)} call(s), not {len(want)}")
    for index, (a, b) in enumerate(zip(want, got, strict=True)):
        if a.tool != b.tool or not params_match(a, dict(b.params)):
            raise problem(
                f"expected.tool_calls[{index}]",
                f"it would expect {b.tool} {dict(b.params)}, not {a.tool} {dict(a.params)}",
            )
    if case.domain != "support" and back.environment.state != case.environment.state:
        raise problem("environment.state", "its environment state would differ")
    return back


def _forbids(call: ForbiddenCall) -> tuple:
    return (call.tool, call.any_write, json.dumps(dict(call.params), sort_keys=True))


def _shown(call: ForbiddenCall) -> str:
    if call.any_write:
        return "any write"
    params = dict(call.params)
    return f"{call.tool} {json.dumps(params, sort_keys=True)}" if params else f"{call.tool}"


def lost_forbidden(case: Case, back: Case) -> list[ForbiddenCall]:
    """The forbidden calls of `case` that the case read back (`back`) does not hold: the book's
    formats have no place for forbidden calls, and their importers forbid only what the
    outcome's rule forbids (no write at all for a refusal)."""
    kept = {_forbids(call) for call in back.expected.forbidden_calls}
    return [call for call in case.expected.forbidden_calls if _forbids(call) not in kept]


@dataclass
class Faithful:
    """`export_record` guarded: the record only when the format carries the case faithfully
    (`unheld_state`, then `read_back`); `FieldProblem` with the reason otherwise. A case whose
    test is kept but whose forbidden calls the format cannot hold is written, and a warning
    (rule `forbidden calls`) for it is added to `narrowed`: it is exported with fewer checks."""

    fmt: str
    export_record: ExportRecord
    mapper: Mapper
    narrowed: list[Finding] = field(default_factory=list)

    def __call__(self, case: Case) -> dict[str, Any]:
        record = self.export_record(case)
        unheld_state(case, self.fmt)
        back = read_back(case, record, self.fmt, self.mapper)
        lost = lost_forbidden(case, back)
        if lost:
            them = "them" if len(lost) > 1 else "it"
            message = (
                f"the {self.fmt} format has no place for {count(len(lost), 'forbidden call')} "
                f"({_listed([_shown(c) for c in lost], 3)}); exported without {them}, the case "
                f"no longer checks that the agent does not make {them}"
            )
            self.narrowed.append(
                Finding(
                    "schema",
                    "forbidden calls",
                    message,
                    field="expected.forbidden_calls",
                    case_id=case.id,
                    severity="warning",
                )
            )
        return record


def faithful(fmt: str, export_record: ExportRecord, mapper: Mapper) -> Faithful:
    return Faithful(fmt, export_record, mapper)
