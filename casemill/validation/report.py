"""Validating files end to end: every layer, a typed report, and the quarantine file.

report = validate_paths(["seeds/"], strict=False, batch=True)
report.ok                 # no error anywhere
report.valid              # the cases kept, with file and line
report.bad                # refused records, each with its findings
report.counts()           # {layer: {rule: n}}
write_quarantine(report, "seeds.quarantine.jsonl")

The input is streamed: each record goes through every per-record layer (json, schema, model,
semantic, lint) as it is read, and the batch layer gets a few scalars a case (`BatchColumns`).
`keep_records=False` keeps no case at all (`report.valid` stays empty, `report.valid_count`
counts them, bad records keep their place and findings, not their bytes): memory then grows
with the findings, not with the cases, whatever the size of the input (`casemill validate`).
"""

from __future__ import annotations

import base64
import logging
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from casemill.case.model import Case
from casemill.domains import Domain, get_domain
from casemill.errors import UserError
from casemill.gctune import bulk_allocation, checkpoint
from casemill.io.jsonl import atomic_write_jsonl, read_jsonl
from casemill.validation.batch import BatchColumns, BatchRules, batch_findings
from casemill.validation.findings import Finding
from casemill.validation.lints import lint_findings
from casemill.validation.loading import BadRecord, LoadedCase, Loader, expand_paths
from casemill.validation.reread import Rereader, fingerprint
from casemill.validation.schema import SchemaLayer
from casemill.validation.semantic import semantic_findings

Tick = Callable[[int], None]

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
    records_kept: bool = True  # False: `valid` stays empty, bad records keep no bytes
    streamed_valid: int = 0  # how many cases are valid, when they were not kept

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
    def valid_count(self) -> int:
        """How many cases passed every layer (kept in `valid` unless `records_kept` is False)."""
        return len(self.valid) if self.records_kept else self.streamed_valid

    @property
    def cases(self) -> list[Case]:
        if not self.records_kept:
            raise ValueError("this report kept no cases (validate_paths(..., keep_records=False))")
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
            "valid": self.valid_count,
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


def _case_findings(
    item: LoadedCase, strict: bool, domains: dict[str, Domain | Finding]
) -> list[Finding]:
    """Semantic findings and lints of one loaded case, located at its file and line."""
    domain = _domain(item.case, domains)
    if isinstance(domain, Finding):
        found = [Finding(**{**domain.as_dict(), "case_id": item.case.id})]
    else:
        try:
            found = check_case(item.case, strict=strict, domain=domain)
        except Exception as exc:  # a checker bug must not cost the other records
            # the finding says it on screen; the traceback is for a log file (debug level),
            # where a report of the bug can take it from
            log.debug("checking %s:%s crashed", item.file, item.line, exc_info=True)
            message = f"the semantic check crashed ({type(exc).__name__}: {exc}); please report"
            found = [Finding("semantic", "check-crashed", message, case_id=item.case.id)]
    return [f.located(item.file, item.line) for f in found]


@dataclass
class _Stream:
    """One pass over the input: each record through every per-record layer as it is read. Kept
    per valid case: the case itself when `keep`, else its batch columns and a CRC-32 of its
    bytes (to quarantine it from its file should the batch refuse it)."""

    report: ValidationReport
    strict: bool
    keep: bool
    columns: BatchColumns | None
    kept: list[LoadedCase] = field(default_factory=list)
    crcs: array = field(default_factory=lambda: array("L"))
    domains: dict[str, Domain | Finding] = field(default_factory=dict)
    check_seconds: float = 0.0

    def take(self, item: LoadedCase | BadRecord) -> None:
        if isinstance(item, BadRecord):
            self.refuse(item)
            return
        start = time.perf_counter()
        located = _case_findings(item, self.strict, self.domains)
        self.check_seconds += time.perf_counter() - start
        if any(f.severity == "error" for f in located):
            self.refuse(BadRecord(item.file, item.line, item.raw, located, item.case.id))
            return
        self.report.warnings += located
        if self.keep:
            self.kept.append(item)
        else:
            self.report.streamed_valid += 1
        if self.columns is not None:
            self.columns.add(item.case, item.file, item.line)
            if not self.keep:
                self.crcs.append(fingerprint(item.raw))

    def refuse(self, bad: BadRecord) -> None:
        if not self.keep and bad.raw_crc is None:
            bad = replace(bad, raw=b"", raw_crc=fingerprint(bad.raw))
        self.report.bad.append(bad)


def _apply_batch(stream: _Stream, rules: BatchRules | None) -> None:
    """The batch suite over the columns; each row it refuses leaves the valid cases."""
    report, columns = stream.report, stream.columns
    assert columns is not None
    by_place: dict[tuple[str | None, int | None], list[Finding]] = {}
    for finding in batch_findings(columns, rules):
        if finding.line is None:
            report.batch_issues.append(finding)
        else:
            by_place.setdefault((finding.file, finding.line), []).append(finding)
    if not by_place:
        return
    warnings: dict[tuple[str | None, int | None], list[Finding]] = {}
    for warning in report.warnings:
        warnings.setdefault((warning.file, warning.line), []).append(warning)
    refused = set()
    for index in range(len(columns)):
        file, line = place = columns.place(index)
        extra = by_place.get(place)
        if not extra or file is None or line is None:
            continue
        raw, crc = (stream.kept[index].raw, None) if stream.keep else (b"", stream.crcs[index])
        found = extra + warnings.get(place, [])
        report.bad.append(BadRecord(file, line, raw, found, columns.case_id(index), crc))
        refused.add(index)
    if stream.keep:
        stream.kept = [item for i, item in enumerate(stream.kept) if i not in refused]
    else:
        report.streamed_valid -= len(refused)


TICK = 500  # records between two calls of `validate_paths`' `tick`


def _read(
    stream: _Stream, schema: bool, rules: BatchRules | None, tick: Tick | None = None
) -> None:
    """Stream every record of the report's files through the loading layers into `stream`;
    `tick(records)` every TICK records and at the end."""
    loader = Loader(schema=SchemaLayer.default() if schema else None, rules=rules)
    report = stream.report
    for file in report.files:
        for line in read_jsonl(file):
            report.records += 1
            if stream.keep:  # the cases kept are long-lived: out of the collector's way
                checkpoint(report.records)
            stream.take(loader.load_line(line))
            if tick is not None and report.records % TICK == 0:
                tick(report.records)
    if tick is not None:
        tick(report.records)


def validate_paths(
    paths: Iterable[str | Path],
    strict: bool = False,
    batch: bool = True,
    *,
    schema: bool = True,
    rules: BatchRules | None = None,
    keep_records: bool = True,
    tick: Tick | None = None,
) -> ValidationReport:
    """Validate every case in `paths` (files or folders) through all layers. `tick(records)`
    is told how many records were read so far, now and then (for a progress bar).

    Never raises for bad content (only `UserError` for a path that does not exist). Good cases
    are kept in `report.valid`; each bad record is in `report.bad` with its findings.
    `keep_records=False`: the input streamed through, no case kept (`report.valid_count`
    counts them), bad records without their bytes (`write_quarantine` reads them again)."""
    clock = time.perf_counter
    files = [str(p) for p in expand_paths(paths)]
    report = ValidationReport(files, 0, [], [], strict=strict, records_kept=keep_records)
    stream = _Stream(report, strict, keep_records, BatchColumns() if batch else None)
    with bulk_allocation():
        start = clock()
        _read(stream, schema, rules, tick)
        report.seconds["load"] = clock() - start - stream.check_seconds
        report.seconds["semantic+lint"] = stream.check_seconds
    log.info("loaded and checked %d records, %d bad", report.records, len(report.bad))
    if batch:
        start = clock()
        try:
            _apply_batch(stream, rules)
        except Exception as exc:  # the suite failing must not cost the report
            log.debug("the batch suite failed", exc_info=True)  # the finding says it on screen
            message = f"the Great Expectations suite could not run ({type(exc).__name__}: {exc})"
            report.batch_issues.append(Finding("batch", "suite-failed", message))
        report.seconds["batch"] = clock() - start
    report.batch_checked = batch
    report.valid = stream.kept
    report.bad.sort(key=lambda b: (b.file, b.line))
    bad_places = {(b.file, b.line) for b in report.bad}
    report.warnings = [w for w in report.warnings if (w.file, w.line) not in bad_places]
    log.info(
        "validated %d records: %d valid, %d bad",
        report.records,
        report.valid_count,
        len(report.bad),
    )
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
    """Write every bad record of `report` to `path` (JSONL, atomically); returns how many.
    Records kept without their bytes are read again from their files, one at a time."""
    reader = Rereader()

    def with_raw(bad: BadRecord) -> BadRecord:
        if bad.raw_crc is None:
            return bad
        return replace(bad, raw=reader.raw(bad.file, bad.line, bad.raw_crc), raw_crc=None)

    try:
        atomic_write_jsonl(path, (quarantine_record(with_raw(b)) for b in report.bad))
    finally:
        reader.close()
    return len(report.bad)
