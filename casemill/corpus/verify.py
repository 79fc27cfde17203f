"""Checking a corpus on disk: every manifest is readable and its hash and counts match the cases
it names, every case line is a valid case whose id matches its content, every case a manifest
named is approved, and cases that no manifest names (left by a crash between writing
`cases.jsonl` and the manifest) are reported as stray.

A manifest records one hash of all its active cases, not one a case: when the hash does not
match, the lines that changed are found from what else the data says (an active case that is not
approved, slice counts that moved), and the message says how to see the edit (`git diff`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from pydantic import ValidationError

from casemill.case.model import Case
from casemill.corpus.store import (
    CorpusStore,
    Manifest,
    approval_problem,
    manifest_error,
    slice_counts,
)
from casemill.io.jsonl import read_jsonl
from casemill.text import count

MAX_LINES_NAMED = 8


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


@dataclass(frozen=True)
class _Line:
    number: int
    text: str
    case: Case


def _read_lines(store: CorpusStore, report: VerifyReport) -> dict[str, _Line]:
    lines: dict[str, _Line] = {}
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
        lines[case.id] = _Line(line.number, text, case)
    return lines


def _read_manifests(store: CorpusStore, report: VerifyReport) -> tuple[list[Manifest], bool]:
    """The readable manifests in version order, and whether every one was readable; each damaged
    one is a problem a field, naming the file."""
    manifests, whole = [], True
    for path in store.manifest_paths():
        try:
            manifest = Manifest.model_validate_json(path.read_bytes())
        except (OSError, ValueError) as exc:
            whole = False
            messages = manifest_error(path, exc) if isinstance(exc, ValueError) else [str(exc)]
            report.problems.extend(Problem(str(path), m) for m in messages)
            continue
        if path.stem != manifest.name:
            report.problems.append(
                Problem(
                    str(path),
                    f"field 'version' is {manifest.version}, the file name says {path.stem}; "
                    f"restore it (`git diff {path}`)",
                )
            )
        manifests.append(manifest)
    return manifests, whole


def _moved_counts(store: CorpusStore, manifest: Manifest, cases: list[_Line]) -> list[Problem]:
    """Slice counts that differ from what `manifest` recorded, each naming the lines that hold
    the slice that grew (one of them was edited)."""
    where = str(store.manifests_dir / f"{manifest.name}.json")
    now = slice_counts(line.case for line in cases)
    problems = []
    for dimension, recorded in manifest.counts.items():
        counted = now.get(dimension, {})
        if counted == recorded:
            continue
        changes = ", ".join(
            f"{value} {recorded.get(value, 0)} -> {counted.get(value, 0)}"
            for value in sorted(set(recorded) | set(counted))
            if recorded.get(value, 0) != counted.get(value, 0)
        )
        grown = {v for v in counted if counted[v] > recorded.get(v, 0)}
        suspects = [
            line.number for line in cases if grown & set(slice_counts([line.case])[dimension])
        ]
        named = ", ".join(f"{store.cases_path}:{n}" for n in sorted(suspects)[:MAX_LINES_NAMED])
        extra = len(suspects) - MAX_LINES_NAMED
        more = f" and {extra} more" if extra > 0 else ""
        at = f"; the edited line is one of {named}{more}" if suspects else ""
        problems.append(
            Problem(where, f"counts.{dimension} differ from the cases it names ({changes}){at}")
        )
    return problems


def _check_version(
    store: CorpusStore, manifest: Manifest, active: set[str], lines: dict[str, _Line]
) -> list[Problem]:
    where = str(store.manifests_dir / f"{manifest.name}.json")
    missing = sorted(active - set(lines))
    if missing:
        message = (
            f"{count(len(missing), 'active case')} missing from cases.jsonl (first: {missing[0]})"
        )
        return [Problem(where, message)]
    problems = []
    digest = hashlib.sha256()
    for case_id in sorted(active):
        digest.update(lines[case_id].text.encode("utf-8") + b"\n")
    if digest.hexdigest() != manifest.active_sha256:
        cases = [lines[i] for i in sorted(active)]
        problems.append(
            Problem(
                where,
                f"active_sha256 does not match the {count(len(active), 'case')} it names: a line "
                f"of {store.cases_path} was changed after {manifest.name} was written (a case is "
                f"never rewritten); see the edit with `git diff {store.cases_path}` and undo it "
                f"with `git checkout -- {store.cases_path}`",
            )
        )
        problems += _moved_counts(store, manifest, cases)
    if manifest.active_count != len(active):
        problems.append(
            Problem(
                where,
                f"active_count {manifest.active_count} but {count(len(active), 'case')} active",
            )
        )
    return problems


def _unapproved(store: CorpusStore, named: set[str], lines: dict[str, _Line]) -> list[Problem]:
    """Cases a manifest named that are not approved: only approved cases enter the corpus, so
    the line was edited by hand afterwards (or written by a tool that skipped the check)."""
    problems = []
    for case_id in sorted(named & set(lines), key=lambda i: lines[i].number):
        problem = approval_problem(lines[case_id].case)
        if problem:
            problems.append(
                Problem(
                    f"{store.cases_path}:{lines[case_id].number}",
                    f"case {case_id} is in the corpus but is not approved ({problem}); restore "
                    f"the line (`git diff {store.cases_path}`), or retire the case with "
                    f"`casemill corpus retire {case_id}`",
                )
            )
    return problems


def verify_corpus(store: CorpusStore) -> VerifyReport:
    """Check `store` against its manifests (see the module docstring). Never raises for a
    damaged corpus: every problem is in the report."""
    report = VerifyReport(root=str(store.root))
    lines = _read_lines(store, report)
    report.cases = len(lines)
    manifests, whole = _read_manifests(store, report)
    report.versions = len(manifests)
    active: set[str] = set()
    named: set[str] = set()
    for manifest in manifests:
        named |= set(manifest.added)
        active = (active | set(manifest.added)) - set(manifest.retired)
        if whole:  # past a damaged manifest the active set is unknown: nothing to compare
            report.problems += _check_version(store, manifest, active, lines)
    report.problems += _unapproved(store, named, lines)
    report.active = len(active)
    report.stray = sorted(set(lines) - named) if whole else []
    return report
