"""Validation of queued and edited cases: the case model, then the domain's semantic checks
(tool names, parameter schemas, references, replay). Failures come back as findings."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.validation.findings import Finding
from casemill.validation.semantic import semantic_findings
from casemill.validation.sizes import size_findings


def case_findings(case: Case) -> list[Finding]:
    """Semantic findings of a valid case, and its text over the bounds every command applies
    (`casemill.validation.sizes`); an unknown domain is a finding, not a crash."""
    try:
        return size_findings(case) + semantic_findings(case)
    except UserError as exc:
        return [Finding("semantic", "domain", str(exc), field="domain", case_id=case.id)]


def model_findings(exc: ValidationError, case_id: str | None = None) -> list[Finding]:
    out = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or None
        out.append(Finding("model", err["type"], err["msg"], field=where, case_id=case_id))
    return out


def parse_edited_case(
    edited: Case | dict[str, Any] | str,
    validator: Callable[[Case], list[Finding]] = case_findings,
) -> tuple[Case | None, list[Finding]]:
    """An edited case (a model, a JSON object or its text) re-validated from scratch. Its id is
    recomputed (ids are content hashes, so an edit changes it). Returns (case or None, findings)."""
    if isinstance(edited, Case):
        data: Any = edited.model_dump(mode="json")
    elif isinstance(edited, str):
        try:
            data = json.loads(edited)
        except json.JSONDecodeError as exc:
            msg = f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
            return None, [Finding("json", "syntax", msg, line=exc.lineno)]
    else:
        data = edited
    if not isinstance(data, dict):
        return None, [
            Finding("json", "shape", f"expected a JSON object, got {type(data).__name__}")
        ]
    data = {**data, "id": ""}
    try:
        case = Case.model_validate(data)
    except ValidationError as exc:
        return None, model_findings(exc)
    return case, validator(case)
