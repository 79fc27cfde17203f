"""The versioned corpus on disk.

Layout under the corpus folder:

    cases.jsonl              every case ever added, one JSON object a line, sorted by id
    manifests/v0001.json     one manifest a version: cases added and retired, counts per
                             slice, hashes, a provenance summary

The active set of version N is every id added up to N less every id retired up to N. A case's
id never changes, and a case is never rewritten. Writes are atomic (temporary file, fsync,
rename): `cases.jsonl` first, then the manifest, so after a crash either the new version exists
whole or it does not exist at all (cases written but named by no manifest are ignored). A
writer holds an exclusive lock on the corpus folder from reading the current version to writing
the new one, so two writers (two review exports, an export and `corpus add`), in threads or
processes, make two versions one after the other instead of one overwriting the other's cases.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.io.jsonl import atomic_write_text, dumps_line, read_jsonl

log = logging.getLogger(__name__)

MANIFEST_FORMAT = 1


class Manifest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    format: int = MANIFEST_FORMAT
    version: int
    created_at: str
    note: str = ""
    added: tuple[str, ...] = ()
    retired: tuple[str, ...] = ()
    active_count: int
    active_sha256: str = Field(
        description="sha256 of the active cases' canonical lines, in id order"
    )
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)
    operators: dict[str, int] = Field(default_factory=dict, description="operator@version -> cases")
    seeds: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return f"v{self.version:04d}"


def approval_problem(case: Case) -> str | None:
    """Why `case` may not be in the corpus, or None when it may: its review must say approved and
    name who approved it. Every real decision records a reviewer (the review queue, `corpus add
    --approve-as`, the seed builder's `casemill-seeds`); a file whose status alone says approved
    (a generated candidate flipped by hand) records no decision. The decision time is not
    required: the hand-written seeds, approved as a set, carry none."""
    review = case.review
    if review.status != "approved":
        return f"review.status is {review.status!r}"
    if not (review.reviewer or "").strip():
        return "review.status says approved but review.reviewer is empty: no decision is recorded"
    return None


def manifest_error(path: Path, exc: ValueError) -> list[str]:
    """What is wrong with the manifest at `path`, one message a field, for a person: the field,
    what it should be, and how to restore the file."""
    fix = f"restore it (`git diff {path}`, `git checkout -- {path}`)"
    if not isinstance(exc, ValidationError):
        return [f"not a corpus manifest: {exc}; {fix}"]
    out = []
    for error in exc.errors(include_url=False):
        field = ".".join(str(p) for p in error["loc"]) or "(the file)"
        if error["type"] == "json_invalid":
            out.append(f"not valid JSON ({error['msg']}); {fix}")
        elif error["type"] == "extra_forbidden":
            out.append(
                f"field {field!r} is not a manifest field (expected: "
                f"{', '.join(Manifest.model_fields)}); {fix}"
            )
        elif error["type"] == "missing":
            out.append(f"field {field!r} is missing; {fix}")
        else:
            out.append(f"field {field!r}: {error['msg']}; {fix}")
    return out


def read_manifest(path: Path) -> Manifest:
    """The manifest at `path`; a `UserError` naming the file and the field when it is damaged."""
    try:
        return Manifest.model_validate_json(path.read_bytes())
    except ValueError as exc:
        raise UserError(f"{path}: {'; '.join(manifest_error(path, exc))}") from exc


def slice_counts(cases: Iterable[Case]) -> dict[str, dict[str, int]]:
    by: dict[str, Counter] = {
        k: Counter() for k in ("origin", "category", "outcome", "intent", "operator", "domain")
    }
    for case in cases:
        by["origin"][case.provenance.origin] += 1
        by["category"][case.tags.category] += 1
        by["outcome"][case.expected.outcome] += 1
        by["domain"][case.domain] += 1
        for intent in case.tags.intents or ("(none)",):
            by["intent"][intent] += 1
        ops = case.provenance.operators
        by["operator"][ops[-1].name if ops else "(none)"] += 1
    return {k: dict(sorted(v.items())) for k, v in by.items()}


def existing_store(root: str | Path, option: str = "--corpus") -> CorpusStore:
    """The corpus at `root`, which must be a folder, and not one of plain case files: a mistyped
    path would otherwise be read as an empty corpus (deduplicate against, list or verify
    nothing), silently. The error names `option`, the setting the path came from."""
    path = Path(root)
    if not path.is_dir():
        raise UserError(f"{option} {root}: no such corpus folder")
    store = CorpusStore(path)
    if not store.manifests_dir.is_dir() and not store.cases_path.exists():
        stray = sorted(p.name for p in path.glob("*.jsonl*") if p.is_file())
        if stray:  # a folder of case files (`--corpus seeds`) would be read as an empty corpus
            raise UserError(
                f"{option} {root}: not a corpus folder (no cases.jsonl, no manifests/), though "
                f"it holds {', '.join(stray[:3])}; make a corpus of them with "
                f"`casemill corpus add {root} --corpus NEW_FOLDER`"
            )
    return store


def writable_corpus(root: str | Path, option: str = "--corpus") -> CorpusStore:
    """The corpus at `root` that cases are to be added to: an existing corpus, or an empty folder
    made to start one. A folder that does not exist, one of case files (the seeds) or one of
    other files is refused, naming `option`: a mistyped or wrong path would otherwise get a new
    corpus of its own, and the cases added there, marked exported, never reach the real one."""
    path = Path(root)
    if not path.is_dir():
        raise UserError(
            f"{option} {root}: no such corpus folder (looked in {path.resolve()}); to start a "
            f"new corpus there, create the folder first (mkdir -p {root})"
        )
    store = existing_store(path, option)  # refuses a folder of case files, such as the seeds
    is_corpus = store.manifests_dir.is_dir() or store.cases_path.exists()
    others = sorted(p.name for p in path.iterdir() if not p.name.startswith("."))
    if not is_corpus and others:
        raise UserError(
            f"{option} {root}: not a corpus folder (no cases.jsonl, no manifests/), and not "
            f"empty: it holds {', '.join(others[:3])}; name the corpus folder, or, to start a "
            "new corpus, create an empty folder for it"
        )
    return store


@contextlib.contextmanager
def _write_lock(root: Path) -> Iterator[None]:
    """Hold an exclusive lock on the corpus folder (flock on the folder itself, so no lock file
    shows up in the corpus) until the block ends; released when the descriptor closes, also
    when the process dies."""
    try:
        import fcntl
    except ImportError:  # not on POSIX: writers are not serialised
        yield
        return
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class CorpusStore:
    def __init__(self, root: str | Path, clock: Callable[[], datetime] | None = None):
        self.root = Path(root)
        self.cases_path = self.root / "cases.jsonl"
        self.manifests_dir = self.root / "manifests"
        self._clock = clock or (lambda: datetime.now(UTC))

    # -- reading ----------------------------------------------------------------------------
    def manifests(self) -> list[Manifest]:
        return [read_manifest(path) for path in self.manifest_paths()]

    def manifest_paths(self) -> list[Path]:
        if not self.manifests_dir.is_dir():
            return []
        return sorted(self.manifests_dir.glob("v*.json"))

    def latest(self) -> Manifest | None:
        found = self.manifests()
        return found[-1] if found else None

    def active_ids(self, version: int | None = None) -> set[str]:
        ids: set[str] = set()
        for manifest in self.manifests():
            if version is not None and manifest.version > version:
                break
            ids |= set(manifest.added)
            ids -= set(manifest.retired)
        return ids

    def _all_lines(self, numbers: dict[str, int] | None = None) -> dict[str, str]:
        """Every stored line by case id; `numbers`, when given, gets each id's line number."""
        if not self.cases_path.exists():
            return {}
        lines = {}
        for line in read_jsonl(self.cases_path):
            if line.error:
                raise UserError(f"{line.file}:{line.number}: corrupt corpus line: {line.error}")
            lines[line.value["id"]] = line.raw.decode("utf-8")
            if numbers is not None:
                numbers[line.value["id"]] = line.number
        return lines

    def cases(self, version: int | None = None) -> list[Case]:
        """The active cases of `version` (default: the latest), sorted by id. A `UserError` when
        the corpus is damaged: a case a manifest names is missing, or an active case is not
        approved (its line edited by hand), which is never served as part of the corpus."""
        active = self.active_ids(version)
        numbers: dict[str, int] = {}
        lines = self._all_lines(numbers)
        missing = sorted(active - set(lines))
        if missing:
            raise UserError(
                f"{self.cases_path}: {len(missing)} cases named by a manifest are missing "
                f"(first: {missing[0]}); the corpus is damaged (see `casemill corpus verify`)"
            )
        cases = [Case.model_validate_json(lines[i]) for i in sorted(active)]
        for case in cases:
            problem = approval_problem(case)
            if problem:
                raise UserError(
                    f"{self.cases_path}:{numbers[case.id]}: active case {case.id} is not "
                    f"approved ({problem}); the corpus is damaged: see `casemill corpus verify` "
                    f"and `git diff {self.cases_path}`"
                )
        return cases

    def get(self, case_id: str) -> Case | None:
        return self.get_many([case_id]).get(case_id)

    def get_many(self, case_ids: Iterable[str]) -> dict[str, Case]:
        """The cases of `case_ids` that the corpus holds (active or retired), by id: the file
        read once for all of them."""
        wanted = set(case_ids)
        if not wanted:
            return {}
        lines = self._all_lines()
        return {i: Case.model_validate_json(lines[i]) for i in sorted(wanted) if i in lines}

    # -- writing ----------------------------------------------------------------------------
    def add_version(
        self,
        add: Iterable[Case] = (),
        retire: Iterable[str] = (),
        note: str = "",
    ) -> Manifest | None:
        """Write a new version adding `add` and retiring `retire`. Cases already active are not
        added twice; a retired case added again is re-activated as it was stored. Only approved
        cases enter the corpus (see `approval_problem`): any other is a `UserError` and nothing
        is written. Returns the new manifest, or None when nothing changes. Holds the corpus
        folder's write lock throughout."""
        add = list(add)
        unreviewed = [(c.id, p) for c in add if (p := approval_problem(c))]
        if unreviewed:
            first = unreviewed[0]
            raise UserError(
                f"only approved cases enter the corpus: {len(unreviewed)} case(s) are not "
                f"(first: {', '.join(i for i, _ in unreviewed[:3])}; {first[0]}: {first[1]})"
            )
        with _write_lock(self.root):
            return self._add_version(add, retire, note)

    def _add_version(self, add: list[Case], retire: Iterable[str], note: str) -> Manifest | None:
        active = self.active_ids()
        lines = self._all_lines()
        new_cases = {}
        for case in add:
            if case.id not in active:
                new_cases[case.id] = case
        retire_ids = sorted(set(retire) & active - set(new_cases))
        unknown = sorted(set(retire) - active)
        if unknown:
            raise UserError(f"cannot retire cases that are not active: {unknown[:5]}")
        if not new_cases and not retire_ids:
            return None
        for case_id, case in new_cases.items():
            if case_id in lines:  # retired before: re-activated as stored, never rewritten
                continue
            lines[case_id] = dumps_line(
                case.model_dump(mode="json", exclude_defaults=False)
            ).rstrip("\n")
        active = (active | set(new_cases)) - set(retire_ids)
        atomic_write_text(self.cases_path, (lines[i] + "\n" for i in sorted(lines)))

        active_cases = [Case.model_validate_json(lines[i]) for i in sorted(active)]
        digest = hashlib.sha256()
        for i in sorted(active):
            digest.update(lines[i].encode("utf-8") + b"\n")
        operators: Counter = Counter()
        seeds: set[int] = set()
        for case in active_cases:
            for step in case.provenance.operators:
                operators[f"{step.name}@{step.version}"] += 1
            if case.provenance.seed is not None:
                seeds.add(case.provenance.seed)
        previous = self.latest()
        manifest = Manifest(
            version=(previous.version + 1) if previous else 1,
            created_at=self._clock().isoformat(timespec="seconds"),
            note=note,
            added=tuple(sorted(new_cases)),
            retired=tuple(retire_ids),
            active_count=len(active),
            active_sha256=digest.hexdigest(),
            counts=slice_counts(active_cases),
            operators=dict(sorted(operators.items())),
            seeds=tuple(sorted(seeds)),
        )
        path = self.manifests_dir / f"{manifest.name}.json"
        atomic_write_text(
            path, [json.dumps(manifest.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"]
        )
        log.info(
            "corpus %s: +%d -%d, %d active",
            manifest.name,
            len(new_cases),
            len(retire_ids),
            len(active),
        )
        return manifest

    def stats(self) -> dict[str, Any]:
        latest = self.latest()
        if latest is None:
            return {"root": str(self.root), "versions": 0, "active": 0, "counts": {}}
        return {
            "root": str(self.root),
            "versions": latest.version,
            "latest": latest.name,
            "active": latest.active_count,
            "counts": latest.counts,
            "operators": latest.operators,
        }
