"""Reading Casemill cases for an export, and writing imported cases.

`load_cases(src)` accepts a JSONL file of cases (`.jsonl` / `.jsonl.gz`), a corpus folder (one
with `manifests/`: its latest active cases) or any other folder (every case file under it,
sorted). A line that is not a valid case is reported as a located finding and skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from casemill.case.model import Case
from casemill.corpus.store import CorpusStore
from casemill.errors import UserError
from casemill.formats.common import model_findings
from casemill.io.jsonl import atomic_write_jsonl, read_jsonl
from casemill.validation.findings import Finding
from casemill.validation.loading import case_files_in


def _files(src: Path) -> list[Path]:
    if src.is_file():
        return [src]
    if src.is_dir():
        return case_files_in(src)
    raise UserError(f"{src}: no such file or folder")


@dataclass(frozen=True)
class LocatedCase:
    """A case read for an export, with where it was read (no line for a corpus folder's case:
    the corpus names it by its id)."""

    case: Case
    file: str
    line: int | None = None

    @property
    def where(self) -> str:
        return self.file if self.line is None else f"{self.file}:{self.line}"


def load_cases(src: str | Path) -> tuple[list[Case], list[Finding]]:
    located, findings = load_located(src)
    return [c.case for c in located], findings


def load_located(src: str | Path) -> tuple[list[LocatedCase], list[Finding]]:
    """The cases `src` holds, each with its file and line, and a finding per bad line."""
    src = Path(src)
    if src.is_dir() and (src / "manifests").is_dir():
        store = CorpusStore(src)
        return [LocatedCase(c, str(store.cases_path)) for c in store.cases()], []
    cases: list[LocatedCase] = []
    findings: list[Finding] = []
    for path in _files(src):
        for line in read_jsonl(path):
            if line.error:
                findings.append(
                    Finding("json", "parse", line.error, file=line.file, line=line.number)
                )
                continue
            try:
                cases.append(LocatedCase(Case.model_validate(line.value), line.file, line.number))
            except ValidationError as exc:
                findings += model_findings(exc, line.file, line.number)
    return cases, findings


def write_cases(path: str | Path, cases: Iterable[Case]) -> Path:
    """Write cases as JSON Lines (atomically), one full case a line."""
    return atomic_write_jsonl(path, (c.model_dump(mode="json") for c in cases))
