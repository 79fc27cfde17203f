"""The `casemill` command line: noun-verb groups, `--json` on listings, exit codes scripts can
rely on (0 ok, 1 the checked thing failed, 2 usage or input error, 3 an internal error: a bug,
whose traceback goes to a log file named on screen, so a script can tell it from bad data).

Each command lives in a module of this package that registers it on `app`. The modules are
imported when their command is asked for (`casemill validate` imports `casemill.cli.core` and
what it needs, not the evaluation reports or the review server), so a command starts in the time
its own imports take; `--help` and the Python API (`app`'s group's `commands`) load them all.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import traceback
from collections.abc import MutableMapping
from pathlib import Path

import typer.main
from rich.markup import escape
from typer import _click

from casemill.cli.console import err_console
from casemill.cli.help import HelpGroup, Typer
from casemill.errors import UserError

# Each top-level command, by the module that registers it, in the order `--help` lists them
# (data-flow order: the commands, then the groups). A command a module registers without being
# named here is found once its module is imported.
COMMANDS: dict[str, str] = {
    "validate": "core",
    "mine": "mine",
    "expand": "expand",
    "import": "formats",
    "export": "formats",
    "eval": "eval",
    "demo": "pipeline",
    "serve": "pipeline",
    "tools": "core",
    "corpus": "core",
    "agents": "agents",
    "ops": "expand",
    "review": "review",
    "runs": "runs",
    "plugins": "plugins",
    "domain": "domains",
}


class LazyGroup(HelpGroup):
    """The root group: a command's module is imported the first time the command is looked up;
    reading `commands` (what Click and the tests walk) imports every module first."""

    @property
    def commands(self) -> MutableMapping[str, _click.Command]:
        self._load(list(COMMANDS))
        return self._commands

    @commands.setter
    def commands(self, value: MutableMapping[str, _click.Command]) -> None:
        self._commands = _in_order(value)

    def list_commands(self, ctx: _click.Context | None) -> list[str]:
        return list(dict.fromkeys([*COMMANDS, *self._commands]))

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        # a name COMMANDS lacks (a typo, or a command not listed there) looks in every module
        self._load([cmd_name] if cmd_name in COMMANDS else list(COMMANDS))
        return self._commands.get(cmd_name)

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        self._load(list(COMMANDS))  # at once: Typer builds the commands once, not once a module
        super().format_help(ctx, formatter)

    def _load(self, names: list[str]) -> None:
        """Import the modules of `names` not loaded yet, and take their commands from `app`."""
        modules = [COMMANDS[n] for n in names if n in COMMANDS and n not in self._commands]
        if not modules:
            return
        for module in dict.fromkeys(modules):
            importlib.import_module(f"{__name__}.{module}")
        built = typer.main.get_group(app)  # every command registered so far, made by Typer
        loaded = _in_order({**built._commands, **self._commands})
        self._commands.clear()  # in place: Click adds commands to this mapping
        self._commands.update(loaded)


def _in_order(commands: MutableMapping[str, _click.Command]) -> dict[str, _click.Command]:
    """`commands` in the order of `COMMANDS`, then any others in their own order."""
    first = {name: commands[name] for name in COMMANDS if name in commands}
    return {**first, **commands}


app = Typer(
    name="casemill",
    help="Mill evaluation cases for tool-using LLM agents.",
    cls=LazyGroup,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root() -> None:
    # A group even before any command module is imported (Typer makes a lone command otherwise)
    pass


INTERNAL_ERROR = 3


def main() -> None:
    """Run the command line and decide its exit: a `UserError` is shown as is (exit 2); any
    other exception is a bug, written with its traceback to a log file whose path is shown
    (exit 3), so the screen stays readable and the exit tells a crash from a failed check."""
    try:
        app()
    except UserError as exc:  # one line, as the terminal wraps it: a path in it stays whole
        err_console.print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - the one place every unexpected error ends
        log = write_crash_log(exc)
        where = f"the traceback is in {log}" if log else "no log file could be written"
        err_console.print(
            f"[bold red]internal error:[/] {escape(type(exc).__name__)}: {escape(str(exc)[:300])}"
            f"\n{escape(where)}; please report it with that file",
            highlight=False,
        )
        sys.exit(INTERNAL_ERROR)


def write_crash_log(exc: BaseException) -> Path | None:
    """Write the command line and `exc`'s traceback to a new file, readable by its owner only
    (a traceback can quote the data being read), in `CASEMILL_CRASH_DIR` or the temporary
    folder; its path, or None when it could not be written."""
    folder = os.environ.get("CASEMILL_CRASH_DIR") or tempfile.gettempdir()
    try:
        fd, name = tempfile.mkstemp(prefix="casemill-crash-", suffix=".log", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write("command: " + " ".join(sys.argv) + "\n\n")
            fh.write("".join(traceback.format_exception(exc)))
    except OSError:
        return None
    return Path(name)
