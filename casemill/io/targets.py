"""Checking where a command will write before it reads anything: every stage that writes files
(mining, expansion, format conversion) refuses the same mistakes in the same words."""

from __future__ import annotations

from pathlib import Path

from casemill.errors import UserError


def check_targets(
    logs: list[Path], targets: dict[str, Path | None], *, inputs: str = "a log"
) -> None:
    """Refuse targets (by the option or parameter naming them) that are folders, or one of the
    logs or each other: a log would be replaced by what was mined from it, candidates by the
    quarantine, or redacted cases by the raw values. A `UserError` naming the option (and
    `inputs`, what the logs are called)."""
    seen: dict[Path, str] = {Path(p).resolve(): inputs for p in logs}
    for option, target in targets.items():
        if target is None:
            continue
        if Path(target).is_dir():
            raise UserError(f"{option} {target} is a folder: name a file (in it)")
        where = Path(target).resolve()
        if where in seen:
            raise UserError(f"{option} {target} is also {seen[where]}: give it a path of its own")
        seen[where] = option
