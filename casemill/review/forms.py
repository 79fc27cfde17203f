"""The expected-state form of the web review: parse what the reviewer typed (the calls, the
outcome, the phrases the reply must and must not hold), check each call against the domain's
tool schemas, and build the edited case data. Problems come back as messages naming the call or
the field."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, get_args

from casemill.case.model import Case, Outcome
from casemill.domains import get_domain
from casemill.domains.base import param_errors


def tool_names(case: Case) -> list[str]:
    try:
        return [s["function"]["name"] for s in get_domain(case.domain).tool_specs]
    except Exception:  # noqa: BLE001 - an unknown domain offers no tool list; validation says why
        return []


def parse_calls(case: Case, form: Mapping[str, str]) -> tuple[list[dict[str, Any]], list[str]]:
    """Expected calls from form fields `tool_N` / `params_N` / `delete_N` (N = 0, 1, ...) and an
    optional new call `tool_new` / `params_new`. Returns (calls, problems)."""
    specs = {}
    try:
        specs = {s["function"]["name"]: s for s in get_domain(case.domain).tool_specs}
    except Exception:  # noqa: BLE001 - reported by the full validation below
        specs = {}
    old = case.expected.tool_calls
    calls: list[dict[str, Any]] = []
    problems: list[str] = []
    keys = [str(i) for i in range(len(old))] + (["new"] if form.get("tool_new", "").strip() else [])
    for key in keys:
        if form.get(f"delete_{key}"):
            continue
        label = f"call {int(key) + 1}" if key != "new" else "new call"
        tool = form.get(f"tool_{key}", "").strip()
        raw = form.get(f"params_{key}", "").strip() or "{}"
        try:
            params = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(
                f"{label} ({tool}): params are not valid JSON: {exc.msg} "
                f"at line {exc.lineno}, column {exc.colno}"
            )
            continue
        if not isinstance(params, dict):
            problems.append(
                f"{label} ({tool}): params must be a JSON object, got {type(params).__name__}"
            )
            continue
        if specs and tool not in specs:
            problems.append(
                f"{label}: tool {tool!r} does not exist; known: {', '.join(sorted(specs))}"
            )
            continue
        if tool in specs:
            problems += [f"{label} ({tool}): {m}" for m in param_errors(specs[tool], params)]
        match = {}
        if key != "new":
            kept = old[int(key)]
            if kept.tool == tool:
                match = {k: v.model_dump(mode="json") for k, v in kept.match.items() if k in params}
        calls.append({"tool": tool, "params": params, "match": match})
    return calls, problems


OUTCOMES: tuple[str, ...] = get_args(Outcome)
PHRASES = ("reply_contains", "reply_excludes")


def parse_expected(form: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """The other expected fields the form holds, each only when it holds it: `outcome`, and
    `reply_contains` / `reply_excludes` written a phrase a line. Returns (updates, problems)."""
    updates: dict[str, Any] = {}
    problems: list[str] = []
    if "outcome" in form:
        outcome = form["outcome"].strip()
        if outcome in OUTCOMES:
            updates["outcome"] = outcome
        else:
            problems.append(f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
    for name in PHRASES:
        if name in form:
            updates[name] = [line.strip() for line in form[name].splitlines() if line.strip()]
    return updates, problems


def with_calls(
    case: Case, calls: list[dict[str, Any]], updates: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The case's data with these expected calls and other expected fields."""
    data = case.model_dump(mode="json")
    data["expected"]["tool_calls"] = calls
    data["expected"].update(updates or {})
    return data
