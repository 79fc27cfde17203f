"""`casemill agents list`: the built-in agents (the reference agent and its faulty variants)."""

from __future__ import annotations

import json
from dataclasses import asdict

import typer
from rich.markup import escape
from rich.table import Table

from casemill.cli import app
from casemill.cli.console import console
from casemill.cli.help import Typer

agents_app = Typer(
    help="Agents under test: the built-in ones and how to name yours.", no_args_is_help=True
)
app.add_typer(agents_app, name="agents")


@agents_app.command("list")
def agents_list(as_json: bool = typer.Option(False, "--json", help="print a JSON list")) -> None:
    """List the built-in agents (`reference` and every `reference:NAME`) with the bug each has.

    Your own agent is named by a spec instead: python:package.module:function, http(s)://URL
    or openai:MODEL (see docs/agents.md)."""
    from casemill.evaluation.agents import builtin_agents

    infos = builtin_agents()
    if as_json:
        console.print_json(json.dumps([asdict(i) for i in infos]))
        return
    table = Table("agent", "bug (faulty variants)", box=None)
    for info in infos:
        table.add_row(escape(info.spec), escape(info.bug or info.description))
    console.print(table)
