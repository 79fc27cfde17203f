"""Checks of the files a command is about to write, made before any work: a target that is a
folder, one of the inputs, or another target would be replaced or lost."""

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
