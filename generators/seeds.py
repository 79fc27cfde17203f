"""Loading the seeds an expansion starts from."""

from __future__ import annotations

from pathlib import Path

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.validation.findings import Finding


def load_seeds(seeds: str | Path) -> tuple[list[Case], list[Finding]]:
    """The valid seed cases of a file or folder, and the first finding of each seed that is not
    valid (it is skipped, not expanded). A missing path, or no valid seed, is a `UserError`."""
    from casemill.validation import load_cases

    path = Path(seeds)
    if not path.exists():
        raise UserError(f"{seeds}: no such seed file or folder")
    loaded = load_cases([path])
    if not loaded.cases:
        raise UserError(f"{seeds}: no valid seed cases (run 'casemill validate {seeds}')")
    skipped = [bad.findings[0] for bad in loaded.bad if bad.findings]
    return [item.case for item in loaded.cases], skipped
