"""What changed between two cases: field-level changes, a side-by-side line diff of their JSON, and
a word diff of changed texts. Used for the operator's diff against the parent, and to record a
reviewer's edits."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

from casemill.case.model import Case

# What a reviewer reads first: the parts of a case an operator changes, most telling first.
SHOWN_FIELDS = ("conversation", "expected", "environment", "tags", "user_scenario")


@dataclass(frozen=True)
class Change:
    path: str
    before: Any
    after: Any

    @property
    def kind(self) -> str:
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        return "changed"


@dataclass(frozen=True)
class Row:
    """One row of a side-by-side diff: `tag` is equal, replace, delete or insert."""

    tag: str
    left_no: int | None
    left: str
    right_no: int | None
    right: str


# Values a reviewer reads as one unit: an expected or forbidden call, a fault, a tag field, the
# reply phrases. Their changes are shown whole instead of leaf by leaf.
REVIEW_ATOMS = re.compile(
    r"^(expected\.(tool_calls|forbidden_calls)\[\d+\]|environment\.faults\[\d+\]"
    r"|tags\.\w+|expected\.reply_\w+)$"
)


def json_changes(
    before: Any, after: Any, path: str = "", atom: re.Pattern[str] | None = None
) -> list[Change]:
    """Leaf-level differences between two JSON values, with dotted/indexed paths; a path that
    `atom` matches is compared as a whole."""
    if atom is not None and path and atom.match(path):
        return [] if before == after else [Change(path, before, after)]
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[Change] = []
        for key in list(before) + [k for k in after if k not in before]:
            sub = f"{path}.{key}" if path else str(key)
            out += json_changes(before.get(key), after.get(key), sub, atom)
        return out
    if isinstance(before, list) and isinstance(after, list):
        out = []
        for index in range(max(len(before), len(after))):
            left = before[index] if index < len(before) else None
            right = after[index] if index < len(after) else None
            out += json_changes(left, right, f"{path}[{index}]", atom)
        return out
    if before == after:
        return []
    return [Change(path, before, after)]


def case_view(case: Case, defaults: bool = False) -> dict[str, Any]:
    """The reviewable content of a case, without ids, provenance and review fields; fields at
    their default value are left out unless `defaults`."""
    data = case.model_dump(mode="json", exclude_defaults=not defaults)
    return {k: data[k] for k in SHOWN_FIELDS if k in data}


def case_changes(parent: Case, child: Case) -> list[Change]:
    """What changed from `parent` to `child`. Both sides keep their default values: a field
    moved off its default (category capability -> robustness) is a change from that default,
    not a value added to nothing."""
    return json_changes(
        case_view(parent, defaults=True), case_view(child, defaults=True), atom=REVIEW_ATOMS
    )


def pretty_lines(value: Any) -> list[str]:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False).splitlines()


def side_by_side(left: list[str], right: list[str], context: int | None = 3) -> list[Row]:
    """Rows of a side-by-side diff; with `context`, unchanged runs longer than twice the context
    are folded into one `fold` row."""
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            span = list(zip(range(i1, i2), range(j1, j2), strict=True))
            if context is not None and len(span) > 2 * context + 1:
                keep = span[:context] if rows else []
                tail = span[-context:] if i2 < len(left) or j2 < len(right) else []
                for i, j in keep:
                    rows.append(Row("equal", i + 1, left[i], j + 1, right[j]))
                hidden = len(span) - len(keep) - len(tail)
                rows.append(Row("fold", None, f"… {hidden} unchanged lines …", None, ""))
                for i, j in tail:
                    rows.append(Row("equal", i + 1, left[i], j + 1, right[j]))
            else:
                for i, j in span:
                    rows.append(Row("equal", i + 1, left[i], j + 1, right[j]))
            continue
        width = max(i2 - i1, j2 - j1)
        for k in range(width):
            i, j = i1 + k, j1 + k
            lt = left[i] if i < i2 else ""
            rt = right[j] if j < j2 else ""
            rows.append(Row(tag, i + 1 if i < i2 else None, lt, j + 1 if j < j2 else None, rt))
    return rows


_TOKEN = re.compile(r"\s+|[^\s]+")


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """(op, text) pieces turning `before` into `after`: op is '=', '-' or '+'."""
    a = _TOKEN.findall(before)
    b = _TOKEN.findall(after)
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(("=", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("-", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("+", "".join(b[j1:j2])))
    return out


def short(value: Any, limit: int = 80) -> str:
    """A one-line rendering of a JSON value for summaries."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
