"""Checking a corpus on disk: every manifest's hash matches the cases it names, every case line
is a valid case whose id matches its content, and cases that no manifest names (left by a crash
between writing `cases.jsonl` and the manifest) are reported as stray."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from pydantic import ValidationError

from casemill.case.model import Case
from casemill.corpus.store import CorpusStore
from casemill.io.jsonl import read_jsonl
from casemill.text import count


@dataclass(frozen=True)
class Problem:
    where: str
    message: str


@dataclass
class VerifyReport:
    root: str
    versions: int = 0
    cases: int = 0
    active: int = 0
    stray: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict:
        return {
            "ok": self.ok,
            "root": self.root,
            "versions": self.versions,
            "cases": self.cases,
            "active": self.active,
            "stray": self.stray,
            "problems": [{"where": p.where, "message": p.message} for p in self.problems],
        }


def _read_lines(store: CorpusStore, report: VerifyReport) -> dict[str, str]:
    lines: dict[str, str] = {}
    if not store.cases_path.exists():
        return lines
    for line in read_jsonl(store.cases_path):
        where = f"{line.file}:{line.number}"
        if line.error:
            report.problems.append(Problem(where, f"corrupt line: {line.error}"))
            continue
        text = line.raw.decode("utf-8")
        try:
            case = Case.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            report.problems.append(Problem(where, f"not a valid case: {first['msg']}"))
            continue
        if case.id in lines:
            report.problems.append(Problem(where, f"case {case.id} appears twice"))
        lines[case.id] = text
    return lines


def verify_corpus(store: CorpusStore) -> VerifyReport:
    """Check `store` against its manifests (see the module docstring). Never raises for a
    damaged corpus: every problem is in the report."""
    report = VerifyReport(root=str(store.root))
    lines = _read_lines(store, report)
    report.cases = len(lines)
    manifests = store.manifests()
    report.versions = len(manifests)
    active: set[str] = set()
    named: set[str] = set()
    for manifest in manifests:
        where = str(store.manifests_dir / f"{manifest.name}.json")
        named |= set(manifest.added)
        active = (active | set(manifest.added)) - set(manifest.retired)
        missing = sorted(active - set(lines))
        if missing:
            report.problems.append(
                Problem(
                    where,
                    f"{count(len(missing), 'active case')} missing from cases.jsonl "
                    f"(first: {missing[0]})",
                )
            )
            continue
        digest = hashlib.sha256()
        for case_id in sorted(active):
            digest.update(lines[case_id].encode("utf-8") + b"\n")
        if digest.hexdigest() != manifest.active_sha256:
            report.problems.append(
                Problem(where, "active_sha256 does not match the cases it names")
            )
        if manifest.active_count != len(active):
            report.problems.append(
                Problem(
                    where,
                    f"active_count {manifest.active_count} but "
                    f"{count(len(active), 'case')} active",
                )
            )
    report.active = len(active)
    report.stray = sorted(set(lines) - named)
    return report
