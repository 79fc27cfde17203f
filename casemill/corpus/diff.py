"""What changed between two versions of a corpus: the cases one added and the cases it retired.

Version 0 is the empty corpus before `v0001`, so `diff_versions(store, 0, 1)` lists the first
version's cases. Both sides are active sets (every id added up to the version less every id
retired up to it), so a case retired and added again in between is in neither list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from casemill.case.model import Case
from casemill.corpus.store import CorpusStore
from casemill.errors import UserError

_VERSION = re.compile(r"[vV]?(\d+)")


@dataclass(frozen=True)
class VersionDiff:
    old: int
    new: int
    added: tuple[Case, ...]
    retired: tuple[Case, ...]

    @staticmethod
    def name(version: int) -> str:
        return f"v{version:04d}"


def parse_version(text: str) -> int:
    """`v0002`, `v2` or `2` as 2; anything else is a `UserError` saying what is expected."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise UserError(f"{text!r}: expected a corpus version such as v0002 or 2")
    return int(match.group(1))


def diff_versions(
    store: CorpusStore, old: int | None = None, new: int | None = None
) -> VersionDiff:
    """The cases added and retired from version `old` (default: the one before `new`) to version
    `new` (default: the latest), each sorted by id."""
    versions = [m.version for m in store.manifests()]
    if not versions:
        raise UserError(
            f"corpus {store.root}: no versions yet (add some with `casemill corpus add`)"
        )
    new = versions[-1] if new is None else new
    old = new - 1 if old is None else old
    for version in (old, new):
        if version != 0 and version not in versions:
            raise UserError(
                f"corpus {store.root}: no version {VersionDiff.name(version)} "
                f"(versions v0001 to {VersionDiff.name(versions[-1])}; 0 is the empty corpus)"
            )
    before = {c.id: c for c in store.cases(old)} if old else {}
    after = {c.id: c for c in store.cases(new)}
    return VersionDiff(
        old=old,
        new=new,
        added=tuple(after[i] for i in sorted(set(after) - set(before))),
        retired=tuple(before[i] for i in sorted(set(before) - set(after))),
    )
