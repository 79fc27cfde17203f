"""Parameter matching under a case's rules (see `ParamRule`)."""

from __future__ import annotations

import math
from typing import Any

from casemill.case.ids import canonical_json
from casemill.case.model import ExpectedCall, ForbiddenCall, ParamRule, ToolCall
from casemill.case.values import has_non_finite

EXACT = ParamRule()


def normalize_id(value: Any) -> str:
    return str(value).strip().lstrip("#").strip().upper()


def _as_number(value: Any) -> float | None:
    """`value` as a finite float, or None (not a number, NaN, an infinity, or an int too large
    for a float: such a value matches no number, it does not stop the scoring)."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            number = float(value)
        elif isinstance(value, str):
            number = float(value.strip().lstrip("$").replace(",", ""))
        else:
            return None
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _canonical(value: Any) -> str | None:
    """Canonical JSON of `value`, or None when it holds a number JSON has no place for (NaN, an
    infinity, an int past a double: an agent under test may send one, Python's `json` reads
    them): such a value matches nothing, and it does not stop the scoring."""
    return None if has_non_finite(value) else canonical_json(value)


def _same_json(expected: Any, actual: Any) -> bool:
    want = _canonical(expected)
    return want is not None and want == _canonical(actual)


def value_matches(expected: Any, actual: Any, rule: ParamRule = EXACT) -> bool:
    kind = rule.kind
    if kind == "any":
        return True
    if kind == "number":
        a, b = _as_number(expected), _as_number(actual)
        return a is not None and b is not None and math.isclose(a, b, abs_tol=rule.tolerance + 1e-9)
    if kind == "casefold":
        return str(expected).strip().casefold() == str(actual).strip().casefold()
    if kind == "id":
        return normalize_id(expected) == normalize_id(actual)
    if kind == "contains":
        return str(expected).strip().casefold() in str(actual).casefold()
    if kind == "set":
        if not isinstance(expected, list | tuple) or not isinstance(actual, list | tuple):
            return False
        if rule.ids:
            return sorted(map(normalize_id, expected)) == sorted(map(normalize_id, actual))
        want, got = list(map(_canonical, expected)), list(map(_canonical, actual))
        return None not in want and None not in got and sorted(want) == sorted(got)  # type: ignore[type-var]
    return _same_json(expected, actual)


def params_match(expected: ExpectedCall, actual: dict[str, Any]) -> bool:
    """Every expected parameter is present in `actual` and matches under its rule."""
    for name, want in expected.params.items():
        if name not in actual:
            return False
        if not value_matches(want, actual[name], expected.match.get(name, EXACT)):
            return False
    return True


def call_matches(expected: ExpectedCall, call: ToolCall) -> bool:
    return expected.tool == call.tool and params_match(expected, call.params)


def forbidden_hit(rule: ForbiddenCall, call: ToolCall, write_tools: frozenset[str]) -> bool:
    """Whether `call` is one that `rule` forbids."""
    if rule.any_write:
        return call.tool in write_tools
    if call.tool != rule.tool:
        return False
    for name, want in rule.params.items():
        if name not in call.params:
            return False
        got = call.params[name]
        if isinstance(want, str) and isinstance(got, str):
            if normalize_id(want) != normalize_id(got):
                return False
        elif isinstance(want, list) and isinstance(got, list):
            if not set(map(normalize_id, want)) <= set(map(normalize_id, got)):
                return False
        elif not value_matches(
            want, got, ParamRule(kind="number", tolerance=0.005)
        ) and not _same_json(want, got):
            return False
    return True
