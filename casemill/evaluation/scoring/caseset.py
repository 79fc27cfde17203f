"""What a run was evaluated on (`CaseSet`), told in one line, and the note a comparison carries
when two runs were evaluated on different cases.

The digest is the sha256 of the sorted unique case ids, one a line: case ids are content ids, so
the same cases give the same digest on every machine, whatever their order in the file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from casemill.case.model import Case
from casemill.evaluation.scoring.model import CaseSet
from casemill.text import count

SHORT = 12  # hex digits of the digest shown in one-line texts


def digest(case_ids: Iterable[str]) -> str:
    """sha256 hex of the sorted unique ids, each followed by a newline."""
    text = "".join(f"{i}\n" for i in sorted(set(case_ids)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def shown_path(path: str | Path, root: Path | None = None) -> str:
    """`path` relative to `root` (default: the working folder) when it lies inside it, else as
    given: a run folder then says `corpus`, not a home folder's absolute path."""
    path = Path(path)
    base = (root or Path.cwd()).resolve()
    try:
        relative = path.resolve().relative_to(base)
    except ValueError:
        return path.as_posix()
    return relative.as_posix() or "."


def case_set(
    cases: Sequence[Case],
    sources: Iterable[str] = (),
    *,
    corpus_version: int | None = None,
    corpus_sha256: str | None = None,
) -> CaseSet:
    ids = {c.id for c in cases}
    return CaseSet(
        sources=tuple(sources),
        corpus_version=corpus_version,
        corpus_sha256=corpus_sha256,
        count=len(ids),
        digest=digest(ids),
    )


def corpus_name(cases: CaseSet | None) -> str:
    """'corpus v0002', or what the cases came from, or 'not recorded'."""
    if cases is None:
        return "not recorded"
    if cases.corpus_version is not None:
        return f"corpus v{cases.corpus_version:04d}"
    return ", ".join(cases.sources) or "cases given in code"


def describe(cases: CaseSet | None) -> str:
    """One line: 'corpus v0002 at corpus (1,870 cases, digest 3f2a9c1b7d0e...)'."""
    if cases is None:
        return "not recorded (a run from before Casemill recorded its cases)"
    where = corpus_name(cases)
    if cases.corpus_version is not None and cases.sources:
        where += f" at {', '.join(cases.sources)}"
    return f"{where} ({count(cases.count, 'case')}, digest {cases.digest[:SHORT]}...)"


def difference_note(
    paired: int,
    only_current: int,
    only_baseline: int,
    current: CaseSet | None,
    baseline: CaseSet | None,
    names: tuple[str, str] = ("this run", "the baseline"),
) -> str:
    """The warning for two runs on different case sets ('' when the sets are the same);
    `names` are what the current run and the baseline are called in it."""
    if not only_current and not only_baseline:
        return ""
    cur, base = names
    return (
        f"case sets differ: {count(paired, 'case')} in common, "
        f"{only_current:,} only in {cur}, "
        f"{only_baseline:,} only in {base} ({cur}: {corpus_name(current)}; "
        f"{base}: {corpus_name(baseline)}); compared on the {paired:,} in common"
    )
