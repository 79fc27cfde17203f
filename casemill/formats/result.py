"""What an import or export returns: the cases, and every bad record with located reasons.

Bad records never stop an import: each becomes a `Quarantined` entry (file, line, the record as
read, and one `Finding` per problem naming the field) and the good records around it are kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casemill.case.model import Case
from casemill.io.jsonl import atomic_write_jsonl
from casemill.validation.findings import Finding


class FieldProblem(ValueError):
    """A problem with one field of a source record (raised inside a mapper, caught per record)."""

    def __init__(self, field: str, message: str, rule: str = "format"):
        super().__init__(message)
        self.field = field
        self.message = message
        self.rule = rule


@dataclass(frozen=True)
class Quarantined:
    """A source record that did not become a case, and why."""

    file: str
    line: int | None
    record: Any
    findings: tuple[Finding, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "reasons": [f.as_dict() for f in self.findings],
            "record": self.record,
        }


@dataclass(frozen=True)
class ImportResult:
    """Cases imported from one source file, and the records that were quarantined.

    `notes` are things the person importing should know (cases that landed in a generic domain,
    tools inferred for a domain without specifications); `inferred_tools` holds, per generic
    domain, the tool specifications inferred from the imported cases; `source_domains`, for a
    format whose records name their own domain (tau2), per source domain: the pack its records
    went into, how many were imported and quarantined, the reasons counted by rule."""

    format: str
    source: str
    read: int
    cases: tuple[Case, ...] = ()
    quarantined: tuple[Quarantined, ...] = ()
    notes: tuple[str, ...] = ()
    inferred_tools: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    source_domains: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def findings(self) -> list[Finding]:
        return [f for q in self.quarantined for f in q.findings]

    @property
    def domains(self) -> dict[str, int]:
        return dict(sorted(Counter(c.domain for c in self.cases).items()))

    def summary(self) -> dict[str, Any]:
        summary = {
            "format": self.format,
            "source": self.source,
            "read": self.read,
            "imported": len(self.cases),
            "quarantined": len(self.quarantined),
            "domains": self.domains,
            "reasons": [str(f) for f in self.findings],
            "notes": list(self.notes),
            "inferred_tools": {
                d: [s["function"]["name"] for s in specs]
                for d, specs in self.inferred_tools.items()
            },
        }
        if self.source_domains:
            summary["source_domains"] = self.source_domains
        return summary


@dataclass(frozen=True)
class ExportResult:
    """Records written by an export, the cases the target format cannot hold (`skipped`), and
    warnings for cases written with fewer checks than they have (`narrowed`: forbidden calls the
    format has no place for)."""

    format: str
    path: str
    written: int
    skipped: tuple[Finding, ...] = ()
    narrowed: tuple[Finding, ...] = ()


def located(problem: FieldProblem, file: str, line: int | None, layer: str = "schema") -> Finding:
    return Finding(layer, problem.rule, problem.message, field=problem.field, file=file, line=line)  # type: ignore[arg-type]


def write_quarantine(path: str | Path, quarantined: Iterable[Quarantined]) -> Path:
    """Write quarantined records as JSON Lines (atomically): file, line, reasons, record."""
    return atomic_write_jsonl(path, (q.as_dict() for q in quarantined))
