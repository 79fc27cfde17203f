"""What a reviewer sees of one item, shared by the terminal and the web views: a one-line
summary, what the operator changed against the parent (most telling first), the environment in a
few lines, the expected behaviour, and the validation results. Plain data, no markup: each view
escapes and styles it its own way."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from casemill.case.model import Case
from casemill.review.diff import (
    Change,
    Row,
    case_changes,
    case_view,
    pretty_lines,
    short,
    side_by_side,
    word_diff,
)
from casemill.review.items import Item, needs_label

NEEDS_LABEL_FLAG = "NEEDS LABEL"

# The order a reviewer reads changes in: what the operator did to the input (conversation,
# environment), then what it did to the label (expected), then the tags.
_WEIGHT = (
    ("conversation", 0),
    ("user_scenario", 0),
    ("environment", 1),
    ("expected", 2),
    ("tags", 3),
)
LONG_TEXT = 40  # both sides at least this long: show a word diff, otherwise before -> after


@dataclass(frozen=True)
class ChangeView:
    path: str
    kind: str
    before: str
    after: str
    words: tuple[tuple[str, str], ...] = ()  # word diff when both sides are texts
    label_change: bool = False


@dataclass(frozen=True)
class ItemView:
    item: Item
    headline: str
    parent_label: str | None
    flags: tuple[str, ...]
    changes: tuple[ChangeView, ...]
    rows: tuple[Row, ...]
    environment: tuple[str, ...]
    expected_calls: tuple[tuple[str, str], ...]
    expectations: tuple[tuple[str, str], ...]
    findings: tuple[str, ...] = field(default=())
    label_note: str | None = None  # why the label is a low-confidence guess, for needs_label


def _turn_text(value: Any) -> Any:
    """An added or removed conversation turn reads as `role: content`, not as JSON."""
    if isinstance(value, dict) and "role" in value:
        calls = "".join(
            f" -> {c.get('tool')}({json.dumps(c.get('params', {}))})"
            for c in value.get("tool_calls", [])
        )
        return f"{value['role']}: {value.get('content', '')}{calls}"
    return value


def _change_view(change: Change) -> ChangeView:
    if change.path.startswith("conversation["):
        change = Change(change.path, _turn_text(change.before), _turn_text(change.after))
    words: tuple[tuple[str, str], ...] = ()
    if (
        isinstance(change.before, str)
        and isinstance(change.after, str)
        and min(len(change.before), len(change.after)) >= LONG_TEXT
    ):
        words = tuple(word_diff(change.before, change.after))
    return ChangeView(
        path=change.path,
        kind=change.kind,
        before="" if change.before is None else short(change.before, 400),
        after="" if change.after is None else short(change.after, 400),
        words=words,
        label_change=change.path.startswith("expected"),
    )


def ordered_changes(parent: Case, child: Case) -> list[ChangeView]:
    def weight(c: Change) -> int:
        return next((w for prefix, w in _WEIGHT if c.path.startswith(prefix)), 9)

    return [_change_view(c) for c in sorted(case_changes(parent, child), key=weight)]


def environment_lines(case: Case) -> list[str]:
    """The environment in a few lines: each order with its status and items, then faults."""
    state = case.environment.state
    lines = []
    for cid, cust in (state.get("customers") or {}).items():
        lines.append(f"customer {cid}: {cust.get('name', '?')} <{cust.get('email', '?')}>")
    for oid, order in (state.get("orders") or {}).items():
        items = ", ".join(
            f"{i.get('item_id')} {i.get('name')} "
            f"{float(i.get('price', 0)) * int(i.get('quantity', 1)):.2f}"
            for i in order.get("items", [])
        )
        extra = f" refunds: {len(order['refunds'])}" if order.get("refunds") else ""
        lines.append(f"order {oid} [{order.get('status')}] {items}{extra}")
    if not lines and state:
        lines.append(short(state, 300))
    for fault in case.environment.faults:
        lines.append(f"fault: {fault.tool} -> {fault.kind} (x{fault.times})")
    return lines


def expectation_lines(case: Case) -> list[tuple[str, str]]:
    exp = case.expected
    out = [("outcome", exp.outcome), ("optimal steps", str(exp.optimal_steps))]
    if exp.reply_contains:
        out.append(("reply contains", ", ".join(exp.reply_contains)))
    if exp.reply_excludes:
        out.append(("reply excludes", ", ".join(exp.reply_excludes)))
    for rule in exp.forbidden_calls:
        target = "any write" if rule.any_write else f"{rule.tool} {json.dumps(rule.params)}"
        out.append(("forbidden", f"{target} ({rule.reason})" if rule.reason else target))
    return out


def label(case: Case) -> str:
    intents = "+".join(case.tags.intents) or "no intent"
    calls = ", ".join(c.tool for c in case.expected.tool_calls) or "no call"
    return f"{intents} -> {case.expected.outcome} ({calls})"


def headline(item: Item) -> str:
    where = f"{item.origin}/{item.operator}"
    return f"{label(item.case)} · {where} · {item.case.tags.category}"


def parent_label(item: Item) -> str | None:
    """The parent's label when it differs from the case's (the operator changed the answer)."""
    if item.parent is None:
        return None
    before = label(item.parent)
    return before if before != label(item.case) else None


def first_change(item: Item) -> str:
    """One line for the queue: the operator's first change to the input (or to the label)."""
    if item.parent is None:
        return item.case.customer_text
    for change in ordered_changes(item.parent, item.case):
        if change.path.startswith("tags"):
            continue
        if change.words:
            added = " ".join(t.strip() for op, t in change.words if op == "+" and t.strip())
            removed = " ".join(t.strip() for op, t in change.words if op == "-" and t.strip())
            text = (f"-{removed} " if removed else "") + (f"+{added}" if added else "")
            return f"{change.path}: {text.strip()}"
        return f"{change.path}: {change.before or '∅'} → {change.after or '∅'}"
    return "(same content as the parent)"


def label_note(case: Case) -> str | None:
    """What a reviewer reads next to the NEEDS LABEL flag: why the label is uncertain."""
    if not needs_label(case):
        return None
    why = case.provenance.notes or "the miner could not derive the label with confidence"
    return f"low-confidence label, check the expected behaviour yourself: {why}"


def flags(item: Item, changes: list[ChangeView]) -> list[str]:
    out = []
    if not item.valid:
        out.append("FAILS VALIDATION")
    elif item.findings:
        out.append("warnings")
    if needs_label(item.case):
        out.append(NEEDS_LABEL_FLAG)
    if any(c.label_change for c in changes):
        out.append("expected changed")
    if item.edited:
        out.append("edited")
    if item.parent is None and item.origin == "generated":  # seeds and mined cases have none
        out.append("no parent")
    return out


def item_view(item: Item, context: int | None = 3) -> ItemView:
    changes = ordered_changes(item.parent, item.case) if item.parent else []
    left = pretty_lines(case_view(item.parent)) if item.parent else []
    rows = side_by_side(left, pretty_lines(case_view(item.case)), context) if item.parent else []
    calls = tuple(
        (c.tool, json.dumps(c.params, ensure_ascii=False, sort_keys=True))
        for c in item.case.expected.tool_calls
    )
    return ItemView(
        item=item,
        headline=headline(item),
        parent_label=parent_label(item),
        flags=tuple(flags(item, changes)),
        changes=tuple(changes),
        rows=tuple(rows),
        environment=tuple(environment_lines(item.case)),
        expected_calls=calls,
        expectations=tuple(expectation_lines(item.case)),
        findings=tuple(str(f) for f in item.findings),
        label_note=label_note(item.case),
    )


def params_text(params: dict[str, Any]) -> str:
    return json.dumps(params, ensure_ascii=False, sort_keys=True)


def item_summary(item: Item) -> dict[str, Any]:
    """One item as `casemill review list --json` and `show --json` give it (the case itself
    only in `show`)."""
    return {
        "case_id": item.case_id,
        "current_id": item.case.id,
        "batch_id": item.batch_id,
        "status": item.status,
        "valid": item.valid,
        "needs_label": needs_label(item.case),
        "origin": item.origin,
        "operator": item.operator,
        "intents": list(item.intents),
        "outcome": item.case.expected.outcome,
        "reviewer": item.reviewer,
        "decided_at": item.decided_at,
        "reason": item.reason,
        "lease_holder": item.lease_holder,
        "version": item.version,
        "exported_at": item.exported_at,
    }
