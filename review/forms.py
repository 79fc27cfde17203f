"""The expected-calls form of the web review: parse what the reviewer typed, check each call
against the domain's tool schemas, and build the edited case data. Problems come back as messages
naming the call and the field."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from casemill.case.model import Case
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


def with_calls(case: Case, calls: list[dict[str, Any]]) -> dict[str, Any]:
    data = case.model_dump(mode="json")
    data["expected"]["tool_calls"] = calls
    return data
