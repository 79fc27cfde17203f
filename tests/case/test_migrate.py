"""The migration hook: older shapes are migrated before validation, newer ones refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

import casemill.case.model as model
from casemill.case.migrate import MIGRATIONS, migrate
from casemill.case.model import Case

V1 = {
    "schema_version": 1,
    "domain": "support",
    "conversation": [{"role": "customer", "content": "Where is W1001?"}],
    "expected": {"outcome": "clarify", "steps": 2},  # version 1 of this test called it "steps"
}


@pytest.fixture
def version_two(monkeypatch):
    """Pretend the current schema is version 2, with a registered 1 -> 2 migration that renames
    `expected.steps` to `expected.optimal_steps`."""

    def rename_steps(data: dict) -> dict:
        expected = dict(data["expected"])
        expected["optimal_steps"] = expected.pop("steps")
        return {**data, "expected": expected}

    monkeypatch.setattr(model, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(MIGRATIONS, 1, rename_steps)


def test_registered_migration_runs_on_load(version_two):
    case = Case.model_validate(V1)
    assert case.schema_version == 2
    assert case.expected.optimal_steps == 2
    assert V1["expected"] == {"outcome": "clarify", "steps": 2}  # input not mutated


def test_migrated_case_has_the_same_id_as_the_current_shape(version_two):
    current = {**V1, "schema_version": 2, "expected": {"outcome": "clarify", "optimal_steps": 2}}
    assert Case.model_validate(V1).id == Case.model_validate(current).id


def test_current_version_is_left_alone():
    data = {"schema_version": 1, "domain": "x"}
    assert migrate(data) is data


def test_future_and_invalid_versions_are_refused():
    with pytest.raises(ValidationError, match="newer than this Casemill understands"):
        Case.model_validate({**V1, "schema_version": 3})
    with pytest.raises(ValueError, match="positive integer"):
        migrate({"schema_version": "one"})
