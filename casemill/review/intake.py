"""Candidates from JSONL files into the queue: good lines are enqueued, bad ones go to a
quarantine file with the reason (file, line, field); parents are looked up in the same file,
in parent files (seeds) and in the corpus, so the reviewer sees the operator's diff."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from casemill.case.model import Case
from casemill.corpus import CorpusStore
from casemill.errors import RecordError
from casemill.io.jsonl import atomic_write_jsonl, read_jsonl
from casemill.review.items import EnqueueResult
from casemill.review.schema import BATCH_ID_MAX
from casemill.review.store import ReviewStore
from casemill.validation.sizes import size_findings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Loaded:
    cases: tuple[Case, ...]
    errors: tuple[RecordError, ...]


def load_cases(path: str | Path) -> Loaded:
    """Every case of a JSONL file; a bad line becomes a `RecordError` and the rest are kept."""
    cases, errors = [], []
    for line in read_jsonl(path):
        if line.error:
            errors.append(RecordError(line.file, line.number, None, line.error))
            continue
        try:
            case = Case.model_validate(line.value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or None
            errors.append(RecordError(line.file, line.number, where, first["msg"]))
            continue
        oversize = size_findings(case)  # refused as `casemill validate` refuses it
        if oversize:
            errors.append(RecordError(line.file, line.number, "conversation", oversize[0].message))
            continue
        cases.append(case)
    return Loaded(tuple(cases), tuple(errors))


def find_parents(
    cases: Iterable[Case], sources: Iterable[Path] = (), corpus: CorpusStore | None = None
) -> dict[str, Case]:
    cases = list(cases)
    wanted = {p for c in cases for p in c.provenance.parents}
    found = {c.id: c for c in cases if c.id in wanted}
    for source in sources:
        if not (wanted - set(found)):
            break
        files = sorted(source.glob("*.jsonl")) if source.is_dir() else [source]
        for file in files:
            for case in load_cases(file).cases:
                if case.id in wanted:
                    found[case.id] = case
    if corpus is not None:
        found.update(corpus.get_many(wanted - set(found)))  # the corpus file read once
    return found


def default_batch_id(path: Path, cases: Iterable[Case]) -> str:
    """The file's name and a hash of its case ids, the name shortened so the id always fits
    the queue (`BATCH_ID_MAX`)."""
    digest = hashlib.sha256("\n".join(sorted(c.id for c in cases)).encode()).hexdigest()[:8]
    return f"{path.stem[: BATCH_ID_MAX - len(digest) - 1]}-{digest}"


def enqueue_file(
    store: ReviewStore,
    path: str | Path,
    batch_id: str | None = None,
    parent_sources: Iterable[Path] = (),
    corpus: CorpusStore | None = None,
    quarantine: str | Path | None = None,
    policy: str = "human",
    actor: str = "cli",
    tick: Callable[[int, int], None] | None = None,
) -> tuple[EnqueueResult, Loaded]:
    path = Path(path)
    loaded = load_cases(path)
    if loaded.errors:
        target = Path(quarantine) if quarantine else path.with_suffix(".quarantine.jsonl")
        atomic_write_jsonl(target, (e.as_dict() for e in loaded.errors))
        log.warning("%s: %d bad lines quarantined to %s", path, len(loaded.errors), target)
    parents = find_parents(loaded.cases, parent_sources, corpus)
    batch = batch_id or default_batch_id(path, loaded.cases)
    result = store.enqueue(
        loaded.cases, batch, parents=parents, policy=policy, actor=actor, note=str(path),
        tick=tick,
    )  # fmt: skip
    return result, loaded
