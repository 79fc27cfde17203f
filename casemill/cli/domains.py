"""`casemill domain new NAME`: the skeleton of a domain pack of your own, ready to install."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from casemill.cli import app
from casemill.cli.console import console
from casemill.cli.help import Typer

domain_app = Typer(
    help="Domain packs of your own: a skeleton to start from (docs/domains.md).",
    no_args_is_help=True,
)
app.add_typer(domain_app, name="domain")

# the operators the skeleton's test runs: one noise operator and every contract operator
CHAINS = (
    "slang,swap_entity,flip_precondition,attack_customer,attack_tool_result,fault_transient,"
    "fault_persistent,blend_request,blend_conflict"
)


@domain_app.command("new")
def domain_new(
    name: str = typer.Argument(..., help="the pack's name: its domain and its package"),
    folder: Path | None = typer.Option(
        None, "--dir", help="where to write it (default: ./NAME); a new or empty folder"
    ),
) -> None:
    """Write the skeleton of a domain pack: an installable package declaring the pack (tools,
    sandbox, a policy rule with flips, the domain contract), two seeds and a test. It models
    customers and bookings; docs/domains.md walks through making it yours."""
    from casemill.domains.scaffold import write_skeleton

    target = folder if folder is not None else Path(name)
    written = write_skeleton(name, target)
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in written)
    console.print(f"wrote the {escape(name)} pack to {escape(str(target))} ({lines} lines):")
    for path in written:
        console.print(f"  {escape(str(path.relative_to(target)))}", highlight=False)
    seeds = escape(str(target / "seeds"))
    console.print(
        "next:\n"
        f"  uv pip install -e {escape(str(target))}\n"
        f"  casemill validate {seeds}\n"
        f"  casemill expand --seeds {seeds} -o cases.jsonl --operators {CHAINS}\n"
        f"  pytest {escape(str(target / 'tests'))}",
        soft_wrap=True,
    )
