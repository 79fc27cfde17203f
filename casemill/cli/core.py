"""Foundation commands: domains and their tools, `validate`, and the `corpus` group."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import typer
from rich.table import Table

from casemill.case.model import Case, Category, Origin
from casemill.cli import app
from casemill.cli.console import console, err_console, progress_bar
from casemill.cli.help import Typer
from casemill.corpus import (
    CorpusStore,
    approval_problem,
    diff_versions,
    existing_store,
    parse_version,
    verify_corpus,
)
from casemill.domains import get_domain
from casemill.errors import UserError
from casemill.settings import Settings
from casemill.text import count as counted
from casemill.validation import ValidationReport, validate_paths
from casemill.validation.loading import LoadedCase
from casemill.validation.stage import (
    ValidateOutcome,
    ValidateRequest,
    refuse_no_records,
    run_validate,
)

tools_app = Typer(help="The tools a domain pack offers an agent.", no_args_is_help=True)
app.add_typer(tools_app, name="tools")


@tools_app.command("list")
def tools_list(
    domain: str = typer.Option("support", help="domain pack"),
    as_json: bool = typer.Option(False, "--json", help="print OpenAI function definitions"),
) -> None:
    """List a domain's tools (read or write) with their descriptions."""
    pack = get_domain(domain)
    if as_json:
        console.print_json(json.dumps(list(pack.tool_specs)))
        return
    if not pack.tool_specs:  # a generic domain: its tools are what its cases call
        err_console.print(
            f"domain {domain} declares no tools: a generic domain takes the tools its cases "
            "call (an import infers them; `casemill mine --tools FILE` names them)",
            markup=False,
            soft_wrap=True,
        )
        return
    for spec in pack.tool_specs:
        fn = spec["function"]
        kind = "read " if fn["name"] in pack.read_tools else "write"
        console.print(f"{kind}  [bold]{fn['name']}[/]  {fn['description']}")


# -- validate ---------------------------------------------------------------------------------


def _summary_table(report: ValidationReport) -> Table:
    table = Table(title="validation summary", show_edge=False)
    table.add_column("layer")
    table.add_column("rule")
    table.add_column("findings", justify="right")
    for layer, rules in report.counts().items():
        for rule, count in rules.items():
            table.add_row(layer, rule, str(count))
    table.add_section()
    table.add_row("records", "", str(report.records))
    table.add_row("valid", "", str(report.valid_count))
    table.add_row("bad", "", str(len(report.bad)))
    table.add_row("warnings", "", str(len(report.warnings)))
    return table


@app.command("validate")
def validate(
    paths: list[Path] = typer.Argument(..., help="case files (.jsonl, .jsonl.gz) or folders"),
    strict: bool = typer.Option(False, "--strict", help="lint warnings count as errors"),
    as_json: bool = typer.Option(False, "--json", help="print a machine-readable report"),
    quarantine: Path | None = typer.Option(
        None,
        "--quarantine",
        help="bad records go here (default, when any record is bad: "
        "NAME.quarantine.jsonl in the current folder, NAME the first input's name)",
    ),
    no_batch: bool = typer.Option(False, "--no-batch", help="skip the Great Expectations suite"),
) -> None:
    """Validate case files through every layer; exit 0 when every case is valid, 1 otherwise."""
    request = ValidateRequest(tuple(paths), strict, not no_batch, quarantine)
    with progress_bar("validating", not as_json) as bar:
        outcome = run_validate(request, bar=bar)
    if as_json:
        typer.echo(json.dumps(outcome.as_json(), ensure_ascii=False, indent=2))
    else:
        _print_report(outcome)
    raise typer.Exit(outcome.exit_code)


def _print_report(outcome: ValidateOutcome) -> None:
    """Each finding (warnings yellow, errors red), the counts and the verdict."""
    report, target = outcome.report, outcome.quarantine
    for finding in report.findings:
        style = "yellow" if finding.severity == "warning" else "red"
        console.print(str(finding), style=style, markup=False, soft_wrap=True)
    console.print(_summary_table(report))
    if target is not None:
        console.print(f"{len(report.bad)} bad records written to {target}", markup=False)
    verdict = "[green]all cases valid[/]" if report.ok else "[red]invalid cases found[/]"
    console.print(verdict)


# -- corpus -----------------------------------------------------------------------------------

corpus_app = Typer(
    help="The versioned corpus: stats, list, show, diff, add, retire, verify.",
    no_args_is_help=True,
)
app.add_typer(corpus_app, name="corpus")

CorpusOpt = typer.Option(None, "--corpus", help="corpus folder (default: settings corpus_dir)")


def _store(corpus: Path | None, *, create: bool = False) -> CorpusStore:
    """The corpus of `--corpus` or the settings; one that must already exist (all but `add`)
    is a folder, or a mistyped path would be read as an empty corpus, silently."""
    if create:
        return CorpusStore(corpus or Settings().corpus_dir)
    if corpus is not None:
        return existing_store(corpus)
    return existing_store(Settings().corpus_dir, "corpus_dir (settings)")


def _row(case: Case) -> dict[str, Any]:
    return {
        "id": case.id,
        "domain": case.domain,
        "origin": case.provenance.origin,
        "category": case.tags.category,
        "outcome": case.expected.outcome,
        "intents": list(case.tags.intents),
        "difficulty": case.tags.difficulty,
        "review": case.review.status,
    }


@corpus_app.command("stats")
def corpus_stats(
    as_json: bool = typer.Option(False, "--json", help="print the counts as JSON"),
    corpus: Path | None = CorpusOpt,
) -> None:
    """Versions, active cases and counts per slice of the latest version."""
    stats = _store(corpus).stats()
    if as_json:
        typer.echo(json.dumps(stats, indent=2, sort_keys=True))
        return
    console.print(
        f"corpus {stats['root']}: {stats['versions']} versions, {stats['active']} active cases",
        markup=False,
    )
    for slice_name, counts in stats.get("counts", {}).items():
        table = Table(title=slice_name, show_edge=False)
        table.add_column(slice_name)
        table.add_column("cases", justify="right")
        for key, count in counts.items():
            table.add_row(key, str(count))
        console.print(table)


def _check_choice(option: str, value: str | None, choices: Any) -> None:
    """A filter value no case can have (a typo) is refused, not answered with no cases."""
    known = get_args(choices)
    if value is not None and value not in known:
        raise UserError(f"{option} {value!r}: expected one of {', '.join(known)}")


@corpus_app.command("list")
def corpus_list(
    as_json: bool = typer.Option(False, "--json", help="print the cases as JSON"),
    corpus: Path | None = CorpusOpt,
    origin: str | None = typer.Option(None, "--origin", help="seed, mined, generated, imported"),
    category: str | None = typer.Option(None, "--category", help="capability, robustness, ..."),
) -> None:
    """The active cases of the latest version."""
    _check_choice("--origin", origin, Origin)
    _check_choice("--category", category, Category)
    rows = [_row(c) for c in _store(corpus).cases()]
    rows = [
        r
        for r in rows
        if (origin is None or r["origin"] == origin)
        and (category is None or r["category"] == category)
    ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(show_edge=False)
    for column in ("id", "origin", "category", "outcome", "intents", "difficulty", "review"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            r["id"],
            r["origin"],
            r["category"],
            r["outcome"],
            ",".join(r["intents"]),
            r["difficulty"],
            r["review"],
        )
    console.print(table)
    console.print(f"{len(rows)} cases")


@corpus_app.command("show")
def corpus_show(
    case_id: str = typer.Argument(..., help="a case id (or a unique prefix of one)"),
    corpus: Path | None = CorpusOpt,
) -> None:
    """One case as JSON (exit 1 when no case has this id)."""
    store = _store(corpus)
    case = store.get(case_id)
    if case is None:
        matches = sorted(i for i in store.active_ids() if i.startswith(case_id))
        if len(matches) != 1:
            err_console.print(
                f"no single case matches {case_id!r} ({len(matches)} matches)", markup=False
            )
            raise typer.Exit(1)
        case = store.get(matches[0])
    typer.echo(json.dumps(case.model_dump(mode="json"), indent=2, ensure_ascii=False))
    retired_in = next((m.name for m in reversed(store.manifests()) if case.id in m.retired), None)
    if retired_in is not None and case.id not in store.active_ids():
        err_console.print(f"{case.id} is not active: retired in {retired_in}", markup=False)


@corpus_app.command("diff")
def corpus_diff(
    old: str | None = typer.Argument(None, help="from this version (default: the one before NEW)"),
    new: str | None = typer.Argument(None, help="to this version (default: the latest)"),
    as_json: bool = typer.Option(False, "--json", help="print the ids added and retired as JSON"),
    corpus: Path | None = CorpusOpt,
) -> None:
    """The cases added and retired between two versions (v0002 or 2; 0 is the empty corpus)."""
    diff = diff_versions(
        _store(corpus),
        None if old is None else parse_version(old),
        None if new is None else parse_version(new),
    )
    span = f"{diff.name(diff.old)} -> {diff.name(diff.new)}"
    if as_json:
        data = {
            "old": diff.name(diff.old),
            "new": diff.name(diff.new),
            "added": [_row(c) for c in diff.added],
            "retired": [_row(c) for c in diff.retired],
        }
        typer.echo(json.dumps(data, indent=2))
        return
    table = Table(show_edge=False)
    for column in ("", "id", "origin", "category", "outcome", "intents"):
        table.add_column(column)
    for sign, cases in (("+", diff.added), ("-", diff.retired)):
        for case in cases:
            r = _row(case)
            table.add_row(
                sign, r["id"], r["origin"], r["category"], r["outcome"], ",".join(r["intents"])
            )
    if diff.added or diff.retired:
        console.print(table)
    console.print(f"{span}: +{len(diff.added)} added, -{len(diff.retired)} retired", markup=False)


@corpus_app.command("add")
def corpus_add(
    files: list[Path] = typer.Argument(..., help="case files or folders to add"),
    note: str = typer.Option("", "--note", help="a note for the new version's manifest"),
    corpus: Path | None = CorpusOpt,
    strict: bool = typer.Option(False, "--strict", help="lint warnings count as errors"),
    approve_as: str | None = typer.Option(
        None,
        "--approve-as",
        help="approve the pending cases as this reviewer (hand-written cases you vouch for)",
    ),
) -> None:
    """Validate the files, then write a new version adding their cases (exit 1 if any is bad:
    nothing is written then). Only approved cases enter the corpus: pending ones are refused
    unless --approve-as names who approves them; rejected ones always are."""
    report = validate_paths(files, strict=strict, batch=False)
    refuse_no_records(report, files)
    if not report.ok:
        for finding in report.errors:
            err_console.print(str(finding), style="red", markup=False, soft_wrap=True)
        err_console.print(
            f"{len(report.bad)} bad records: nothing added "
            f"(see `casemill validate {' '.join(map(str, files))}`)",
            markup=False,
        )
        raise typer.Exit(1)
    cases = _approved(report.valid, approve_as)
    manifest = _store(corpus, create=True).add_version(cases, note=note)
    if manifest is None:
        console.print("nothing new: every case is already active")
        return
    console.print(
        f"{manifest.name}: +{len(manifest.added)} cases, {manifest.active_count} active",
        markup=False,
    )


def _approved(loaded: list[LoadedCase], approve_as: str | None) -> list[Case]:
    """The loaded cases, every one approved: unreviewed ones (pending, or saying approved with
    no reviewer, so no decision recorded) approved by `approve_as` (a `UserError` without it),
    rejected ones refused."""
    from datetime import UTC, datetime

    from casemill.case.model import Review

    rejected = [c.case.id for c in loaded if c.case.review.status == "rejected"]
    if rejected:
        raise UserError(
            f"{len(rejected)} case(s) were rejected in review and cannot enter the corpus "
            f"(first: {', '.join(rejected[:3])})"
        )
    unreviewed = [c for c in loaded if approval_problem(c.case)]
    if not unreviewed:
        return [c.case for c in loaded]
    if approve_as is None or not approve_as.strip():
        pending = [c for c in unreviewed if c.case.review.status == "pending"]
        unsigned = [c for c in unreviewed if c.case.review.status != "pending"]
        said = []
        if pending:
            said.append(
                f"{len(pending)} case(s) are pending review (first: "
                f"{', '.join(c.case.id for c in pending[:3])})"
            )
        if unsigned:
            first = unsigned[0]
            said.append(
                f"{len(unsigned)} case(s) say approved but were never reviewed: no "
                f"review.reviewer (first: {first.file}:{first.line} {first.case.id})"
            )
        raise UserError(
            f"{'; '.join(said)}; only approved cases enter the corpus: "
            "review them (casemill review enqueue FILE), or approve hand-written cases you "
            "vouch for with --approve-as YOUR_NAME"
        )
    review = Review(
        status="approved",
        reviewer=approve_as.strip(),
        decided_at=datetime.now(UTC),
        notes="approved on casemill corpus add",
    )
    return [c.case.model_copy(update={"review": review}) if approval_problem(c.case) else c.case
            for c in loaded]  # fmt: skip


@corpus_app.command("retire")
def corpus_retire(
    case_ids: list[str] = typer.Argument(..., help="ids of active cases to retire"),
    note: str = typer.Option("", "--note", help="a note for the new version's manifest"),
    corpus: Path | None = CorpusOpt,
) -> None:
    """Write a new version retiring these cases (their lines stay in cases.jsonl)."""
    manifest = _store(corpus).add_version(retire=case_ids, note=note or "retire")
    if manifest is not None:
        console.print(
            f"{manifest.name}: -{len(manifest.retired)} cases, {manifest.active_count} active",
            markup=False,
        )


@corpus_app.command("verify")
def corpus_verify(
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
    corpus: Path | None = CorpusOpt,
) -> None:
    """Check manifests' hashes against the cases and report stray cases; exit 1 on a problem."""
    report = verify_corpus(_store(corpus))
    if as_json:
        typer.echo(json.dumps(report.as_dict(), indent=2))
    else:
        for problem in report.problems:
            console.print(f"{problem.where}: {problem.message}", style="red", markup=False)
        if report.stray:
            console.print(
                f"{len(report.stray)} stray cases (named by no manifest, not active): "
                f"{', '.join(report.stray[:5])}",
                style="yellow",
                markup=False,
            )
        state = "ok" if report.ok else "DAMAGED"
        console.print(
            f"corpus {report.root}: {counted(report.versions, 'version')}, {report.active:,} active, "
            f"{report.cases:,} stored: {state}",
            markup=False,
        )
    raise typer.Exit(0 if report.ok else 1)
