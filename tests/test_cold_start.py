"""Cold start: what a command imports before it does anything. Great Expectations (about 3 s to
import) is imported only by the batch layer; `casemill validate` imports its own command module,
not the evaluation reports; the lazy root group lists and runs every command as the eager one
did. Timings are printed by bench/cold_start.py, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("great_expectations", "prefect", "pandas", "openai", "fastapi", "jinja2", "numpy")

# Runs the CLI in-process, then prints which of the heavy libraries and CLI modules it imported
PROBE = """
import json, sys
heavy = json.loads(sys.argv[2])
sys.argv = ["casemill", *json.loads(sys.argv[1])]
from casemill.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps({
    "heavy": sorted(m for m in heavy if m in sys.modules),
    "cli": sorted(m for m in sys.modules if m.startswith("casemill.cli.")),
}))
"""


def imported(*argv: str) -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv), json.dumps(HEAVY)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_help_imports_no_heavy_library_but_the_reports():
    found = imported("--help")
    assert "great_expectations" not in found["heavy"]
    assert {"prefect", "pandas", "openai", "fastapi"}.isdisjoint(found["heavy"])
    assert "casemill.cli.eval" in found["cli"]  # --help lists every command


def test_validate_without_the_batch_layer_imports_only_its_command_module():
    found = imported("validate", "--no-batch", "seeds/")
    assert found["heavy"] == []
    assert found["cli"] == ["casemill.cli.console", "casemill.cli.core", "casemill.cli.help"]


@pytest.mark.slow
def test_validate_with_the_batch_layer_imports_great_expectations():
    # the probe above can see the import: the batch layer is where it happens
    assert "great_expectations" in imported("validate", "seeds/")["heavy"]


# Imports every module of casemill.cli in turn and prints the commands each registered
REGISTRY = """
import importlib, json, pkgutil
import casemill.cli as cli
def names():
    return [c.name for c in cli.app.registered_commands] + [
        g.name for g in cli.app.registered_groups]
by_module = {}
for info in pkgutil.iter_modules(cli.__path__):
    if info.name == "__main__":
        continue
    before = set(names())
    importlib.import_module(f"casemill.cli.{info.name}")
    for name in names():
        if name not in before:
            by_module[name] = info.name
print(json.dumps({"registered": by_module, "listed": cli.COMMANDS}))
"""


def test_every_registered_command_is_listed_with_its_module():
    done = subprocess.run(
        [sys.executable, "-c", REGISTRY], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    found = json.loads(done.stdout)
    assert found["registered"] == found["listed"], (
        "casemill.cli.COMMANDS must name each command with the module that registers it"
    )


def test_the_root_group_lists_commands_in_data_flow_order_and_finds_them_lazily():
    import typer.main

    from casemill.cli import COMMANDS, app

    group = typer.main.get_command(app)
    assert group.list_commands(None) == list(COMMANDS)
    validate = group.get_command(None, "validate")
    assert validate is not None and validate.name == "validate"
    assert group.get_command(None, "no-such-command") is None
    assert list(group.commands) == list(COMMANDS)  # reading them loads every module


def test_a_mistyped_command_is_still_suggested():
    done = subprocess.run(
        [sys.executable, "-m", "casemill", "valdate"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2
    assert "No such command 'valdate'. Did you mean 'validate'?" in done.stderr
