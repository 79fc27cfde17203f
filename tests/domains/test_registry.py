"""Domain packs from installed packages (the `casemill.domains` entry points) and from
`register_domain`: found by name, checked, and used by validation's replay check and the CLI.

The packages are real: a folder on `sys.path` holding a module and its `.dist-info` with an
`entry_points.txt`, which `importlib.metadata` reads as it reads any installed distribution."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from casemill import plugins
from casemill.case.model import Case, Environment, Expected, ExpectedCall, Turn
from casemill.domains import get_domain, known_domains, register_domain
from casemill.errors import UserError
from casemill.replay import replay

BOOKINGS = textwrap.dedent(
    '''
    """A small domain pack: rooms a guest books; a taken room cannot be booked."""
    from dataclasses import dataclass

    from casemill.domains.base import Problem, Sandbox, ToolResult, param_errors, specs_by_name

    def _tool(name, description, *params):
        properties = {p: {"type": "string"} for p in params}
        parameters = {"type": "object", "properties": properties, "required": list(params),
                      "additionalProperties": False}
        return {"type": "function",
                "function": {"name": name, "description": description, "parameters": parameters}}

    TOOLS = (_tool("get_room", "Look a room up.", "room_id"),
             _tool("book_room", "Book a free room for a guest.", "room_id", "guest"))

    class BookingsSandbox(Sandbox):
        def __init__(self, environment, *, faults=True):
            super().__init__(environment, faults=faults)
            self.rooms = {k: dict(v) for k, v in environment.state.get("rooms", {}).items()}

        def _dispatch(self, tool, params):
            spec = specs_by_name(TOOLS).get(tool)
            if spec is None:
                return ToolResult.fail("unknown_tool", f"no tool {tool!r}")
            if errors := param_errors(spec, params):
                return ToolResult.fail("invalid_params", "; ".join(errors))
            room = self.rooms.get(params["room_id"])
            if room is None:
                return ToolResult.fail("not_found", "no such room")
            if tool == "book_room":
                if room["guest"]:
                    return ToolResult.fail("policy", "the room is taken")
                room["guest"] = params["guest"]
            return ToolResult(ok=True, content=room)

        def final_state(self):
            return {"rooms": self.rooms}

    @dataclass
    class BookingsDomain:
        name: str = "bookings"
        tool_specs: tuple = TOOLS
        read_tools: frozenset = frozenset({"get_room"})
        write_tools: frozenset = frozenset({"book_room"})
        has_simulator: bool = True
        no_replay_reason: str = ""

        def sandbox(self, environment, *, faults=True):
            return BookingsSandbox(environment, faults=faults)

        def state_problems(self, state):
            if isinstance(state.get("rooms"), dict):
                return []
            return [Problem("environment.state.rooms", "rooms must be an object", "state-shape")]

        def reference_problems(self, case):
            rooms = case.environment.state.get("rooms", {})
            return [
                Problem(f"expected.tool_calls[{i}].params.room_id",
                        f"room {c.params.get('room_id')!r} is not in the environment", "missing-id")
                for i, c in enumerate(case.expected.tool_calls)
                if c.params.get("room_id") not in rooms
            ]

    NOT_A_DOMAIN = object()

    def broken():
        raise RuntimeError("no rooms file")
    '''
)


def install(folder: Path, entry_points: dict[str, str], name: str = "bookings-pack") -> Path:
    """`bookings_pack` and a distribution `name` declaring `entry_points`, in `folder`."""
    (folder / "bookings_pack").mkdir(parents=True, exist_ok=True)
    (folder / "bookings_pack" / "__init__.py").write_text(BOOKINGS)
    info = folder / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[casemill.domains]\n{lines}")
    return folder


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Installs packages into a folder on sys.path; forgets every pack loaded or registered."""

    def _install(entry_points: dict[str, str], name: str = "bookings-pack") -> Path:
        folder = install(tmp_path / name, entry_points, name)
        monkeypatch.syspath_prepend(str(folder))
        plugins.refresh()
        return folder

    yield _install
    plugins.refresh()
    plugins.unregister("domain", "bookings")
    sys.modules.pop("bookings_pack", None)


def booking(room: str, taken_by: str = "") -> Case:
    return Case(
        domain="bookings",
        environment=Environment(state={"rooms": {"R1": {"guest": taken_by}}}),
        conversation=(Turn(role="customer", content=f"Please book room {room} for Ana."),),
        expected=Expected(
            tool_calls=(ExpectedCall(tool="book_room", params={"room_id": room, "guest": "Ana"}),),
            outcome="resolve",
            optimal_steps=2,
        ),
    )


def test_a_declared_pack_is_found_by_name_and_replays_its_cases(installed):
    installed({"bookings": "bookings_pack:BookingsDomain"})  # a class: made without arguments
    pack = get_domain("bookings")
    assert pack.name == "bookings" and pack.write_tools == {"book_room"}
    assert get_domain("bookings") is pack  # loaded once
    assert "bookings" in known_domains()
    done = replay(booking("R1"))
    assert done.ok and done.final_state == {"rooms": {"R1": {"guest": "Ana"}}}
    refused = replay(booking("R1", taken_by="Ben"))
    assert not refused.ok
    assert "the room is taken" in refused.problems[0].message


def test_a_declared_instance_is_used_as_it_is(installed):
    folder = installed({"bookings": "bookings_pack:PACK"})
    (folder / "bookings_pack" / "__init__.py").write_text(BOOKINGS + "\nPACK = BookingsDomain()\n")
    from bookings_pack import PACK

    assert get_domain("bookings") is PACK


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (
            "bookings_pack:NOT_A_DOMAIN",
            "is not a Domain (casemill.domains.base.Domain): it lacks "
            "name, tool_specs, read_tools, write_tools, has_simulator, no_replay_reason, sandbox, "
            "state_problems, reference_problems",
        ),
        ("bookings_pack:Missing", ": module 'bookings_pack' has no attribute 'Missing'"),
        (
            "bookings_gone:BookingsDomain",
            ": cannot import module 'bookings_gone' (No module named 'bookings_gone'); is it on "
            "PYTHONPATH?",
        ),
        (
            "bookings_pack:broken",
            ": making the pack raised RuntimeError: no rooms file (at ",
        ),
    ],
)
def test_a_pack_that_is_not_a_domain_says_what_to_fix(installed, value, said):
    installed({"bookings": value})
    with pytest.raises(UserError) as err:
        get_domain("bookings")
    assert said in str(err.value)
    assert f"package 'bookings-pack' (casemill.domains entry point bookings = {value})" in str(
        err.value
    )


def test_a_pack_named_otherwise_than_its_entry_point_is_refused(installed):
    installed({"hotels": "bookings_pack:BookingsDomain"})
    with pytest.raises(UserError, match="domain 'hotels' .* calls itself 'bookings'"):
        get_domain("hotels")


def test_a_built_in_name_stays_the_built_in_pack(installed, caplog):
    installed({"support": "bookings_pack:BookingsDomain"})
    assert get_domain("support").name == "support"
    assert type(get_domain("support")).__name__ == "SupportDomain"
    assert known_domains() == ["airline", "support", "tau2-retail"]
    assert "declares domain 'support', a built-in name: ignored" in caplog.text


def test_two_packages_declaring_one_name_are_refused(installed):
    installed({"bookings": "bookings_pack:BookingsDomain"})
    installed({"bookings": "bookings_pack:PACK"}, name="other-pack")
    with pytest.raises(UserError, match="domain 'bookings' is declared twice, by package"):
        get_domain("bookings")


def test_an_unknown_domain_names_the_known_ones_and_how_to_add_one(installed):
    installed({"bookings": "bookings_pack:BookingsDomain"})
    with pytest.raises(UserError) as err:
        get_domain("hotel")
    assert str(err.value).startswith(
        "unknown domain 'hotel'; known: airline, bookings, support, tau2-retail, generic[:LABEL] "
        "(a package adds one under the 'casemill.domains' entry points"
    )


def test_register_domain_in_a_script(installed):
    installed({})
    from bookings_pack import BookingsDomain

    pack = register_domain(BookingsDomain())
    assert get_domain("bookings") is pack and replay(booking("R1")).ok
    with pytest.raises(UserError, match="registered already; pass replace=True"):
        register_domain(BookingsDomain())
    again = register_domain(BookingsDomain(), replace=True)
    assert get_domain("bookings") is again is not pack
    with pytest.raises(UserError, match="'support' is a built-in domain"):
        register_domain(BookingsDomain(name="support"), replace=True)
    with pytest.raises(UserError, match="is a built-in domain"):
        register_domain(BookingsDomain(name="generic:rooms"))


def test_the_cli_validates_and_lists_a_declared_pack(tmp_path):
    folder = install(tmp_path / "site", {"bookings": "bookings_pack:BookingsDomain"})
    cases = tmp_path / "bookings.jsonl"
    cases.write_text(
        "".join(c.model_dump_json(exclude={"id"}) + "\n" for c in (booking("R1"), booking("R9")))
    )
    env = {**os.environ, "PYTHONPATH": str(folder), "COLUMNS": "200"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "casemill.cli", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,  # where validate writes its quarantine file
        )

    listed = cli("tools", "list", "--domain", "bookings")
    assert listed.returncode == 0, listed.stderr
    assert "read   get_room  Look a room up." in listed.stdout
    assert "write  book_room  Book a free room for a guest." in listed.stdout
    checked = cli("validate", str(cases), "--json")
    assert checked.returncode == 1, checked.stderr  # R9 is not a room of its environment
    report = json.loads(checked.stdout)
    problems = {(f["line"], f["rule"]) for f in report["findings"]}
    assert (2, "missing-id") in problems and not any(line == 1 for line, _ in problems)
    assert (tmp_path / "bookings.quarantine.jsonl").read_text().count("\n") == 1


def test_tools_list_of_a_generic_domain_says_why_it_lists_none():
    from typer.testing import CliRunner

    from casemill.cli import app

    result = CliRunner().invoke(app, ["tools", "list", "--domain", "generic:foo"])
    assert result.exit_code == 0
    assert result.stdout == ""
    said = " ".join(result.stderr.split())
    assert said.startswith("domain generic:foo declares no tools: a generic domain takes the")
