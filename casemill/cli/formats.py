"""`casemill import` and `casemill export`: bring cases in from other formats, write them out."""

from __future__ import annotations

import inspect
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from casemill.cli import app
from casemill.cli.console import console, err_console
from casemill.errors import UserError
from casemill.formats import EXPORTERS, IMPORTERS, ImportResult, write_quarantine
from casemill.formats.cases_io import load_located, write_cases
from casemill.validation.findings import Finding

# what each option of `casemill import` is, for the formats whose importer takes it
OPTIONS = {
    "environment": "the database: tau2's db.json, tau-bench's db/ folder",
    "label": "the generic domain's label",
}


def _run_import(fmt: str, src: Path, environment: Path | None, label: str | None) -> ImportResult:
    """Import `src` with the importer `fmt` names (a `casemill.importers` plugin), giving it
    only the options its signature takes; an option it does not take is refused."""
    importer = _plugin(IMPORTERS, fmt, "--from")
    given = {k: v for k, v in (("environment", environment), ("label", label)) if v is not None}
    for option in given:
        takers = [n for n in IMPORTERS if _takes(IMPORTERS[n], option)]
        if fmt not in takers:
            raise UserError(
                f"--{option} is only for --from {' or '.join(takers) or '(no format)'} "
                f"({OPTIONS[option]})"
            )
    return importer(src, **given)


def _takes(fn: object, option: str) -> bool:
    try:
        params = inspect.signature(fn).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return option in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _plugin(registry: Mapping[str, Any], fmt: str, option: str) -> Any:
    if fmt not in registry:
        raise UserError(f"{option} {fmt!r} is not one of {', '.join(registry)}")
    return registry[fmt]


def _check_targets(sources: list[Path | None], targets: dict[str, Path | None]) -> None:
    """The checks `casemill mine` makes of its outputs: no folder, no input, not each other."""
    from casemill.mining.output import check_targets

    check_targets([p for p in sources if p is not None], targets, inputs="an input")


def _print_summary(result: ImportResult, out: Path | None, quarantine: Path | None) -> None:
    console.print(f"[bold]{result.source}[/] ({result.format})")
    console.print(f"  read         {result.read}")
    console.print(
        f"  imported     {len(result.cases)}" + (f" -> {out}" if out else " (not written: no -o)")
    )
    console.print(
        f"  quarantined  {len(result.quarantined)}"
        + (f" -> {quarantine}" if quarantine and result.quarantined else "")
    )
    for finding in result.findings:
        console.print(f"    {finding}", markup=False, soft_wrap=True)
    domains = ", ".join(f"{d} {n}" for d, n in result.domains.items()) or "(none)"
    console.print(f"  domains      {domains}")
    for note in result.notes:
        console.print(f"  note: {note}", markup=False, soft_wrap=True)


@app.command("import")
def import_cmd(
    src: Path = typer.Argument(..., help="the file to import"),
    fmt: str = typer.Option(
        ...,
        "--from",
        help="the source format: chapter, companion, tau2, tau-bench (docs/formats.md), or one a "
        "package adds",
    ),
    environment: Path | None = typer.Option(
        None,
        "--environment",
        help="tau2: db.json; tau-bench: the db/ folder (default: beside SRC)",
    ),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="write the imported cases here (JSONL)"
    ),
    quarantine: Path | None = typer.Option(
        None, "--quarantine", help="write bad records here (default with -o: OUT.quarantine.jsonl)"
    ),
    label: str | None = typer.Option(
        None, "--label", help="companion: one generic domain label for every non-e-commerce sample"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
) -> None:
    """Import cases from another format. Exit 1 when any record was quarantined, 0 otherwise."""
    if out is not None and quarantine is None:
        from casemill.mining.output import quarantine_path

        quarantine = quarantine_path(out)
    _check_targets([src, environment], {"--out": out, "--quarantine": quarantine})
    result = _run_import(fmt, src, environment, label)
    if out is not None:
        write_cases(out, result.cases)
    if quarantine is not None and result.quarantined:
        write_quarantine(quarantine, result.quarantined)
    if as_json:
        summary = result.summary() | {
            "out": str(out) if out else None,
            "quarantine": str(quarantine) if quarantine and result.quarantined else None,
        }
        console.print_json(json.dumps(summary))
    else:
        _print_summary(result, out, quarantine)
    raise typer.Exit(1 if result.quarantined else 0)


@app.command("export")
def export_cmd(
    src: Path = typer.Argument(
        ..., help="a JSONL file of cases, a corpus folder, or a folder of case files"
    ),
    fmt: str = typer.Option(
        ...,
        "--to",
        help="the target format: chapter, companion (docs/formats.md), or one a package adds",
    ),
    out: Path = typer.Option(..., "-o", "--out", help="the file to write"),
) -> None:
    """Export cases to another format. Exit 1 when a case could not be read or exported."""
    exporter = _plugin(EXPORTERS, fmt, "--to")
    _check_targets([src], {"--out": out})
    located, bad = load_located(src)
    cases = [c.case for c in located]
    result = exporter(cases, out)
    said = f"wrote {result.written} of {len(cases)} cases to {out} ({fmt})"
    if result.skipped:
        said += f"; skipped {len(result.skipped)} ({skipped_reasons(result.skipped)})"
    if result.narrowed:
        said += (
            f"; {len(result.narrowed)} of those written lost forbidden calls the format has no "
            "place for (listed below)"
        )
    console.print(said, markup=False, soft_wrap=True)
    for finding in bad:
        err_console.print(f"  unreadable: {finding}", markup=False, soft_wrap=True)
    where = {c.case.id: c.where for c in reversed(located)}  # a repeated case: its first line
    for finding in result.skipped:
        err_console.print(
            f"  skipped {where.get(finding.case_id, src)}: case {finding.case_id} "
            f"({finding.rule}): field '{finding.field}': {finding.message}",
            markup=False,
            soft_wrap=True,
        )
    for finding in result.narrowed:
        err_console.print(
            f"  without forbidden calls {where.get(finding.case_id, src)}: case "
            f"{finding.case_id}: {finding.message}",
            markup=False,
            soft_wrap=True,
        )
    raise typer.Exit(1 if bad or result.skipped else 0)


def skipped_reasons(skipped: tuple[Finding, ...]) -> str:
    """`user scenario 8, more than one order 18`: the skipped cases counted by reason, the
    commonest first."""
    reasons = Counter(f.rule for f in skipped)
    return ", ".join(
        f"{rule} {n}" for rule, n in sorted(reasons.items(), key=lambda r: (-r[1], r[0]))
    )
