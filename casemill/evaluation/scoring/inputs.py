"""The cases an eval run uses: `.jsonl` files, folders of them, or a corpus folder (one with
`manifests/`, read through the corpus store at its latest version).

Bad records never stop an eval: they are set aside with their reasons (file, line, field), and
`quarantine` writes them to a file beside the run's results. A domain pack that does not load
(an unknown domain, a declared pack that fails to import) does stop it, before any agent runs:
none of that domain's cases could be run or scored (`check_domains`).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from casemill.case.model import Case
from casemill.corpus.store import CorpusStore
from casemill.errors import UserError
from casemill.evaluation.scoring.caseset import case_set, shown_path
from casemill.evaluation.scoring.model import CaseSet
from casemill.io.jsonl import atomic_write_jsonl
from casemill.io.limits import record_problem
from casemill.text import count

log = logging.getLogger(__name__)

QUARANTINE = "quarantine.jsonl"


@dataclass
class BadCase:
    file: str
    line: int
    reasons: list[str]
    raw: str = ""


@dataclass
class CaseInput:
    source: str
    cases: list[Case] = field(default_factory=list)
    bad: list[BadCase] = field(default_factory=list)
    path: str = ""
    corpus_version: int | None = None
    corpus_sha256: str | None = None

    def case_set(self) -> CaseSet:
        """The provenance a run records: the path given, the corpus version, count, digest."""
        return case_set(
            self.cases,
            (self.path,) if self.path else (),
            corpus_version=self.corpus_version,
            corpus_sha256=self.corpus_sha256,
        )


def load_eval_cases(path: str | Path) -> CaseInput:
    """Cases from a file, a folder or a corpus; `UserError` when the path does not exist or a
    domain of its cases does not load (`check_domains`)."""
    path = Path(path)
    if not path.exists():
        raise UserError(
            f"{path}: no such file or folder "
            "(give a .jsonl file, a folder of them, or a corpus folder)"
        )
    if path.is_dir() and (path / "manifests").is_dir():
        store = CorpusStore(path)
        latest = store.latest()
        label = f"{path} (corpus v{latest.version:04d})" if latest else str(path)
        loaded = CaseInput(
            source=label,
            cases=store.cases(latest.version if latest else None),  # the version recorded
            path=shown_path(path),
            corpus_version=latest.version if latest else None,
            corpus_sha256=latest.active_sha256 if latest else None,
        )
        check_domains(loaded.cases, label)
        return loaded
    from casemill.validation.loading import load_cases

    result = load_cases([path])
    bad = [
        BadCase(b.file, b.line, [str(f) for f in b.findings], b.raw.decode("utf-8", "replace"))
        for b in result.bad
    ]
    for item in bad:
        log.warning("case record refused: %s", "; ".join(item.reasons))
    cases = [c.case for c in result.cases]
    check_domains(cases, str(path))
    return CaseInput(source=str(path), cases=cases, bad=bad, path=shown_path(path))


def check_domains(cases: list[Case], source: str) -> None:
    """`UserError` when the domain pack of some of `cases` does not load, with what
    `get_domain` says to fix (the package, its entry point, the module it could not import; or
    the domains known), as `casemill validate` says it. Checked before the agent runs: every
    case of such a domain would end in an error the agent has no part in."""
    from casemill.domains import get_domain

    for name, n in Counter(case.domain for case in cases).items():
        try:
            get_domain(name)
        except UserError as exc:
            raise UserError(
                f"{source}: {count(n, 'case')} of domain {name!r} cannot be run: {exc}"
            ) from exc


def quarantine(run_dir: Path, bad: list[BadCase]) -> Path | None:
    """Write refused records with their reasons to RUN_DIR/quarantine.jsonl (None if none)."""
    if not bad:
        return None
    records = []
    for item in bad:
        try:
            raw: object = json.loads(item.raw)
        except (ValueError, RecursionError):
            raw = item.raw
        else:  # a record the reading layer refused (a lone surrogate) is kept as its text
            raw = item.raw if record_problem(raw, item.raw) is not None else raw
        records.append(
            {"file": item.file, "line": item.line, "reasons": item.reasons, "record": raw}
        )
    return atomic_write_jsonl(Path(run_dir) / QUARANTINE, records)
