"""Validating files end to end: every layer, a typed report, and the quarantine file.

report = validate_paths(["seeds/"], strict=False, batch=True)
report.ok                 # no error anywhere
report.valid              # the cases kept, with file and line
report.bad                # refused records, each with its findings
report.counts()           # {layer: {rule: n}}
write_quarantine(report, "seeds.quarantine.jsonl")
"""

from __future__ import annotations

import base64
import logging
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casemill.case.model import Case
from casemill.domains import Domain, get_domain
from casemill.errors import UserError
from casemill.gctune import bulk_allocation
from casemill.io.jsonl import atomic_write_jsonl
from casemill.validation.batch import BatchRules, Row, batch_findings
from casemill.validation.findings import Finding
from casemill.validation.lints import lint_findings
from casemill.validation.loading import BadRecord, LoadedCase, load_cases
from casemill.validation.semantic import semantic_findings

log = logging.getLogger(__name__)

LAYERS = ("json", "schema", "model", "semantic", "lint", "batch")


@dataclass
class ValidationReport:
    files: list[str]
    records: int
    valid: list[LoadedCase]
    bad: list[BadRecord]
    warnings: list[Finding] = field(default_factory=list)
    batch_issues: list[Finding] = field(default_factory=list)
    strict: bool = False
    batch_checked: bool = True
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def findings(self) -> list[Finding]:
        """Every finding: errors of bad records, batch issues, then warnings, in file order."""
        errors = [f for bad in self.bad for f in bad.findings]

        def key(f: Finding) -> tuple[str, int]:
            return (f.file or "", f.line or 0)

        return sorted(errors + self.batch_issues, key=key) + sorted(self.warnings, key=key)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.bad and not any(f.severity == "error" for f in self.batch_issues)

    @property
    def cases(self) -> list[Case]:
        return [item.case for item in self.valid]

    def counts(self) -> dict[str, dict[str, int]]:
        """Findings per layer and rule (errors and warnings)."""
        counter: dict[str, Counter] = {layer: Counter() for layer in LAYERS}
        for finding in self.findings:
            counter.setdefault(finding.layer, Counter())[finding.rule] += 1
        return {layer: dict(sorted(c.items())) for layer, c in counter.items()}

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "strict": self.strict,
            "batch_checked": self.batch_checked,
            "files": self.files,
            "records": self.records,
            "valid": len(self.valid),
            "bad": len(self.bad),
            "warnings": len(self.warnings),
            "counts": self.counts(),
            "findings": [f.as_dict() for f in self.findings],
            "bad_records": [
                {"file": b.file, "line": b.line, "case_id": b.case_id} for b in self.bad
            ],
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
        }


def _domain(case: Case, cache: dict[str, Domain | Finding]) -> Domain | Finding:
    if case.domain not in cache:
        try:
            cache[case.domain] = get_domain(case.domain)
        except UserError as exc:
            cache[case.domain] = Finding("semantic", "unknown-domain", str(exc), field="domain")
    return cache[case.domain]


def check_case(case: Case, *, strict: bool = False, domain: Domain | None = None) -> list[Finding]:
    """Semantic findings and lints of one model-valid case (lints are errors when `strict`)."""
    if domain is None:
        found = _domain(case, {})
        if isinstance(found, Finding):
            return [Finding(**{**found.as_dict(), "case_id": case.id})]
        domain = found
    out = semantic_findings(case, domain)
    for lint in lint_findings(case, domain):
        out.append(Finding(**{**lint.as_dict(), "severity": "error"}) if strict else lint)
    return out


def _check_loaded(
    items: Iterable[LoadedCase], strict: bool, report: ValidationReport
) -> list[LoadedCase]:
    domains: dict[str, Domain | Finding] = {}
    kept: list[LoadedCase] = []
    for item in items:
        domain = _domain(item.case, domains)
        if isinstance(domain, Finding):
            found = [Finding(**{**domain.as_dict(), "case_id": item.case.id})]
        else:
            try:
                found = check_case(item.case, strict=strict, domain=domain)
            except Exception as exc:  # a checker bug must not cost the other records
                log.exception("checking %s:%s failed", item.file, item.line)
                message = f"the semantic check crashed ({type(exc).__name__}: {exc}); please report"
                found = [Finding("semantic", "check-crashed", message, case_id=item.case.id)]
        located = [f.located(item.file, item.line) for f in found]
        errors = [f for f in located if f.severity == "error"]
        if errors:
            report.bad.append(BadRecord(item.file, item.line, item.raw, located, item.case.id))
        else:
            report.warnings += located
            kept.append(item)
    return kept


def _apply_batch(
    kept: list[LoadedCase], rules: BatchRules | None, report: ValidationReport
) -> list[LoadedCase]:
    rows = [Row(item.case, item.file, item.line) for item in kept]
    found = batch_findings(rows, rules)
    by_place: dict[tuple[str | None, int | None], list[Finding]] = {}
    for finding in found:
        if finding.line is None:
            report.batch_issues.append(finding)
        else:
            by_place.setdefault((finding.file, finding.line), []).append(finding)
    still = []
    for item in kept:
        extra = by_place.get((item.file, item.line))
        if extra:
            mine = [w for w in report.warnings if (w.file, w.line) == (item.file, item.line)]
            report.bad.append(BadRecord(item.file, item.line, item.raw, extra + mine, item.case.id))
        else:
            still.append(item)
    return still


def validate_paths(
    paths: Iterable[str | Path],
    strict: bool = False,
    batch: bool = True,
    *,
    schema: bool = True,
    rules: BatchRules | None = None,
) -> ValidationReport:
    """Validate every case in `paths` (files or folders) through all layers.

    Never raises for bad content (only `UserError` for a path that does not exist). Good cases
    are kept in `report.valid`; each bad record is in `report.bad` with its findings."""
    clock = time.perf_counter
    with bulk_allocation():
        start = clock()
        loaded = load_cases(paths, schema=schema)
        report = ValidationReport(loaded.files, loaded.records, [], list(loaded.bad), strict=strict)
        report.seconds["load"] = clock() - start
        start = clock()
        kept = _check_loaded(loaded.cases, strict, report)
        report.seconds["semantic+lint"] = clock() - start
    if batch:
        start = clock()
        try:
            kept = _apply_batch(kept, rules, report)
        except Exception as exc:  # the suite failing must not cost the report
            log.exception("the batch suite failed")
            message = f"the Great Expectations suite could not run ({type(exc).__name__}: {exc})"
            report.batch_issues.append(Finding("batch", "suite-failed", message))
        report.seconds["batch"] = clock() - start
    report.batch_checked = batch
    report.valid = kept
    report.bad.sort(key=lambda b: (b.file, b.line))
    bad_places = {(b.file, b.line) for b in report.bad}
    report.warnings = [w for w in report.warnings if (w.file, w.line) not in bad_places]
    log.info("validated %d records: %d valid, %d bad", report.records, len(kept), len(report.bad))
    return report


def quarantine_record(bad: BadRecord) -> dict[str, Any]:
    """One quarantine line: where the record was, why it was refused, and the record itself
    (its text when it is UTF-8, else base64 of its bytes)."""
    record: dict[str, Any] = {
        "file": bad.file,
        "line": bad.line,
        "case_id": bad.case_id,
        "fields": sorted({f.field for f in bad.findings if f.field}),
        "reasons": [
            {
                "layer": f.layer,
                "rule": f.rule,
                "field": f.field,
                "severity": f.severity,
                "message": f.message,
            }
            for f in bad.findings
        ],
    }
    try:
        record["raw"] = bad.raw.decode("utf-8")
    except UnicodeDecodeError:
        record["raw_base64"] = base64.b64encode(bad.raw).decode("ascii")
    return record


def write_quarantine(report: ValidationReport, path: str | Path) -> int:
    """Write every bad record of `report` to `path` (JSONL, atomically); returns how many."""
    atomic_write_jsonl(path, (quarantine_record(b) for b in report.bad))
    return len(report.bad)
