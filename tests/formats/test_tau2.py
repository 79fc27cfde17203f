from __future__ import annotations

import json
from pathlib import Path

import pytest

from casemill.case.model import Case, derive
from casemill.domains.tau2_retail.specs import (
    TOOLS_FILE,
    dump_tool_specs,
    infer_tool_specs,
    task_actions,
)
from casemill.errors import UserError
from casemill.formats import ImportResult, import_tau2
from casemill.validation.semantic import semantic_findings

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def tau2(shared_data: Path) -> Path:
    return shared_data / "tau2-retail"


@pytest.fixture(scope="module")
def raw_tasks(tau2: Path) -> dict[str, dict]:
    return {t["id"]: t for t in json.loads((tau2 / "tasks.json").read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def db(tau2: Path) -> dict:
    return json.loads((tau2 / "db.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def imported(tau2: Path) -> ImportResult:
    return import_tau2(tau2 / "tasks.json", tau2 / "db.json")


@pytest.fixture(scope="module")
def by_task(imported: ImportResult) -> dict[str, Case]:
    return {c.provenance.source.conversation_id: c for c in imported.cases}


def test_all_114_tasks_import_and_validate_with_zero_findings(imported: ImportResult) -> None:
    assert imported.read == 114
    assert len(imported.cases) == 114
    assert imported.quarantined == ()
    assert imported.domains == {"tau2-retail": 114}
    assert [f for c in imported.cases for f in semantic_findings(c)] == []
    assert len({c.id for c in imported.cases}) == 114
    per_domain, note = imported.notes
    assert per_domain == "tau2 retail: 114 task(s) imported into tau2-retail, 0 quarantined"
    assert imported.source_domains == {
        "retail": {"pack": "tau2-retail", "imported": 114, "quarantined": 0, "reasons": {}}
    }
    assert note.endswith(
        "tools simulated for running agents, but no replay check (checked by schema and references)"
    )


@pytest.mark.parametrize("task_id", ["0", "46", "50"])
def test_expected_calls_and_phrases_match_the_raw_tasks_by_value(
    task_id: str, raw_tasks: dict, by_task: dict
) -> None:
    raw, case = raw_tasks[task_id], by_task[task_id]
    actions = raw["evaluation_criteria"]["actions"]
    assert [(c.tool, c.params) for c in case.expected.tool_calls] == [
        (a["name"], a["arguments"]) for a in actions
    ]
    assert list(case.expected.reply_contains) == raw["evaluation_criteria"]["communicate_info"]
    instructions = raw["user_scenario"]["instructions"]
    for key in ("reason_for_call", "known_info", "unknown_info"):
        assert instructions[key].strip() in case.user_scenario
    assert case.expected.optimal_steps == len(actions) + 1
    assert case.conversation == ()


def test_spot_checked_values(by_task: dict) -> None:
    exchange = by_task["0"].expected.tool_calls[4]
    assert exchange.tool == "exchange_delivered_order_items"
    assert exchange.params["item_ids"] == ["1151293680", "4983901480"]
    assert exchange.params["new_item_ids"] == ["7706410293", "7747408585"]
    assert exchange.match["order_id"].kind == "id"
    assert "item_ids" not in exchange.match  # paired with new_item_ids: exact
    assert by_task["0"].expected.outcome == "resolve"
    assert by_task["46"].expected.reply_contains == ("1126.04", "1497.65")
    returned = by_task["46"].expected.tool_calls[5]
    assert returned.tool == "return_delivered_order_items"
    assert returned.match["item_ids"].kind == "set" and returned.match["item_ids"].ids
    assert by_task["50"].expected.outcome == "escalate"
    assert by_task["50"].expected.tool_calls[0].match["summary"].kind == "any"


def test_environment_is_the_slice_the_task_touches(by_task: dict, db: dict) -> None:
    state = by_task["0"].environment.state
    (user_id,) = state["users"]
    assert state["users"][user_id] == db["users"][user_id]
    assert set(state["orders"]) == set(db["users"][user_id]["orders"])
    products = {i["product_id"] for o in state["orders"].values() for i in o["items"]}
    assert products <= set(state["products"])
    assert len(state["orders"]) < 10 and len(state["products"]) < len(db["products"])
    for case in by_task.values():
        env = case.environment.state
        assert all(o["user_id"] in env["users"] for o in env["orders"].values())
        assert all(env["orders"][o] == db["orders"][o] for o in env["orders"])


def test_wrong_ids_looked_up_on_purpose_are_declared_absent(by_task: dict) -> None:
    assert by_task["46"].environment.state["absent_ids"] == ["#9502126", "#9502127"]


def test_tasks_without_writes_forbid_every_write(by_task: dict) -> None:
    no_write = {t for t, c in by_task.items() if c.expected.forbidden_calls}
    assert no_write == {"24", "25", "57", "62", "65", "67", "68"}
    assert by_task["24"].expected.outcome == "resolve"  # must say polyester and cotton
    assert by_task["57"].expected.outcome == "refuse"
    assert all(by_task[t].expected.forbidden_calls[0].any_write for t in no_write)


def test_scenario_only_tasks_find_their_user_from_the_scenario(by_task: dict) -> None:
    assert list(by_task["57"].environment.state["users"]) == ["ivan_hernandez_6923"]
    assert list(by_task["24"].environment.state["users"]) == ["sofia_hernandez_5364"]


def test_provenance_and_labels(by_task: dict, tau2: Path) -> None:
    case = by_task["0"]
    assert case.provenance.origin == "imported"
    assert case.provenance.source.file == str(tau2 / "tasks.json")
    assert case.provenance.source.line == 2
    assert case.provenance.source.format == "tau2"
    split = json.loads((tau2 / "split_tasks.json").read_text(encoding="utf-8"))
    assert sum("split:test" in c.tags.labels for c in by_task.values()) == len(split["test"])
    assert "tau2 reward_basis: DB, NL_ASSERTION" in case.provenance.notes


def test_committed_tool_specs_equal_the_inference_from_the_tasks(raw_tasks: dict) -> None:
    inferred = dump_tool_specs(infer_tool_specs(task_actions(raw_tasks.values())))
    assert TOOLS_FILE.read_text(encoding="utf-8") == inferred, "regenerate tools.json"


def test_reference_check_catches_ids_missing_from_the_environment(by_task: dict) -> None:
    case = by_task["0"]
    expected = case.expected.model_dump(mode="json")
    expected["tool_calls"][4]["params"]["new_item_ids"] = ["0000000000", "7747408585"]
    findings = semantic_findings(derive(case, expected=expected))
    assert [(f.rule, f.field) for f in findings] == [
        ("missing-id", "expected.tool_calls[4].params.new_item_ids[0]")
    ]


def test_bad_tasks_are_quarantined_and_good_ones_kept(
    tau2: Path, raw_tasks: dict, tmp_path: Path
) -> None:
    tasks = [raw_tasks["0"], json.loads(json.dumps(raw_tasks["1"])), raw_tasks["2"]]
    tasks[1]["evaluation_criteria"]["actions"][0]["arguments"] = "order_id=#W1"
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks, indent=1), encoding="utf-8")
    result = import_tau2(path, tau2 / "db.json")
    assert [c.provenance.source.conversation_id for c in result.cases] == ["0", "2"]
    (finding,) = result.findings
    assert finding.field == "evaluation_criteria.actions[0].arguments"
    lines = path.read_text(encoding="utf-8").splitlines()
    id_line = next(n for n, line in enumerate(lines, start=1) if line == '  "id": "1",')
    assert finding.file == str(path) and finding.line == id_line - 1  # the task's opening brace


def test_missing_database_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text("[]", encoding="utf-8")
    with pytest.raises(UserError, match="db.json"):
        import_tau2(tmp_path / "tasks.json")
