"""`casemill eval --temperature`: the sampling temperature of an `openai:MODEL` agent reaches
the requests (the local OpenAI-compatible server records what it received), and the run's
summary, its reports and `runs show` record it, so runs at two temperatures are told apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill.cli import app
from tests.evaluation.scoring.casebuild import clarify_case, refund_case
from tests.support.openai_server import OpenAIServer

runner = CliRunner()


@pytest.fixture
def cases_file(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(c.model_dump_json() + "\n" for c in (refund_case(), clarify_case())))
    return path


def _eval_openai(tmp_path: Path, cases: Path, monkeypatch, *extra: str, model: str = "m"):
    with OpenAIServer(lambda body: {"content": "Which order do you mean?"}) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        run = tmp_path / "run"
        argv = ["eval", "--agent", f"openai:{model}", "--cases", str(cases), "-o", str(run)]
        argv += extra
        result = runner.invoke(app, argv)
        received = [body["temperature"] for body in server.requests]
    return result, received, run


def test_temperature_reaches_every_request_and_the_run_records_it(
    tmp_path, cases_file, monkeypatch
):
    result, received, run = _eval_openai(
        tmp_path, cases_file, monkeypatch, "--temperature", "0.7", "--trials", "2"
    )
    assert result.exit_code == 0, result.output
    assert received == [0.7] * 4  # 2 cases x 2 trials, one request each
    summary = json.loads((run / "summary.json").read_text())
    assert summary["agent_settings"] == {"model": "m", "temperature": 0.7}
    assert "agent settings: model m, temperature 0.7" in " ".join(result.output.split())
    assert "agent settings: model m, temperature 0.7" in (run / "summary.md").read_text()
    assert "Agent settings: model m, temperature 0.7." in (run / "report.html").read_text()
    shown = runner.invoke(app, ["runs", "show", str(run)])
    assert "agent settings: model m, temperature 0.7" in " ".join(shown.output.split())
    listed = runner.invoke(app, ["runs", "list", "--root", str(tmp_path), "--json"])
    [row] = json.loads(listed.stdout)
    assert row["agent_settings"] == {"model": "m", "temperature": 0.7}


def test_the_default_temperature_is_0_and_is_recorded(tmp_path, cases_file, monkeypatch):
    result, received, run = _eval_openai(tmp_path, cases_file, monkeypatch)
    assert result.exit_code == 0, result.output
    assert received == [0.0, 0.0]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["agent_settings"] == {"model": "m", "temperature": 0.0}


def test_trials_at_another_temperature_are_not_resumed_from_the_first(
    tmp_path, cases_file, monkeypatch
):
    first, _, run = _eval_openai(tmp_path, cases_file, monkeypatch)
    again, received, _ = _eval_openai(tmp_path, cases_file, monkeypatch, "--temperature", "1")
    assert first.exit_code == 0 and again.exit_code == 0, again.output
    assert received == [1.0, 1.0]  # run afresh, not taken from the run at temperature 0
    assert json.loads((run / "summary.json").read_text())["agent_settings"]["temperature"] == 1.0


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--agent", "reference", "--temperature", "0.5"], "is for openai:MODEL agents only"),
        (["--agent", "openai:m", "--temperature", "3"], "less than or equal to 2"),
    ],
)
def test_a_temperature_that_cannot_apply_is_bad_input(tmp_path, cases_file, argv, said):
    result = runner.invoke(app, ["eval", *argv, "--cases", str(cases_file), "-o", str(tmp_path)])
    assert result.exit_code == 2
    assert said in " ".join(result.output.split())


def test_runs_compare_warns_when_the_two_runs_ran_at_other_temperatures(
    tmp_path, cases_file, monkeypatch
):
    cold, _, _ = _eval_openai(tmp_path / "cold", cases_file, monkeypatch)
    warm, _, _ = _eval_openai(tmp_path / "warm", cases_file, monkeypatch, "--temperature", "0.7")
    assert cold.exit_code == 0 and warm.exit_code == 0
    compared = runner.invoke(
        app, ["runs", "compare", str(tmp_path / "cold" / "run"), str(tmp_path / "warm" / "run")]
    )
    said = " ".join(compared.output.split())
    assert compared.exit_code == 0, compared.output
    assert (
        "warning: the agents' settings differ (A: model m, temperature 0.0; "
        "B: model m, temperature 0.7)" in said
    )


def test_a_baseline_run_at_another_temperature_is_noted_in_the_run_and_its_reports(
    tmp_path, cases_file, monkeypatch
):
    cold, _, _ = _eval_openai(tmp_path / "cold", cases_file, monkeypatch)
    base = str(tmp_path / "cold" / "run")
    warm, _, run = _eval_openai(
        tmp_path / "warm", cases_file, monkeypatch, "--temperature", "0.7", "--baseline", base
    )
    assert cold.exit_code == 0 and warm.exit_code == 0, warm.output
    note = (
        "the baseline ran its agent with other settings (model m, temperature 0.0; "
        "this run: model m, temperature 0.7)"
    )
    assert note in " ".join(warm.output.split())
    assert note in json.loads((run / "summary.json").read_text())["notes"]
    assert note in (run / "report.html").read_text()


def test_runs_compare_json_has_both_runs_agent_settings_and_whether_they_differ(
    tmp_path, cases_file, monkeypatch
):
    _eval_openai(tmp_path / "cold", cases_file, monkeypatch)
    _eval_openai(tmp_path / "warm", cases_file, monkeypatch, "--temperature", "0.7")
    _eval_openai(tmp_path / "cold2", cases_file, monkeypatch)
    cold, warm, cold2 = (str(tmp_path / n / "run") for n in ("cold", "warm", "cold2"))
    compared = runner.invoke(app, ["runs", "compare", cold, warm, "--json"])
    assert compared.exit_code == 0, compared.output
    said = json.loads(compared.output)
    assert said["baseline_agent_settings"] == {"model": "m", "temperature": 0.0}
    assert said["current_agent_settings"] == {"model": "m", "temperature": 0.7}
    assert said["agent_settings_differ"] is True
    assert (said["baseline_agent"], said["current_agent"]) == ("openai:m", "openai:m")
    assert said["paired_cases"] == 2  # the comparison itself is still there
    same = json.loads(runner.invoke(app, ["runs", "compare", cold, cold2, "--json"]).output)
    assert same["agent_settings_differ"] is False
    assert same["current_agent_settings"] == {"model": "m", "temperature": 0.0}


def test_two_models_at_one_temperature_are_compared_without_a_settings_warning(
    tmp_path, cases_file, monkeypatch
):
    _eval_openai(tmp_path / "a", cases_file, monkeypatch, "--temperature", "0.7")
    _eval_openai(tmp_path / "b", cases_file, monkeypatch, "--temperature", "0.7", model="n")
    a, b = (str(tmp_path / name / "run") for name in ("a", "b"))
    compared = runner.invoke(app, ["runs", "compare", a, b])
    assert compared.exit_code == 0, compared.output
    assert "settings differ" not in compared.output
    said = json.loads(runner.invoke(app, ["runs", "compare", a, b, "--json"]).output)
    assert said["agent_settings_differ"] is False
    assert said["current_agent_settings"] == {"model": "n", "temperature": 0.7}
    again, _, run = _eval_openai(
        tmp_path / "c", cases_file, monkeypatch, "--temperature", "0.7", "--baseline", a, model="n"
    )
    assert again.exit_code == 0, again.output
    assert "other settings" not in " ".join(json.loads((run / "summary.json").read_text())["notes"])
