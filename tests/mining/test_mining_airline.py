"""`casemill mine --domain airline`: airline cases whose state is rebuilt from the log's reads,
the others kept on recorded tools saying why; unknown `--domain` names refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill.cli import app
from casemill.errors import UserError
from casemill.mining import mine
from casemill.mining.pipeline import MineOptions
from casemill.mining.stage import mining_domain
from casemill.validation.semantic import semantic_findings

NOT_AIRLINE = "not an airline case: "


@pytest.fixture(scope="module")
def mined(shared_data: Path):
    logs = shared_data / "tau-bench-airline-logs" / "support_logs.jsonl"
    return mine([logs], "openai-jsonl", options=MineOptions(pack="airline"))


@pytest.mark.shared_data
def test_most_mined_cases_land_in_airline_and_validate(mined) -> None:
    airline = [c for c in mined.cases if c.domain == "airline"]
    valid = [c for c in airline if not [f for f in semantic_findings(c) if f.severity == "error"]]
    print(f"airline logs: {len(valid)} of {len(mined.cases)} mined cases in airline and valid")
    assert len(valid) == len(airline)
    assert len(airline) > len(mined.cases) / 2
    assert {c.domain for c in mined.cases} == {"airline", "generic:airline"}
    for case in airline:
        assert set(case.environment.state) == {"users", "reservations", "flights"}
        assert "environment rebuilt from the log's reads" in case.provenance.notes


@pytest.mark.shared_data
def test_cases_whose_state_is_not_in_the_log_stay_on_recorded_tools_saying_why(mined) -> None:
    generic = [c for c in mined.cases if c.domain != "airline"]
    assert generic and all(NOT_AIRLINE in c.provenance.notes for c in generic)
    # the agent changes a reservation's flights without ever reading its user (who pays)
    (case, *_) = [c for c in generic if c.provenance.source.conversation_id == "air-013-0"]
    assert "user 'bob_price_4821' is not in the environment" in case.provenance.notes
    assert "records" in case.environment.state  # the generic shape: recorded reads


@pytest.mark.shared_data
def test_a_decision_point_faces_the_state_left_by_the_writes_before_it(mined) -> None:
    later = [
        c
        for c in mined.cases
        if c.domain == "airline"
        and "decision_point" in c.tags.labels
        and any(
            call.tool.startswith(("update", "book", "cancel"))
            for t in c.conversation
            for call in t.tool_calls
        )
    ]
    assert later
    for case in later:
        assert not [f for f in semantic_findings(case) if f.severity == "error"]


def test_generic_names_are_labels_and_unknown_names_list_the_packs() -> None:
    assert mining_domain("airline", None) == ("airline", None)
    assert mining_domain("generic:ops", None) == (None, "ops")
    with pytest.raises(UserError, match="disagree"):
        mining_domain("generic:ops", "billing")
    with pytest.raises(UserError, match=r"no such domain pack; known packs: .*airline") as err:
        mining_domain("hotel", None)
    assert "Packs logs can be mined into: airline" in str(err.value)
    with pytest.raises(UserError, match="cannot be mined into the tau2-retail pack"):
        mining_domain("tau2-retail", None)
    with pytest.raises(UserError, match="support cases need no --domain"):
        mining_domain("support", None)


def test_mine_command_refuses_an_unknown_domain(tmp_path: Path) -> None:
    logs = tmp_path / "logs.jsonl"
    logs.write_text("", encoding="utf-8")
    run = CliRunner().invoke(
        app,
        [
            "mine",
            str(logs),
            "-f",
            "openai-jsonl",
            "-o",
            str(tmp_path / "out.jsonl"),
            "--domain",
            "hotel",
        ],
    )
    assert run.exit_code != 0
    said = run.output + str(run.exception or "")
    assert "--domain hotel: no such domain pack" in said and "airline" in said
    assert not (tmp_path / "out.jsonl").exists()
