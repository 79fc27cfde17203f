"""`casemill plugins list`: every plugin of every kind, where it comes from, whether it loads."""

from __future__ import annotations

import json

import typer
from rich.markup import escape
from rich.table import Table

from casemill.cli import app
from casemill.cli.console import console
from casemill.cli.help import Typer
from casemill.errors import UserError

plugins_app = Typer(
    help="Plugins: domains, operators, agents, log formats, importers, exporters, metrics and "
    "gate checks, Casemill's own and those installed packages add (docs/plugins.md).",
    no_args_is_help=True,
)
app.add_typer(plugins_app, name="plugins")


@plugins_app.command("list")
def plugins_list(
    kind: list[str] = typer.Option(
        None, "--kind", "-k", help="only this kind (repeatable): domain, operator, agent, ..."
    ),
    as_json: bool = typer.Option(False, "--json", help="print a JSON list"),
) -> None:
    """List every plugin: its kind, name, origin (built-in or the package that declares it),
    the object its entry point names, and the error when it does not load. Each plugin is
    loaded to check it. Exit 1 when one does not load, 0 otherwise."""
    from casemill import plugins

    unknown = sorted(set(kind or ()) - set(plugins.KINDS))
    if unknown:
        raise UserError(f"--kind {unknown[0]!r} is not a kind; kinds: {', '.join(plugins.KINDS)}")
    rows = plugins.rows(kind or None)
    if as_json:
        console.print_json(json.dumps([r.as_dict() for r in rows]))
    else:
        errors = any(r.error for r in rows)  # the error column only when there is one to show
        table = Table("kind", "name", "from", box=None)
        table.add_column("object", overflow="fold")
        if errors:
            table.add_column("error", overflow="fold")
        for r in rows:
            cells = (r.kind, r.name, r.origin, r.target, *((r.error,) if errors else ()))
            table.add_row(*(escape(v or "") for v in cells))
        console.print(table)
    raise typer.Exit(1 if any(r.error for r in rows) else 0)
