"""`casemill domain new`: the skeleton of a pack is small, names itself after NAME, and is a
working pack: its seeds validate, and every operator family expands them into valid cases.

The pack is imported from the folder written and registered in this process
(`register_domain`); the slow test installs it into a throwaway environment, as a user would."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill import ExpandRequest, ValidateRequest, plugins, run_expand, run_validate
from casemill.cli import app
from casemill.domains import get_domain, register_domain
from casemill.domains.contract import contract_of
from casemill.domains.scaffold import FILES, check_name, render, write_skeleton
from casemill.errors import UserError
from casemill.generators.framework import KINDS, all_operators

ROOT = Path(__file__).resolve().parents[2]
# every deterministic operator that applies outside the support domain: noise, and the
# operators written against the domain contract
CHAINS = tuple(
    s.name
    for s in all_operators()
    if not s.needs_llm
    and (s.kind == "noise" or s.fn.__module__.startswith("casemill.generators.contract"))
)


def lines_of(paths: list[Path]) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in paths)


@pytest.fixture
def pack(tmp_path, monkeypatch):
    """The bookings skeleton written to tmp_path, imported and registered; forgotten after."""
    folder = tmp_path / "bookings"
    written = write_skeleton("bookings", folder)
    monkeypatch.syspath_prepend(str(folder))
    module = importlib.import_module("bookings")
    register_domain(module.BookingsDomain())
    yield folder, written
    plugins.unregister("domain", "bookings")
    for name in [m for m in sys.modules if m == "bookings" or m.startswith("bookings.")]:
        del sys.modules[name]


def test_the_skeleton_is_a_package_its_pack_and_seeds_in_at_most_200_lines(pack):
    folder, written = pack
    assert sorted(p.relative_to(folder).as_posix() for p in written) == [
        "bookings/__init__.py",
        "bookings/tools.json",
        "pyproject.toml",
        "seeds/bookings.jsonl",
        "tests/test_bookings.py",
    ]
    assert lines_of(written) <= 200
    assert sorted(p for p in folder.rglob("*") if p.is_file()) == sorted(written)
    pyproject = (folder / "pyproject.toml").read_text(encoding="utf-8")
    assert '[project.entry-points."casemill.domains"]\nbookings = "bookings:BookingsDomain"' in (
        pyproject
    )
    tools = json.loads((folder / "bookings" / "tools.json").read_text(encoding="utf-8"))
    assert [t["function"]["name"] for t in tools] == [
        "get_customer",
        "get_booking",
        "cancel_booking",
        "change_booking_date",
        "transfer_to_human",
    ]


def test_the_pack_has_the_whole_contract(pack):
    domain = get_domain("bookings")
    assert domain.read_tools == {"get_customer", "get_booking"}
    assert domain.write_tools == {"cancel_booking", "change_booking_date", "transfer_to_human"}
    contract = contract_of(domain)
    assert contract is not None
    assert [r.tool for r in contract.rules] == ["cancel_booking", "change_booking_date"]
    assert all(r.flips for r in contract.rules)


def test_its_seeds_validate_one_write_allowed_one_refused(pack):
    folder, _ = pack
    checked = run_validate(ValidateRequest(paths=(folder / "seeds",)))
    assert checked.exit_code == 0 and checked.report.valid_count == 2
    assert not checked.report.findings
    outcomes = [
        json.loads(line)["expected"]["outcome"]
        for line in (folder / "seeds" / "bookings.jsonl").read_text().splitlines()
    ]
    assert outcomes == ["resolve", "refuse"]


def test_every_operator_family_expands_its_seeds_into_valid_cases(pack, tmp_path):
    folder, _ = pack
    out = tmp_path / "cases.jsonl"
    done = run_expand(ExpandRequest(seeds=folder / "seeds", out=out, chains=CHAINS))
    per_kind = {kind: sum(row.values()) for kind, row in done.summary["coverage"].items()}
    assert set(per_kind) == set(KINDS) and all(n >= 1 for n in per_kind.values()), per_kind
    assert not set(done.summary["rejected_by_reason"]) - {"near_duplicate"}
    assert not done.summary["messages"]  # no "only the noise operators apply" note
    checked = run_validate(ValidateRequest(paths=(out,), batch=False))
    assert checked.exit_code == 0 and checked.report.valid_count == done.accepted


def test_the_packs_own_test_passes(pack, tmp_path):
    folder, _ = pack
    spec = importlib.util.spec_from_file_location(
        "test_bookings", folder / "tests" / "test_bookings.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.test_the_seeds_validate_and_expand(tmp_path)


def test_the_name_fills_the_package_the_classes_and_the_domain():
    files = render("hotel_rooms")
    assert set(files) == {t.replace("{{name}}", "hotel_rooms") for t in FILES.values()}
    assert not any("{{" in text for text in files.values())
    assert 'hotel_rooms = "hotel_rooms:HotelRoomsDomain"' in files["pyproject.toml"]
    module = files["hotel_rooms/__init__.py"]
    assert 'name: str = "hotel_rooms"' in module and "class HotelRoomsContract:" in module
    assert all(
        json.loads(line)["domain"] == "hotel_rooms"
        for line in files["seeds/hotel_rooms.jsonl"].splitlines()
    )


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("Bookings", "use lower-case letters, digits and underscores"),
        ("my-pack", "use lower-case letters, digits and underscores"),
        ("2rooms", "use lower-case letters, digits and underscores"),
        ("class", "not a Python keyword"),
        ("json", "taken by Casemill or Python"),
        ("airline", "taken by Casemill or Python"),
        ("pytest", "a module of that name is already importable"),
    ],
)
def test_a_name_that_cannot_be_a_pack_says_what_to_change(name, said):
    with pytest.raises(UserError, match=said):
        check_name(name)


def test_a_folder_that_is_not_empty_is_left_alone(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="is not an empty folder"):
        write_skeleton("bookings", tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_domain_new_writes_the_skeleton_and_says_what_to_run_next(tmp_path):
    target = tmp_path / "pack"
    done = CliRunner().invoke(app, ["domain", "new", "rooms", "--dir", str(target)])
    assert done.exit_code == 0, done.output
    assert (target / "rooms" / "__init__.py").is_file()
    assert "uv pip install -e" in done.output and "--operators" in done.output
    again = CliRunner().invoke(app, ["domain", "new", "rooms", "--dir", str(target)])
    assert isinstance(again.exception, UserError)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("uv") is None, reason="needs uv on PATH")
def test_installed_with_uv_the_cli_validates_and_expands_it(tmp_path):
    """The user's path: `casemill domain new`, `uv pip install -e`, then the commands."""
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}

    def sh(*cmd: str | Path) -> str:
        done = subprocess.run(
            [str(c) for c in cmd],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr}"
        return done.stdout

    sh("uv", "venv", "-q", "--python", sys.executable, venv)
    casemill = venv / "bin" / "casemill"
    sh("uv", "pip", "install", "-q", "--python", venv / "bin" / "python", "-e", ROOT)
    sh(casemill, "domain", "new", "bookings")
    sh(
        "uv",
        "pip",
        "install",
        "-q",
        "--python",
        venv / "bin" / "python",
        "-e",
        tmp_path / "bookings",
    )
    sh(casemill, "validate", "bookings/seeds", "--no-batch")
    chains = ",".join(CHAINS)
    sh(casemill, "expand", "--seeds", "bookings/seeds", "-o", "cases.jsonl", "--operators", chains)
    summary = json.loads((tmp_path / "cases.summary.json").read_text())
    assert set(summary["coverage"]) == set(KINDS)
    sh(casemill, "validate", "cases.jsonl", "--no-batch")
