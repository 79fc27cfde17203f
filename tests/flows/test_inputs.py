"""Bad input to the flows fails fast, before any work, with a message that says what to fix."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from casemill.errors import UserError
from casemill.flows.evaluate import (
    check_agent,
    check_run_inputs,
    dated_run_dir,
    load_cases_for_eval,
)
from casemill.flows.mine import expand_paths, mine_logs
from casemill.generators.seeds import load_seeds


def test_missing_log_path_names_it(tmp_path: Path):
    with pytest.raises(UserError, match=r"no log file at '.*nowhere\.jsonl'"):
        expand_paths([str(tmp_path / "nowhere.jsonl")])


def test_glob_expands_sorted_and_deduplicated(tmp_path: Path):
    for name in ("b.jsonl", "a.jsonl"):
        (tmp_path / name).write_text("{}\n")
    found = expand_paths([str(tmp_path / "*.jsonl"), str(tmp_path / "a.jsonl")])
    assert [p.name for p in found] == ["a.jsonl", "b.jsonl"]


def test_glob_matching_nothing_is_an_error(tmp_path: Path):
    with pytest.raises(UserError, match="no log file"):
        expand_paths([str(tmp_path / "*.jsonl")])


def test_a_relative_glob_matching_nothing_names_the_folder_it_looked_in(tmp_path, monkeypatch):
    """On a worker, `logs/**/*.jsonl` is looked for in its CASEMILL_PROJECT_DIR: the error says
    which folder that was."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as raised:
        expand_paths(["logs/**/*.jsonl"])
    assert str(raised.value) == (
        f"no log file at 'logs/**/*.jsonl' (in {tmp_path}): give a path or a glob that matches "
        "files"
    )


def test_mine_outputs_get_the_checks_of_casemill_mine(tmp_path: Path):
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "a.jsonl"
    log.write_text("{}\n")
    quarantined = logs / "b.quarantine.jsonl"
    quarantined.write_text("{}\n")
    for out, message in (
        (log, f"out {log} is also a log"),  # it would be replaced by its candidates
        (logs / "b.jsonl", f"quarantine {quarantined} is also a log"),
        (tmp_path, f"out {tmp_path} is a folder"),
    ):
        with pytest.raises(UserError, match=f"^{message}"):
            mine_logs.fn([str(logs / "*.jsonl")], out=str(out), corpus_dir=None)  # before mining
    assert log.read_text() == quarantined.read_text() == "{}\n"
    assert sorted(p.name for p in logs.iterdir()) == ["a.jsonl", "b.quarantine.jsonl"]


def test_empty_seed_set_is_refused(tmp_path: Path):
    empty = tmp_path / "seeds"
    empty.mkdir()
    (empty / "none.jsonl").write_text("")
    with pytest.raises(UserError, match="no valid seed cases"):
        load_seeds(str(empty))


def test_missing_seed_folder_is_refused(tmp_path: Path):
    with pytest.raises(UserError, match="no such seed file or folder"):
        load_seeds(str(tmp_path / "missing"))


def test_unknown_agent_fails_before_running():
    with pytest.raises(UserError):
        check_agent("reference:no_such_bug")


def test_the_temperature_parameter_is_checked_and_its_agent_settings_returned(monkeypatch):
    monkeypatch.setenv("CASEMILL_LLM_BASE_URL", "http://127.0.0.1:18299/v1")
    assert check_agent("openai:m", 0.9) == {"model": "m", "temperature": 0.9}
    assert check_agent("openai:m") == {"model": "m", "temperature": 0.0}
    with pytest.raises(UserError, match=r"temperature 5: give a number from 0 to 2"):
        check_agent("openai:m", 5)
    with pytest.raises(UserError, match=r"for openai:MODEL agents only"):
        check_agent("reference", 0.5)


def test_cases_with_errors_are_refused_with_file_and_line(tmp_path: Path):
    bad = tmp_path / "cases.jsonl"
    bad.write_text('{"domain": "support"\n')
    with pytest.raises(UserError, match=r"cases\.jsonl:1"):
        load_cases_for_eval(str(bad))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"trials": 0}, "parameter 'trials' is 0; it must be at least 1"),
        ({"batch_size": 0}, "parameter 'batch_size' is 0"),
        ({"timeout_s": 0.0}, "parameter 'timeout_s' is 0.0"),
        ({"gate": "GATE"}, "gate.toml:2: rule 1, field 'metric': unknown metric 'tool_recal'"),
        ({"baseline": "NORUN"}, "not an evaluated run directory"),
    ],
)
def test_evaluate_inputs_are_checked_before_the_agent_runs(tmp_path: Path, kwargs, message):
    gate = tmp_path / "gate.toml"
    gate.write_text('[[rule]]\nmetric = "tool_recal"\nmin = 1\n')
    replace = {"GATE": str(gate), "NORUN": str(tmp_path / "nothing")}
    kwargs = {k: replace.get(v, v) if isinstance(v, str) else v for k, v in kwargs.items()}
    with pytest.raises(UserError, match=message):
        check_run_inputs([], **kwargs)


def test_unknown_log_format_fails_before_mining(tmp_path: Path):
    log = tmp_path / "a.jsonl"
    log.write_text("{}\n")
    out = tmp_path / "out.jsonl"
    with pytest.raises(UserError, match="unknown log format 'bogus'; known: openai-jsonl"):
        mine_logs.fn([str(log)], fmt="bogus", out=str(out), corpus_dir=None)
    assert not out.exists()


def test_a_corpus_that_is_not_there_fails_mining_and_expanding_before_any_work(tmp_path: Path):
    """Read as an empty corpus, a mistyped or unmounted corpus_dir let every nightly run queue
    the corpus's own cases for review again; `casemill mine` and `expand` refuse it."""
    from casemill.flows.expand import expand_corpus

    log = tmp_path / "a.jsonl"
    log.write_text("{}\n")
    out = tmp_path / "out.jsonl"
    typo = tmp_path / "corpsu"
    with pytest.raises(UserError, match=f"corpus_dir {re.escape(str(typo))}: no such corpus"):
        mine_logs.fn([str(log)], out=str(out), corpus_dir=str(typo))
    seeds = Path(__file__).resolve().parents[2] / "seeds"
    with pytest.raises(UserError, match=f"corpus_dir {re.escape(str(typo))}: no such corpus"):
        expand_corpus.fn(seeds=str(seeds), out=str(out), corpus_dir=str(typo))
    assert not out.exists() and not typo.exists()


def test_expand_outputs_get_the_checks_of_casemill_expand(tmp_path: Path):
    from casemill.flows.expand import expand_corpus

    seeds = tmp_path / "seeds"
    seeds.mkdir()
    seed_file = seeds / "support.jsonl"
    seed_file.write_text("{}\n")
    for out, message in (
        (seed_file, f"out {seed_file} is also an input"),  # replaced by its candidates
        (tmp_path, f"out {tmp_path} is a folder"),
    ):
        with pytest.raises(UserError, match=f"^{message}"):
            expand_corpus.fn(seeds=str(seeds), out=str(out), corpus_dir=None)  # before expanding
    assert seed_file.read_text() == "{}\n"
    assert sorted(p.name for p in seeds.iterdir()) == ["support.jsonl"]


def test_run_dir_gets_the_runs_date_and_time_in_utc():
    """Outside a flow run, the time now (a scheduled run's own start time is checked in
    test_schedule); a run_dir without braces is left as it is."""
    before = datetime.now(UTC).strftime("%Y-%m-%d")
    day = dated_run_dir("runs/nightly/{date}").removeprefix("runs/nightly/")
    assert day in {before, datetime.now(UTC).strftime("%Y-%m-%d")}
    assert re.fullmatch(r"runs/\d{8}T\d{6}Z-a", dated_run_dir("runs/{datetime}-a"))
    assert dated_run_dir("runs/latest") == "runs/latest"


@pytest.mark.parametrize("run_dir", ["runs/{agent}", "runs/{", "runs/{0}"])
def test_run_dir_with_another_placeholder_is_refused(run_dir):
    with pytest.raises(UserError, match=r"only \{date\} and \{datetime\} can be filled in"):
        dated_run_dir(run_dir)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dedup_threshold": 0}, r"^dedup_threshold 0: expected a number above 0 and at most 1"),
        ({"quotas": {"nois": 3}}, r"^quotas nois=3: unknown kind; known: noise, "),
        ({"quotas": {"noise:refnd": 3}}, r"^quotas noise:refnd=3: no seed has the intent 'refnd'"),
        ({"quotas": {"noise": -1}}, r"^quotas noise=-1: expected a whole number, at least 0"),
        ({"per_seed": 0}, r"^per_seed \(0\) and batch_size \(25\) must be at least 1"),
    ],
)
def test_expand_settings_get_the_checks_of_casemill_expand(tmp_path: Path, kwargs, message):
    from casemill.flows.expand import expand_corpus

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "out.jsonl"
    with pytest.raises(UserError, match=message):
        expand_corpus.fn(seeds=str(root / "seeds"), out=str(out), corpus_dir=None, **kwargs)
    assert not out.exists()


def test_evaluate_refuses_a_pass_k_gate_rule_with_too_few_trials(tmp_path: Path):
    gate = tmp_path / "gate.toml"
    gate.write_text('[[rule]]\nmetric = "pass^2"\nmin = 0.9\n')
    with pytest.raises(UserError) as info:
        check_run_inputs([], trials=1, gate=str(gate))
    assert str(info.value) == (
        f"{gate}:2: rule 1, field 'metric': pass^2 needs at least 2 trials per case; the run has "
        "1 trial per case: use trials = 2 or more"
    )
    check_run_inputs([], trials=2, gate=str(gate))


def test_evaluate_refuses_a_judge_gate_rule_it_cannot_measure(tmp_path: Path):
    gate = tmp_path / "gate.toml"
    gate.write_text('[[rule]]\nmetric = "judge_policy_safe"\nmin = 0.9\n')
    with pytest.raises(
        UserError, match=r"gate\.toml:2: rule 1, field 'metric': judge_policy_safe "
    ):
        check_run_inputs([], gate=str(gate))


def test_the_gate_artifact_says_what_failed_not_a_bare_value():
    from casemill.evaluation.scoring.model import GateFailure, GateVerdict
    from casemill.flows.evaluate import gate_markdown

    failure = GateFailure(
        rule="steady refunds",
        slice="intent in [refund]",
        metric="pass^3",
        value=None,
        threshold=0.8,
        case_ids=("c_1",),
        message="1 of 2 cases in the slice have fewer than 3 trials: pass^3 cannot be measured",
    )
    text = gate_markdown(GateVerdict(passed=False, failures=(failure,)), "reference")
    assert text.splitlines() == [
        "# Gate: FAILED (reference)",
        "",
        "- steady refunds (slice: intent in [refund]): 1 of 2 cases in the slice have fewer than "
        "3 trials: pass^3 cannot be measured; 1 case: c_1",
    ]


def test_the_gate_artifact_names_ten_cases_and_says_there_are_more():
    from casemill.evaluation.scoring.model import GateFailure, GateVerdict
    from casemill.flows.evaluate import gate_markdown

    ids = tuple(f"c_{n}" for n in range(12))
    failure = GateFailure(
        rule="refunds", slice="all", metric="task_success", value=0.5, threshold=0.9,
        case_ids=ids, message="task_success 0.500 < 0.9",
    )  # fmt: skip
    (line,) = gate_markdown(GateVerdict(passed=False, failures=(failure,)), "ref").splitlines()[2:]
    assert line.endswith("; 12 cases: " + ", ".join(ids[:10]) + " ...")


def test_the_summary_artifact_lists_each_metric_once_headline_first_with_its_interval():
    from casemill.evaluation.scoring.aggregate import summarize
    from casemill.evaluation.scoring.scorer import score
    from casemill.flows.evaluate import summary_rows
    from tests.evaluation.scoring.casebuild import (
        GOOD_REFUND,
        GOOD_REFUND_REPLY,
        refund_case,
        trajectory,
    )

    case = refund_case()
    summary = summarize([case], [score(case, trajectory(case, GOOD_REFUND, GOOD_REFUND_REPLY))])
    rows = summary_rows(summary)
    names = [r["metric"] for r in rows]
    assert names[:3] == ["task_success", "tool_recall", "tool_precision"]
    assert len(names) == len(set(names)) and "task_success_rate" not in names
    assert rows[0] == {
        "metric": "task_success",
        "mean": 1.0,
        "ci_low": 0.2065,
        "ci_high": 1.0,
        "interval": "wilson",
        "cases": 1,
    }
