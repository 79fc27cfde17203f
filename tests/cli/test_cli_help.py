"""`--help` of every command: flags show no value (`--json`, not `--json <bool>`), arguments
and repeatable options show the type of one value (not `<list[Path]>`), and docstrings wrapped
in the source reflow to the terminal's width."""

from __future__ import annotations

import pytest
import typer.main
from typer import _click
from typer.core import TyperOption
from typer.testing import CliRunner

from casemill.cli import app
from casemill.cli.help import reflow

runner = CliRunner()


def help_of(*words: str, width: int = 100) -> str:
    result = runner.invoke(app, [*words, "--help"], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.output


def rows(output: str) -> list[str]:
    """The lines of the help panels without their borders, spaces collapsed."""
    return [" ".join(line.strip("│╭╰─╮╯ ").split()) for line in output.splitlines()]


def all_commands() -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []

    def walk(command: _click.Command, path: tuple[str, ...]) -> None:
        found.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return found


def test_mine_help_shows_flags_bare_and_the_logs_argument_as_paths() -> None:
    lines = rows(help_of("mine"))
    assert "Usage: casemill mine [OPTIONS] LOGS..." in lines
    assert "* logs... <path> log files (gzip read transparently) [required]" in lines
    assert "--no-redact keep personal data (never for real logs)" in lines
    assert "--json print the summary as JSON" in lines
    assert "--help Show this message and exit." in lines
    assert "* --out -o <path> candidates JSONL to write [required]" in lines


def test_review_list_help_shows_one_value_of_a_repeatable_option() -> None:
    lines = rows(help_of("review", "list"))
    assert any(line.startswith("--filter <str> KEY=VALUE, repeatable") for line in lines)
    assert "--json print the cases as JSON" in lines


def test_optional_arguments_are_bracketed_names_in_the_usage_line() -> None:
    assert "Usage: casemill corpus diff [OPTIONS] [OLD] [NEW]" in rows(help_of("corpus", "diff"))


@pytest.mark.parametrize("path", all_commands(), ids=lambda p: " ".join(p) or "casemill")
def test_no_command_shows_a_value_for_a_flag_or_a_python_annotation(path) -> None:
    output = help_of(*path, width=200)
    assert "<bool>" not in output
    assert "list[" not in output
    usage = next(line for line in output.splitlines() if "Usage:" in line)
    assert "{" not in usage, usage


def test_wrapped_docstrings_reflow_in_command_help_and_in_command_lists() -> None:
    expand = " ".join(help_of("expand").split())
    assert (
        "Beside `-o NAME.jsonl` it writes NAME.rejects.jsonl (skipped seeds with file, line and"
        " field; rejected attempts with the reason) and NAME.summary.json" in expand
    )
    review = rows(help_of("review", width=200))
    assert (
        "reject Reject every case matching the filters: pending ones unless a status=... filter"
        " says otherwise (leased cases are skipped)." in review
    )


def test_wrapped_help_lines_fill_the_width() -> None:
    text = help_of("review", "approve", width=80).split("╭")[0]
    prose = [line.strip() for line in text.splitlines() if line.strip()][1:]
    assert prose[0].startswith("Approve every case matching the filters: pending ones unless a")
    assert all(len(line) > 60 for line in prose[:-1]), prose


def test_reflow_joins_lines_of_a_paragraph_and_keeps_lists_and_marked_blocks() -> None:
    doc = """First line
    goes on.

    Second paragraph
    wraps here.

    Steps:
      - one
      - two

    \b
    keep
    as is
    \f
    for the source reader"""
    assert reflow(doc) == (
        "First line goes on.\n\nSecond paragraph wraps here.\n\nSteps:\n  - one\n  - two"
        "\n\nkeep\nas is"
    )
    assert reflow(None) is None


@pytest.mark.parametrize("path", all_commands(), ids=lambda p: " ".join(p) or "casemill")
def test_every_option_says_what_it_does(path) -> None:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    silent = [p.opts[0] for p in command.params if isinstance(p, TyperOption) and not p.help]
    assert silent == [], f"casemill {' '.join(path)}: {silent} have no help text"
