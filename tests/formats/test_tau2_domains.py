"""tau2 tasks of several domains in one file: retail ones imported, the others quarantined with
the domain named, and the summary saying per domain what became of the tasks (no shared data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill.cli import app
from casemill.formats import ImportResult, import_tau2

DB = {
    "users": {
        "ana_diaz_1001": {
            "user_id": "ana_diaz_1001",
            "name": {"first_name": "Ana", "last_name": "Diaz"},
            "address": {"zip": "10001"},
            "email": "ana@example.com",
            "payment_methods": {"paypal_1": {"source": "paypal", "id": "paypal_1"}},
            "orders": ["#W1000001"],
        }
    },
    "orders": {
        "#W1000001": {
            "order_id": "#W1000001",
            "user_id": "ana_diaz_1001",
            "status": "pending",
            "items": [{"name": "Mug", "product_id": "P1", "item_id": "111", "price": 9.5}],
        }
    },
    "products": {"P1": {"product_id": "P1", "name": "Mug", "variants": {"111": {}}}},
}
CANCEL = {
    "name": "cancel_pending_order",
    "arguments": {"order_id": "#W1000001", "reason": "no longer needed"},
}


def _task(
    task_id: str, domain: str | int | None, actions: list, text: str, who: str = "Ana Diaz"
) -> dict:
    instructions: dict = {"reason_for_call": text, "known_info": f"You are {who}, zip 10001."}
    if domain is not None:
        instructions["domain"] = domain
    return {
        "id": task_id,
        "user_scenario": {"instructions": instructions},
        "initial_state": {"initialization_actions": [{"name": "set_line"}]}
        if domain == "telecom"
        else None,
        "evaluation_criteria": {"actions": actions},
    }


TASKS = [
    _task("r1", "retail", [CANCEL], "Cancel order #W1000001."),
    _task("r2", None, [CANCEL], "Cancel my order, I no longer need it."),
    _task(
        "a1",
        "airline",
        [{"name": "cancel_reservation", "arguments": {"reservation_id": "X"}}],
        "Cancel my flight.",
    ),
    _task("r3", "Retail", [], "Where is my order?", who="Bo Lind"),
    _task("t1", "telecom", [{"name": "toggle_roaming", "arguments": {}}], "My data is slow."),
    _task("a2", "airline", [], "Book a flight."),
    _task("x1", 7, [], "Something."),
]


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    (tmp_path / "db.json").write_text(json.dumps(DB), encoding="utf-8")
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(TASKS, indent=1), encoding="utf-8")
    return path


@pytest.fixture
def result(mixed: Path) -> ImportResult:
    return import_tau2(mixed)


def _reasons(result: ImportResult) -> dict[str, tuple[str, str, str]]:
    return {
        q.record["id"]: (q.findings[0].rule, q.findings[0].field, q.findings[0].message)
        for q in result.quarantined
    }


def test_only_retail_tasks_become_tau2_retail_cases(result: ImportResult) -> None:
    assert result.read == 7
    assert [c.provenance.source.conversation_id for c in result.cases] == ["r1", "r2"]
    assert result.domains == {"tau2-retail": 2}


def test_other_domains_are_quarantined_naming_the_domain_and_the_packs(
    result: ImportResult,
) -> None:
    reasons = _reasons(result)
    assert sorted(reasons) == ["a1", "a2", "r3", "t1", "x1"]
    rule, field, message = reasons["a1"]
    assert (rule, field) == ("tau2-domain-not-imported", "user_scenario.instructions.domain")
    assert message.startswith("a tau2 airline task: the airline pack exists, but this importer")
    assert "tau2 domains with a Casemill pack: retail (tau2-retail), airline (airline)" in message
    rule, field, message = reasons["t1"]
    assert (rule, field) == ("tau2-domain-without-pack", "user_scenario.instructions.domain")
    assert message.startswith("a tau2 telecom task: Casemill has no telecom domain pack")
    assert "retail (tau2-retail), airline (airline)" in message
    assert reasons["r3"][0] == "format" and "cannot tell which user" in reasons["r3"][2]
    assert reasons["x1"][:2] == ("format", "user_scenario.instructions.domain")
    assert "expected a tau2 domain name" in reasons["x1"][2]


def test_summary_counts_each_domain_where_its_tasks_went(result: ImportResult) -> None:
    assert result.source_domains == {
        "(unknown)": {"pack": None, "imported": 0, "quarantined": 1, "reasons": {"format": 1}},
        "airline": {
            "pack": "airline",
            "imported": 0,
            "quarantined": 2,
            "reasons": {"tau2-domain-not-imported": 2},
        },
        "retail": {
            "pack": "tau2-retail",
            "imported": 2,
            "quarantined": 1,
            "reasons": {"format": 1},
        },
        "telecom": {
            "pack": None,
            "imported": 0,
            "quarantined": 1,
            "reasons": {"tau2-domain-without-pack": 1},
        },
    }
    unknown, airline, retail, telecom, general = result.notes
    assert unknown == (
        "tau2 records of no known domain (unreadable, or not named): 1 quarantined (format 1)"
    )
    assert airline.startswith(
        "tau2 airline: 0 task(s) imported, 2 quarantined (tau2-domain-not-imported 2): "
        "the airline pack exists"
    )
    assert retail == "tau2 retail: 2 task(s) imported into tau2-retail, 1 quarantined (format 1)"
    assert telecom.startswith(
        "tau2 telecom: 0 task(s) imported, 1 quarantined (tau2-domain-without-pack 1): "
        "Casemill has no telecom domain pack"
    )
    assert general.startswith("tau2 retail tasks imported into the tau2-retail domain")
    assert result.summary()["source_domains"] == result.source_domains


def test_no_retail_task_no_claim_of_retail(tmp_path: Path) -> None:
    (tmp_path / "db.json").write_text(json.dumps(DB), encoding="utf-8")
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([TASKS[2], TASKS[4]]), encoding="utf-8")
    result = import_tau2(path)
    assert result.cases == ()
    assert not any("imported into" in note for note in result.notes)
    assert [n.split(":")[0] for n in result.notes] == ["tau2 airline", "tau2 telecom"]


def test_import_command_prints_each_domain(mixed: Path, tmp_path: Path) -> None:
    out = tmp_path / "cases.jsonl"
    run = CliRunner().invoke(app, ["import", "--from", "tau2", str(mixed), "-o", str(out)])
    assert run.exit_code == 1, run.output
    assert "imported     2" in run.output and "tau2-retail 2" in run.output
    assert "note: tau2 retail: 2 task(s) imported into tau2-retail, 1 quarantined" in run.output
    assert "note: tau2 telecom: 0 task(s) imported, 1 quarantined" in run.output
    assert "note: tau2 airline: 0 task(s) imported, 2 quarantined" in run.output
    quarantined = (tmp_path / "cases.quarantine.jsonl").read_text(encoding="utf-8")
    assert quarantined.count('"rule":"tau2-domain-not-imported"') == 2
