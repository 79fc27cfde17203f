"""Shared machinery of the importers: one source record in, one case or one quarantine entry out.

`import_records` drives a per-record mapper over a source file; a mapper raises `FieldProblem`
for a bad field, and every case it returns is checked by the pydantic model and by the semantic
checks of its domain (`casemill.validation.semantic`) before it is kept.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from casemill.case.model import Case
from casemill.formats.records import SourceRecord, read_records
from casemill.formats.result import ExportResult, FieldProblem, ImportResult, Quarantined, located
from casemill.io.jsonl import atomic_write_jsonl
from casemill.validation.findings import Finding
from casemill.validation.semantic import semantic_findings
from casemill.validation.sizes import size_findings

log = logging.getLogger(__name__)

Mapper = Callable[[SourceRecord], dict[str, Any]]


def model_findings(exc: ValidationError, file: str, line: int | None) -> list[Finding]:
    out = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or None
        out.append(Finding("model", "case-model", err["msg"], field=field, file=file, line=line))
    return out


def build_case(data: dict[str, Any], record: SourceRecord) -> tuple[Case | None, list[Finding]]:
    """Validate `data` as a case, then semantically; the case, or the findings that refuse it."""
    try:
        case = Case.model_validate(data)
    except ValidationError as exc:
        return None, model_findings(exc, record.file, record.line)
    errors = [
        f.located(record.file, record.line)
        for f in size_findings(case) + semantic_findings(case)
        if f.severity == "error"
    ]
    return (None, errors) if errors else (case, [])


def import_records(
    fmt: str,
    path: str | Path,
    mapper: Mapper,
    records: Iterable[SourceRecord] | None = None,
) -> tuple[ImportResult, list[SourceRecord]]:
    """Run `mapper` over every record of `path`; also return the records that became cases, in
    the same order as the result's cases."""
    cases: list[Case] = []
    kept: list[SourceRecord] = []
    quarantined: list[Quarantined] = []
    first_line: dict[str, int] = {}
    read = 0
    for record in records if records is not None else read_records(path):
        read += 1
        if record.error:
            finding = Finding("json", "parse", record.error, file=record.file, line=record.line)
            quarantined.append(Quarantined(record.file, record.line, record.raw, (finding,)))
            continue
        try:
            data = mapper(record)
        except FieldProblem as exc:
            findings = [located(exc, record.file, record.line)]
        except ValidationError as exc:
            findings = model_findings(exc, record.file, record.line)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            log.exception("%s:%s: record could not be mapped", record.file, record.line)
            message = f"record could not be mapped ({type(exc).__name__}: {exc})"
            findings = [
                Finding("schema", "mapper-error", message, file=record.file, line=record.line)
            ]
        else:
            findings = []
        if findings:
            quarantined.append(Quarantined(record.file, record.line, record.value, tuple(findings)))
            continue
        case, findings = build_case(data, record)
        if case is not None and case.id in first_line:
            message = f"same content as line {first_line[case.id]} (case id {case.id}); kept once"
            findings = [
                Finding("batch", "duplicate-id", message, file=record.file, line=record.line)
            ]
            case = None
        if case is None:
            quarantined.append(Quarantined(record.file, record.line, record.value, tuple(findings)))
            continue
        first_line[case.id] = record.line
        cases.append(case)
        kept.append(record)
    log.info("%s: %d read, %d imported, %d quarantined", path, read, len(cases), len(quarantined))
    return ImportResult(fmt, str(path), read, tuple(cases), tuple(quarantined)), kept


def require(
    record: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str | None = None
) -> Any:
    if key not in record:
        raise FieldProblem(where or key, f"missing required field '{key}'")
    value = record[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise FieldProblem(where or key, f"expected {names}, got {type(value).__name__}")
    return value


def named_calls(actions: list[Any], where: str, args_key: str) -> list[tuple[str, dict[str, Any]]]:
    """`[{"name": tool, args_key: {...}}, ...]` (a benchmark's expected actions) as (tool,
    arguments) pairs; `FieldProblem` at `where[n]` for an entry of another shape."""
    out = []
    for n, action in enumerate(actions):
        at = f"{where}[{n}]"
        if not isinstance(action, dict):
            raise FieldProblem(at, f"expected an action object, got {type(action).__name__}")
        name = action.get("name")
        if not isinstance(name, str) or not name.strip():
            raise FieldProblem(f"{at}.name", f"expected a tool name, got {name!r}")
        args = action.get(args_key, {})
        if not isinstance(args, dict):
            raise FieldProblem(
                f"{at}.{args_key}", f"{args_key} must be an object, got {type(args).__name__}"
            )
        out.append((name, args))
    return out


def no_unknown_fields(
    record: dict[str, Any], allowed: Iterable[str], fmt: str, prefix: str = ""
) -> None:
    unknown = sorted(set(record) - set(allowed))
    if unknown:
        raise FieldProblem(
            prefix + unknown[0],
            f"unknown field '{unknown[0]}' in the {fmt} format; "
            f"expected: {', '.join(sorted(allowed))}",
            "unknown-field",
        )


def phrases(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
        raise FieldProblem(where, "expected a list of non-empty strings")
    return tuple(value)


def difficulty(calls: int, turns: int) -> str:
    if calls >= 3 or turns >= 5:
        return "hard"
    if calls <= 1 and turns <= 1:
        return "easy"
    return "medium"


def case_data(
    record: SourceRecord,
    fmt: str,
    *,
    domain: str,
    state: dict[str, Any],
    expected: dict[str, Any],
    conversation: list[dict[str, Any]] | None = None,
    user_scenario: str | None = None,
    intents: Iterable[str] = (),
    labels: Iterable[str] = (),
    difficulty_: str = "medium",
    source_id: str | None = None,
    confident: bool = True,
    notes: Iterable[str] = (),
    customer: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The case dict every importer returns: imported origin, the source's file, line, format and
    id, the notes of what was inferred."""
    return {
        "domain": domain,
        "environment": {"state": state},
        "conversation": conversation or [],
        "user_scenario": user_scenario,
        "customer": customer,
        "expected": expected,
        "tags": {
            "category": "capability",
            "intents": list(intents),
            "difficulty": difficulty_,
            "labels": list(labels),
        },
        "provenance": {
            "origin": "imported",
            "source": {
                "file": record.file,
                "line": record.line,
                "format": fmt,
                "conversation_id": source_id,
            },
            "label_confidence": "high" if confident else "low",
            "notes": "; ".join(notes),
        },
    }


def no_user_scenario(case: Case, fmt: str) -> None:
    """`FieldProblem` (reason `user scenario`) for a case with a user scenario: the book's
    formats hold the customer's turns as scripted text, and a scenario is instructions for a
    simulated customer (what to say if asked, what to insist on); given as the customer's words
    it would hand the agent what the customer keeps back, and dropped it would change the test.
    The same for a case's simulated customer (reason `simulated customer`)."""
    if case.user_scenario:
        raise FieldProblem(
            "user_scenario",
            f"a user scenario (instructions for a simulated customer) has no place in the {fmt} "
            "format, which holds the customer's turns as scripted text",
            rule="user scenario",
        )
    if case.customer is not None and (case.customer.script or case.customer.facts):
        raise FieldProblem(
            "customer",
            f"what the simulated customer says later or knows (customer.script, customer.facts) "
            f"has no place in the {fmt} format; dropped, it would change the test",
            rule="simulated customer",
        )


def export_records(
    fmt: str,
    cases: Iterable[Case],
    path: str | Path,
    export_record: Callable[[Case], dict],
    narrowed: list[Finding] | None = None,
) -> ExportResult:
    """Write `export_record(case)` for each case as JSON Lines; a case the format cannot hold
    (`FieldProblem`) is skipped and reported. `narrowed`: the warnings `export_record` adds to
    for cases it writes with fewer checks (`fidelity.Faithful`)."""
    records, skipped = [], []
    for case in cases:
        try:
            records.append(export_record(case))
        except FieldProblem as exc:
            rule = "export" if exc.rule == "format" else exc.rule  # a reason's name
            skipped.append(Finding("schema", rule, exc.message, field=exc.field, case_id=case.id))
    atomic_write_jsonl(path, records)
    return ExportResult(fmt, str(path), len(records), tuple(skipped), tuple(narrowed or ()))
