"""Foundation commands: domains and their tools."""

from __future__ import annotations

import json

import typer

from casemill.cli import app
from casemill.cli.console import console
from casemill.domains import get_domain

tools_app = typer.Typer(help="The tools a domain pack offers an agent.", no_args_is_help=True)
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
    for spec in pack.tool_specs:
        fn = spec["function"]
        kind = "read " if fn["name"] in pack.read_tools else "write"
        console.print(f"{kind}  [bold]{fn['name']}[/]  {fn['description']}")
