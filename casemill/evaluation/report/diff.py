"""The environment diff of a failing case: where the final state differs from the expected one
(the state obtained by replaying the expected calls), path by path."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MISSING = "(absent)"
MAX_ROWS = 200


@dataclass(frozen=True)
class DiffRow:
    path: str
    expected: str
    actual: str


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaves of a JSON value by dotted path (list elements by index)."""
    out: dict[str, Any] = {}
    if isinstance(value, dict) and value:
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            out.update(flatten(item, f"{prefix}[{index}]"))
    else:
        out[prefix or "(root)"] = value
    return out


def _show(value: Any) -> str:
    if value is MISSING:
        return MISSING
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _filled(path: str, empty: Any, missing: Any, other: dict[str, Any]) -> bool:
    """Whether `path` is an empty list or object on one side that the other side filled (its
    leaves are rows of their own)."""
    if missing is not MISSING or empty not in ([], {}):
        return False
    return any(p.startswith((f"{path}[", f"{path}.")) for p in other)


def state_diff(expected: dict | None, actual: dict | None, limit: int = MAX_ROWS) -> list[DiffRow]:
    """Rows where `actual` differs from `expected`, sorted by path."""
    if expected is None or actual is None:
        return []
    want, got = flatten(expected), flatten(actual)
    rows = []
    for path in sorted(set(want) | set(got)):
        a, b = want.get(path, MISSING), got.get(path, MISSING)
        if _filled(path, a, b, got) or _filled(path, b, a, want):
            continue  # `[]` against the elements that filled it: those rows say it
        if a is MISSING or b is MISSING or a != b:
            rows.append(DiffRow(path, _show(a), _show(b)))
            if len(rows) >= limit:
                break
    return rows
