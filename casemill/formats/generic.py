"""Tool specifications for generic domains, inferred from the imported cases' expected calls.

Generic domains (`generic:LABEL`) carry no tool specifications of their own; an import reports,
per generic domain, the function definitions its cases imply (names, parameters, JSON types
seen, required when every call passes them), so a user can review them and write a domain pack.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from casemill.case.model import Case
from casemill.domains.tau2_retail.specs import infer_tool_specs


def infer_tools_by_domain(cases: Iterable[Case]) -> dict[str, tuple[dict[str, Any], ...]]:
    actions: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        if not case.domain.startswith("generic"):
            continue
        for call in case.expected.tool_calls:
            actions.setdefault(case.domain, []).append(
                {"name": call.tool, "arguments": dict(call.params)}
            )
    out = {}
    for domain, seen in sorted(actions.items()):
        specs = []
        for spec in infer_tool_specs(seen):
            fn = dict(spec["function"])
            fn["description"] = (
                f"Inferred from {domain} cases' expected calls; no specification was given."
            )
            specs.append({"type": "function", "function": fn})
        out[domain] = tuple(specs)
    return out
