"""The validate stage: case files through every layer, bad records to a quarantine file.

`run_validate(ValidateRequest(...))` is what `casemill validate` calls:

    outcome = run_validate(ValidateRequest(paths=(Path("seeds"),)))
    outcome.report.ok        # no error anywhere (the exit code: `outcome.exit_code`)
    outcome.quarantine       # where the bad records went (None: there were none)

The input is streamed and no case is kept (`validate_paths(..., keep_records=False)`): memory
grows with the findings, not with the cases; the bad records are copied into the quarantine
from the input files.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casemill.errors import UserError
from casemill.io.targets import check_targets
from casemill.validation.loading import expand_paths
from casemill.validation.report import ValidationReport, validate_paths, write_quarantine

log = logging.getLogger(__name__)

LAYERS_SAID = "json, schema, model, semantic, lint, batch"


@dataclass(frozen=True)
class ValidateRequest:
    """Case files or folders to validate. `strict`: lint warnings count as errors; `batch`
    False skips the Great Expectations suite (and its seconds of import); `quarantine`: where
    bad records go (default, when any record is bad: `NAME.quarantine.jsonl` in the current
    folder, NAME the first input's name)."""

    paths: tuple[Path, ...]
    strict: bool = False
    batch: bool = True
    quarantine: Path | None = None


@dataclass(frozen=True)
class ValidateOutcome:
    """The report and where its bad records were written (None: none was bad, none asked)."""

    report: ValidationReport
    quarantine: Path | None

    @property
    def exit_code(self) -> int:
        """0 when every case is valid, 1 otherwise."""
        return 0 if self.report.ok else 1

    def as_json(self) -> dict[str, Any]:
        """The report `casemill validate --json` prints."""
        data = self.report.as_dict()
        data["quarantine"] = str(self.quarantine) if self.quarantine else None
        return data


def default_quarantine(first: str) -> Path:
    """`NAME.quarantine.jsonl` in the current folder, NAME the input's name without its
    suffixes (`seeds/` gives `seeds`, `cases.jsonl.gz` gives `cases`)."""
    name = Path(first.rstrip("/\\")).name or "input"
    for suffix in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return Path.cwd() / f"{name or 'input'}.quarantine.jsonl"


def refuse_no_records(report: ValidationReport, paths: Iterable[Path]) -> None:
    """Empty files hold no case: validating them is no check ("all cases valid"), and adding
    them no version ("nothing new")."""
    if report.records == 0:
        raise UserError(f"{', '.join(map(str, paths))}: no case records in them")


def check_inputs(request: ValidateRequest) -> list[Path]:
    """The case files of `request.paths`, refused (a `UserError` saying what to do) when there
    are none or when the quarantine would replace one of them or is a folder."""
    files = expand_paths(request.paths)
    if not files:  # a mistyped or empty folder would pass as "all cases valid"
        raise UserError(
            f"{', '.join(map(str, request.paths))}: no .jsonl or .jsonl.gz case files to validate"
        )
    # the files, not the folders named: a quarantine inside a folder given would replace a file
    check_targets(files, {"--quarantine": request.quarantine}, inputs="an input")
    return files


def count_lines(files: Sequence[Path]) -> int:
    """Lines of the case files (the total of a progress bar; a .gz file is read through)."""
    import gzip

    total = 0
    for path in files:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rb") as handle:
            total += sum(
                chunk.count(b"\n") for chunk in iter(lambda h=handle: h.read(1 << 20), b"")
            )
    return total


def run_validate(
    request: ValidateRequest,
    *,
    progress: Callable[[str], None] | None = None,
    bar: Callable[[int, int], None] | None = None,
) -> ValidateOutcome:
    """Validate `request.paths` through every layer and write the bad records to the
    quarantine. `progress(what)` is told when the validation starts; `bar(done, total)`, now
    and then, how many of the files' lines were read."""
    files = check_inputs(request)
    if progress is not None:
        progress(f"validating ({LAYERS_SAID})")
    tick = None
    if bar is not None:
        total = count_lines(files)
        tick = lambda done: bar(done, total)  # noqa: E731
    report = validate_paths(
        files, strict=request.strict, batch=request.batch, keep_records=False, tick=tick
    )
    refuse_no_records(report, request.paths)
    target = request.quarantine
    if target is None and report.bad:
        target = default_quarantine(str(request.paths[0]))
    if target is not None:
        written = write_quarantine(report, target)
        log.info("%d bad record(s) written to %s", written, target)
    return ValidateOutcome(report, target)
