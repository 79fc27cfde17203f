"""The `casemill` command line: noun-verb groups, `--json` on listings, exit codes scripts can
rely on (0 ok, 1 the checked thing failed, 2 usage or input error)."""

from __future__ import annotations

import sys

from rich.markup import escape

from casemill.cli.console import err_console
from casemill.cli.help import Typer
from casemill.errors import UserError

app = Typer(
    name="casemill",
    help="Mill evaluation cases for tool-using LLM agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

# Each stage registers its commands here (one import a stage, in data-flow order).
from casemill.cli import core as _core  # noqa: E402,F401,I001 (data-flow order)
from casemill.cli import agents as _agents  # noqa: E402,F401
from casemill.cli import mine as _mine  # noqa: E402,F401
from casemill.cli import expand as _expand  # noqa: E402,F401
from casemill.cli import formats as _formats  # noqa: E402,F401
from casemill.cli import review as _review  # noqa: E402,F401
from casemill.cli import eval as _eval  # noqa: E402,F401
from casemill.cli import runs as _runs  # noqa: E402,F401
from casemill.cli import pipeline as _pipeline  # noqa: E402,F401
from casemill.cli import plugins as _plugins  # noqa: E402,F401


def main() -> None:
    try:
        app()
    except UserError as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        sys.exit(2)
