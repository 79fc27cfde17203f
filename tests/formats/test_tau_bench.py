"""`import --from tau-bench`: the shared airline tasks 0-24 as airline cases, and bad records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill.cli import app
from casemill.domains import get_domain
from casemill.errors import UserError
from casemill.formats import IMPORTERS
from casemill.formats.result import ImportResult
from casemill.formats.tau_bench import import_tau_bench
from casemill.replay import replay
from tests.domains.airline_state import state

AIRLINE = get_domain("airline")


@pytest.fixture(scope="module")
def tasks(shared_data: Path) -> Path:
    return shared_data / "tau-bench-airline" / "tasks.json"


@pytest.fixture(scope="module")
def kept(tasks: Path) -> ImportResult:
    return import_tau_bench(tasks, keep_policy_conflicts=True)


@pytest.fixture(scope="module")
def by_task(kept: ImportResult) -> dict:
    return {c.provenance.source.conversation_id: c for c in kept.cases}


@pytest.mark.shared_data
def test_the_policy_breaking_task_is_quarantined_by_default(tasks: Path) -> None:
    result = import_tau_bench(tasks)
    assert len(result.cases) == 24
    [bad] = result.quarantined
    [finding] = bad.findings
    assert bad.record["task_id"] == 10
    assert (finding.rule, finding.field, finding.file) == (
        "policy",
        "expected.tool_calls[0]",
        str(tasks),
    )
    assert "cannot be cancelled" in finding.message


@pytest.mark.shared_data
def test_every_task_is_kept_when_asked_and_its_expected_calls_replay(kept, by_task) -> None:
    assert len(kept.cases) == 25 and not kept.quarantined
    for task_id, case in by_task.items():
        result = replay(case, AIRLINE)
        assert result.ok, (task_id, result.problems)
    assert "policy-conflict:kept" in by_task["10"].tags.labels
    assert by_task["10"].provenance.label_confidence == "low"


@pytest.mark.shared_data
def test_tasks_map_to_cases_by_value(tasks: Path, by_task: dict) -> None:
    raw = {str(t["task_id"]): t for t in json.loads(tasks.read_text())}
    for task_id, case in by_task.items():
        task = raw[task_id]
        writes = [a for a in task["actions"] if a["name"] in AIRLINE.write_tools]
        assert [(c.tool, c.params) for c in case.expected.tool_calls] == [
            (a["name"], a["kwargs"]) for a in writes
        ]
        assert list(case.expected.reply_contains) == task["outputs"]
        assert case.user_scenario == task["instruction"]
        assert case.customer.facts["user_id"] == task["user_id"]
        assert task["user_id"] in case.environment.state["users"]
    assert by_task["0"].customer.facts["email"] == "mia.li3818@example.com"
    assert by_task["13"].expected.outcome == "escalate"
    assert by_task["12"].expected.outcome == "refuse"
    assert by_task["2"].expected.reply_contains == ("23553",)


@pytest.mark.shared_data
def test_lenient_where_the_benchmark_is(by_task: dict) -> None:
    bags = by_task["4"].expected.tool_calls[2]  # nonfree 0: nothing charged
    assert bags.match["payment_id"].kind == "any"
    upgrade = by_task["4"].expected.tool_calls[0]  # charged: the payment method counts
    assert "payment_id" not in upgrade.match
    assert upgrade.match["flights"].kind == "any"
    assert by_task["13"].expected.tool_calls[0].match["summary"].kind == "any"


@pytest.mark.shared_data
def test_the_environment_is_a_slice(by_task: dict, shared_data: Path) -> None:
    db = shared_data / "tau-bench-airline" / "db"
    all_flights = len(json.loads((db / "flights.json").read_text()))
    case = by_task["1"]
    user = case.environment.state["users"]["olivia_gonzalez_2305"]
    assert set(user["reservations"]) <= set(case.environment.state["reservations"])
    assert len(case.environment.state["users"]) == 1
    assert len(case.environment.state["flights"]) < all_flights / 2


def _db(folder: Path) -> Path:
    """A small database folder written from the hand-made slice."""
    folder.mkdir()
    for name in ("users", "flights", "reservations"):
        (folder / f"{name}.json").write_text(json.dumps(state()[name]))
    return folder


def test_bad_records_are_quarantined_with_line_and_field_and_good_ones_kept(tmp_path) -> None:
    _db(tmp_path / "db")
    good = {
        "task_id": 0,
        "user_id": "ann_lee_1",
        "instruction": "Cancel reservation NEW001.",
        "actions": [{"name": "cancel_reservation", "kwargs": {"reservation_id": "NEW001"}}],
        "outputs": [],
    }
    bad_user = good | {"task_id": 1, "user_id": "nobody_9"}
    bad_action = good | {"task_id": 2, "actions": [{"name": "", "kwargs": {}}]}
    path = tmp_path / "tasks.json"
    path.write_text("[\n" + ",\n".join(json.dumps(t) for t in (good, bad_user, bad_action)) + "\n]")
    result = import_tau_bench(path)
    assert [c.provenance.source.conversation_id for c in result.cases] == ["0"]
    assert [(q.line, q.findings[0].field) for q in result.quarantined] == [
        (3, "user_id"),
        (4, "actions[0].name"),
    ]
    assert result.cases[0].environment.state["flights"]  # New York / Seattle flights


def test_a_missing_database_says_where_to_point(tmp_path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text("[]")
    with pytest.raises(UserError, match="--environment"):
        import_tau_bench(path)


def test_the_cli_imports_with_another_database_folder(tmp_path) -> None:
    assert "tau-bench" in IMPORTERS
    db = _db(tmp_path / "elsewhere")
    task = {
        "task_id": 5,
        "user_id": "ann_lee_1",
        "instruction": "How much is on my gift card?",
        "actions": [],
        "outputs": ["100"],
    }
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]))
    out = tmp_path / "cases.jsonl"
    result = CliRunner().invoke(
        app, ["import", "--from", "tau-bench", str(path), "--environment", str(db), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    [line] = out.read_text().splitlines()
    assert json.loads(line)["domain"] == "airline"
