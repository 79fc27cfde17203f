"""`casemill eval` and `casemill runs list / show / compare`, end to end with the reference
agent and its faulty variants: exit codes 0 (ok), 1 (gate failed), 2 (bad input)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.casebuild import approved
from typer.testing import CliRunner

from casemill.cli import app
from casemill.cli.console import console
from casemill.corpus.store import CorpusStore
from casemill.errors import UserError
from casemill.evaluation.scoring.caseset import digest
from tests.evaluation.scoring.casebuild import cancel_case, clarify_case, refund_case, variant_of

runner = CliRunner()

FORBIDDEN_GATE = """
[[rule]]
name = "never a forbidden call"
metric = "forbidden_violations"
max = 0
"""


@pytest.fixture(scope="module")
def cases_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cases") / "cases.jsonl"
    cases = [refund_case(), cancel_case(), clarify_case()]
    path.write_text("".join(c.model_dump_json() + "\n" for c in cases))
    return path


def _eval(*args: str):
    return runner.invoke(app, ["eval", *args])


@pytest.fixture(scope="module")
def runs(tmp_path_factory, cases_file) -> Path:
    root = tmp_path_factory.mktemp("runs")
    gate = root / "gate.toml"
    gate.write_text(FORBIDDEN_GATE)
    good = _eval(
        "--agent",
        "reference",
        "--cases",
        str(cases_file),
        "-o",
        str(root / "good"),
        "--trials",
        "2",
        "--json",
    )
    assert good.exit_code == 0, good.output
    bad = _eval(
        "--agent",
        "reference:refund_whole_order",
        "--cases",
        str(cases_file),
        "-o",
        str(root / "bad"),
        "--gate",
        str(gate),
        "--baseline",
        str(root / "good"),
    )
    assert bad.exit_code == 1, bad.output
    return root


def test_eval_writes_reports_and_prints_the_summary_json(runs):
    summary = json.loads((runs / "good" / "summary.json").read_text())
    assert summary["agent"] == "reference"
    assert (summary["cases"], summary["trials"], summary["results"]) == (3, 2, 6)
    assert summary["task_success_rate"] == 1.0
    for name in ("results.jsonl", "report.html", "summary.md", "trajectories.jsonl"):
        assert (runs / "good" / name).is_file()


def test_failing_gate_exits_1_and_names_rule_and_cases(runs):
    summary = json.loads((runs / "bad" / "summary.json").read_text())
    failure = summary["gate"]["failures"][0]
    assert failure["rule"] == "never a forbidden call"
    assert failure["case_ids"] == [refund_case().id]
    assert summary["comparison"]["flips"][0] == {
        "case_id": refund_case().id,
        "direction": "pass->fail",
        "baseline_rate": 1.0,
        "current_rate": 0.0,
    }


def test_eval_with_a_baseline_prints_the_comparison_under_the_run(runs, cases_file, tmp_path):
    """The same table as `runs compare` (A the baseline, B this run), then the flips."""
    out = tmp_path / "variant"
    argv = ["--cases", str(cases_file), "-o", str(out), "--baseline", str(runs / "good")]
    result = _eval("--agent", "reference:refund_whole_order", *argv)
    assert result.exit_code == 0, result.output
    said = _flat(result.output)
    assert f"3 paired cases (A: the baseline {runs / 'good'}, B: this run)" in said
    comp = json.loads((out / "summary.json").read_text())["comparison"]
    row = next(d for d in comp["deltas"] if d["metric"] == "task_success")
    assert (row["baseline"], row["current"]) == (1.0, 2 / 3)
    flag = " regression" if row["ci_high"] < 0 else ""  # task success: higher is better
    ci = f"{row['ci_low']:.3f} - {row['ci_high']:.3f}"
    assert f"│ task_success │ 1.000 │ 0.667 │ {row['delta']:.3f} │ {ci} │{flag} │" in said
    assert f"pass->fail {refund_case().id}" in said
    # the run's own table comes first, the comparison after it and before the reports' paths
    assert said.index("task success 0.667 over 3 cases") < said.index("3 paired cases")
    assert said.index("pass->fail") < said.index("reports:")


def test_rerun_is_resumed_not_repeated(runs, cases_file):
    before = (runs / "good" / "trajectories.jsonl").read_text()
    again = _eval(
        "--agent",
        "reference",
        "--cases",
        str(cases_file),
        "-o",
        str(runs / "good"),
        "--trials",
        "2",
    )
    assert again.exit_code == 0, again.output
    assert (runs / "good" / "trajectories.jsonl").read_text() == before
    assert "task success 1.000" in again.output


def test_runs_list_show_compare(runs):
    listed = runner.invoke(app, ["runs", "list", "--root", str(runs), "--json"])
    assert listed.exit_code == 0, listed.output
    rows = {Path(r["run"]).name: r for r in json.loads(listed.output)}
    assert rows["good"]["gate_passed"] is None and rows["bad"]["gate_passed"] is False
    shown = runner.invoke(app, ["runs", "show", str(runs / "bad"), "--json"])
    assert json.loads(shown.output)["agent"] == "reference:refund_whole_order"
    table = runner.invoke(app, ["runs", "show", str(runs / "bad")])
    assert "gate failed" in table.output and "never a forbidden call" in table.output
    said = " ".join(table.output.split())
    assert "over 3 cases x 1 trial (0 errors)" in said
    assert "(1 case)" in said and "(1 cases)" not in said  # a weakest slice of one case
    compared = runner.invoke(
        app, ["runs", "compare", str(runs / "good"), str(runs / "bad"), "--json"]
    )
    comp = json.loads(compared.output)
    assert comp["paired_cases"] == 3
    assert [f["direction"] for f in comp["flips"]] == ["pass->fail"]
    plain = runner.invoke(app, ["runs", "compare", str(runs / "good"), str(runs / "bad")])
    assert "pass->fail" in plain.output


def test_a_baseline_from_other_cases_is_refused_before_the_agent_runs(runs, tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text(variant_of(refund_case(), "W1001: the mug is cracked").model_dump_json())
    argv = ["--agent", "reference", "--cases", str(other), "-o", str(tmp_path / "run")]
    result = _eval(*argv, "--baseline", str(runs / "good"))
    assert result.exit_code == 2, result.output
    assert "shares no case with the cases evaluated now" in " ".join(result.output.split())
    assert not (tmp_path / "run" / "trajectories.jsonl").exists()
    alone = _eval("--agent", "reference", "--cases", str(other), "-o", str(tmp_path / "alone"))
    assert alone.exit_code == 0, alone.output
    compared = runner.invoke(app, ["runs", "compare", str(runs / "good"), str(tmp_path / "alone")])
    assert compared.exit_code == 2 and "share no case" in " ".join(compared.output.split())


def test_a_passing_gate_prints_its_rule_notes(tmp_path, cases_file):
    gate = tmp_path / "gate.toml"
    gate.write_text('[[rule]]\nmetric = "task_success"\nmin = 0.5\nwhere = { intent = "refnd" }\n')
    argv = ["--agent", "reference", "--cases", str(cases_file), "-o", str(tmp_path / "run")]
    result = _eval(*argv, "--gate", str(gate))
    assert result.exit_code == 0, result.output
    assert "no case of the run has intent 'refnd'" in " ".join(result.output.split())


def test_chapter_mode_and_corpus_input(tmp_path):
    corpus = tmp_path / "corpus"
    CorpusStore(corpus).add_version(approved(refund_case(), cancel_case()), note="t")
    result = _eval(
        "--agent",
        "reference",
        "--cases",
        str(corpus),
        "-o",
        str(tmp_path / "run"),
        "--mode",
        "chapter",
        "--json",
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["mode"] == "chapter" and summary["cases"] == 2
    assert summary["metric_versions"]["tool_recall"] == "chapter-1"


def test_bad_records_are_quarantined_and_the_rest_runs(tmp_path, cases_file):
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(cases_file.read_text().splitlines()[0] + "\n{not json\n")
    result = _eval(
        "--agent", "reference", "--cases", str(mixed), "-o", str(tmp_path / "run"), "--json"
    )
    assert result.exit_code == 0, result.output
    quarantined = [
        json.loads(x) for x in (tmp_path / "run" / "quarantine.jsonl").read_text().splitlines()
    ]
    assert quarantined[0]["line"] == 2 and "mixed.jsonl:2" in quarantined[0]["reasons"][0]
    assert json.loads(result.stdout)["cases"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cases", "nowhere.jsonl"], "no such file or folder"),
        (["--gate", "BADGATE"], "bad.toml:2: rule 1, field 'metric'"),
        # brackets in a message are printed as they are, not eaten as console markup
        (["--gate", "EMPTYGATE"], "empty.toml: no rules; add [[rule]] tables"),
        (["--baseline", "NORUN"], "not an evaluated run directory"),
        (["--mode", "book"], "use 'casemill' or 'chapter'"),
        (["--agent", "telepathy:x"], "unknown agent spec"),
        (["--agent", "http://"], "agent URL 'http://' names no host; write it as http://HOST"),
        (
            ["--human-labels", "labels.jsonl"],
            "--human-labels is for the LLM judge only: add --judge",
        ),
        (["--rubric", "rubric.toml"], "--rubric is for the LLM judge only: add --judge"),
    ],
)
def test_bad_input_exits_2_with_a_located_message(tmp_path, cases_file, args, message):
    gate = tmp_path / "bad.toml"
    gate.write_text('[[rule]]\nmetric = "recall"\nmin = 1\n')
    argv = {"--agent": "reference", "--cases": str(cases_file), "-o": str(tmp_path / "run")}
    (tmp_path / "empty.toml").write_text("")
    replace = {
        "BADGATE": str(gate),
        "EMPTYGATE": str(tmp_path / "empty.toml"),
        "NORUN": str(tmp_path / "nothing"),
    }
    argv[args[0]] = replace.get(args[1], args[1])
    flat = [x for pair in argv.items() for x in pair]
    result = _eval(*flat)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())


def test_judge_end_to_end_against_a_local_server(tmp_path, cases_file, monkeypatch):
    from tests.support.openai_server import OpenAIServer

    def grader(body: dict) -> dict:
        names = ("addresses_request", "truthful", "policy_safe", "clear_and_polite")
        verdicts = [{"criterion": n, "pass": True, "reason": "fine"} for n in names]
        return {"content": json.dumps({"verdicts": verdicts})}

    scoring = tmp_path / "scoring.toml"
    scoring.write_text("usd_per_prompt_token = 0.001\n")
    with OpenAIServer(grader) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("CASEMILL_LLM_MODEL", "judge-model")
        argv = ["--agent", "reference", "--cases", str(cases_file), "-o", str(tmp_path / "run")]
        result = _eval(*argv, "--judge", "--scoring", str(scoring), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["metrics"]["judge_truthful"]["mean"] == 1.0
    assert any(n.startswith("judge judge-model, prompt v2") for n in summary["notes"])
    assert (tmp_path / "run" / "judge.jsonl").is_file()


def test_judge_without_endpoint_is_skipped_with_a_message(tmp_path, cases_file, no_llm_endpoint):
    argv = ["--agent", "reference", "--cases", str(cases_file), "-o", str(tmp_path / "run")]
    result = _eval(*argv, "--judge")
    assert result.exit_code == 0, result.output
    assert "judge skipped" in result.output and "CASEMILL_LLM_BASE_URL" in result.output


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_runs_record_their_cases_and_comparisons_warn_when_the_sets_differ(tmp_path, monkeypatch):
    refund, cancel, clarify = refund_case(), cancel_case(), clarify_case()
    other = variant_of(refund, "W1001: the mug is cracked")
    store = CorpusStore(tmp_path / "corpus")
    store.add_version(approved(refund, cancel), note="first")
    store.add_version(approved(clarify), note="second")
    (tmp_path / "subset.jsonl").write_text(
        f"{other.model_dump_json()}\n{refund.model_dump_json()}\n"
    )
    monkeypatch.chdir(tmp_path)
    full = _eval("--agent", "reference", "--cases", "corpus", "-o", "runs/full")
    assert full.exit_code == 0, full.output
    corpus_digest = digest([refund.id, cancel.id, clarify.id])
    line = f"cases: corpus v0002 at corpus (3 cases, digest {corpus_digest[:12]}...)"
    assert line in _flat(full.output)

    sub = _eval(
        "--agent", "reference", "--cases", "subset.jsonl", "-o", "runs/sub", "--baseline", "runs/full"
    )  # fmt: skip
    assert sub.exit_code == 0, sub.output  # a partial overlap is compared, with a warning
    assert (
        "warning: case sets differ: 1 case in common, 1 only in this run, 2 only in the baseline "
        "(this run: subset.jsonl; the baseline: corpus v0002); compared on the 1 in common"
    ) in _flat(sub.output)
    recorded = json.loads((tmp_path / "runs" / "sub" / "summary.json").read_text())["case_set"]
    assert recorded == {
        "sources": ["subset.jsonl"],
        "corpus_version": None,
        "corpus_sha256": None,
        "count": 2,
        "digest": digest([refund.id, other.id]),
    }

    compared = runner.invoke(app, ["runs", "compare", "runs/full", "runs/sub"])
    assert compared.exit_code == 0, compared.output
    text = _flat(compared.output)
    assert line.replace("cases: ", "A: ") in text
    assert "B: subset.jsonl (2 cases, digest " in text
    assert (
        "warning: case sets differ: 1 case in common, 1 only in B, 2 only in A "
        "(B: subset.jsonl; A: corpus v0002); compared on the 1 in common"
    ) in text
    as_json = json.loads(
        runner.invoke(app, ["runs", "compare", "runs/full", "runs/sub", "--json"]).output
    )
    counts = ("paired_cases", "only_in_current", "only_in_baseline")
    assert [as_json[k] for k in counts] == [1, 1, 2]
    assert as_json["baseline_case_set"]["corpus_version"] == 2
    assert as_json["case_note"].startswith("case sets differ: 1 case in common")

    listed = json.loads(runner.invoke(app, ["runs", "list", "--root", "runs", "--json"]).output)
    by_run = {Path(r["run"]).name: r["case_set"] for r in listed}
    assert by_run["full"]["corpus_version"] == 2 and by_run["full"]["digest"] == corpus_digest
    monkeypatch.setattr(console, "_width", 160)  # wide enough for the table not to fold
    table = _flat(runner.invoke(app, ["runs", "list", "--root", "runs"]).output)
    assert f"corpus v0002 {corpus_digest[:8]}" in table
    assert f"subset.jsonl {digest([refund.id, other.id])[:8]}" in table
    shown = _flat(runner.invoke(app, ["runs", "show", "runs/sub"]).output)
    assert "cases: subset.jsonl (2 cases, digest " in shown

    # a run folder written before runs recorded their cases still lists, shows and compares
    path = tmp_path / "runs" / "full" / "summary.json"
    old = {k: v for k, v in json.loads(path.read_text()).items() if k != "case_set"}
    path.write_text(json.dumps({**old, "format": 1}))
    assert "cases: not recorded" in _flat(runner.invoke(app, ["runs", "show", "runs/full"]).output)
    listed = json.loads(runner.invoke(app, ["runs", "list", "--root", "runs", "--json"]).output)
    assert {Path(r["run"]).name: r["case_set"] for r in listed}["full"] is None
    compared = _flat(runner.invoke(app, ["runs", "compare", "runs/full", "runs/sub"]).output)
    assert "(B: subset.jsonl; A: not recorded)" in compared


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


KEY = "sk-test-5ecret-key-0123456789"


def test_a_run_whose_endpoint_answers_500_exits_1_naming_the_errors(
    tmp_path, cases_file, monkeypatch
):
    """Every trial ended in an error: nothing was scored, so the run fails even though its gate
    (no forbidden call) passed on the empty trajectories; the key the server echoes is masked."""
    from tests.support.openai_server import OpenAIServer, Reply

    def broken(body: dict) -> Reply:
        message = f"upstream down (key {KEY})"
        return Reply(status=500, body={"error": {"message": message}}, headers={"Retry-After": "0"})

    gate = tmp_path / "gate.toml"
    gate.write_text(FORBIDDEN_GATE)
    with OpenAIServer(broken) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("CASEMILL_LLM_API_KEY", KEY)
        run = tmp_path / "run"
        argv = ["--agent", "openai:m", "--cases", str(cases_file), "-o", str(run)]
        result = _eval(*argv, "--gate", str(gate))
    out = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert "openai:m: task success 0.000 over 3 cases" in out  # not an emoji code
    assert "gate passed" in out
    assert "error: no trial could be scored: 3 of 3 trials ended in an error (http_5xx 3)" in out
    assert (
        f"first: case {refund_case().id} trial 0: HTTP 500: Error code: 500 - upstream down (key ***)"
        in out
    )
    assert KEY not in result.output
    assert json.loads((run / "summary.json").read_text())["error_kinds"] == {"http_5xx": 3}


@pytest.mark.slow  # connection errors are retried with backoff: about 10 s
def test_a_run_whose_http_agent_is_on_a_closed_port_exits_1(tmp_path, cases_file):
    one = tmp_path / "one.jsonl"
    one.write_text(cases_file.read_text().splitlines()[0] + "\n")
    agent = f"http://127.0.0.1:{_closed_port()}/agent"
    result = _eval("--agent", agent, "--cases", str(one), "-o", str(tmp_path / "run"), "--json")
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["error_kinds"] == {"connection": 1}
    err = " ".join(result.stderr.split())
    assert "error: no trial could be scored: 1 of 1 trials ended in an error (connection 1)" in err
    assert f"first: case {refund_case().id} trial 0: connection failed:" in err


def test_a_run_with_some_errors_keeps_exit_0_and_prints_them(tmp_path, cases_file, monkeypatch):
    """The first request is answered, every later one is a 500 (one case at a time): one trial
    scored, two errors, printed with their kind and the first message."""
    from tests.support.openai_server import OpenAIServer, Reply

    seen = []

    def first_only(body: dict) -> dict | Reply:
        seen.append(body)
        if len(seen) == 1:
            return {"content": "Sorry, I cannot help with that."}
        return Reply(status=500, body={"error": {"message": "down"}}, headers={"Retry-After": "0"})

    with OpenAIServer(first_only) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        argv = ["--agent", "openai:m", "--cases", str(cases_file), "-o", str(tmp_path / "run")]
        result = _eval(*argv, "--concurrency", "1")
    out = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert "errors: 2 of 3 trials ended in an error (http_5xx 2);" in out
    assert f"first: case {cancel_case().id} trial 0: HTTP 500: Error code: 500 - down" in out
    assert "no trial could be scored" not in out
    shown = " ".join(runner.invoke(app, ["runs", "show", str(tmp_path / "run")]).output.split())
    results = tmp_path / "run" / "results.jsonl"
    assert (
        f"errors: 2 of 3 trials ended in an error (http_5xx 2); each one is in {results}" in shown
    )


@pytest.mark.slow
def test_ctrl_c_exits_130_saying_what_is_saved_and_how_to_go_on(tmp_path):
    """SIGINT (as by Ctrl-C) part-way through `casemill eval` on a slow agent."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from casemill.evaluation.run_store import TRAJECTORIES_FILE

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "CASEMILL_TEST_AGENT_DELAY": "0.3"}
    env["CASEMILL_TEST_AGENT_LOG"] = str(tmp_path / "invocations.log")
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    out = tmp_path / "run"
    agent = "python:tests.evaluation.runner.slow_agent:agent"
    child = subprocess.Popen(
        [sys.executable, "-m", "casemill.cli", "eval", "--agent", agent, "--cases",
         str(root / "corpus"), "-o", str(out), "--concurrency", "2"],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    path, deadline = out / TRAJECTORIES_FILE, time.time() + 60
    while time.time() < deadline and (not path.exists() or len(path.read_bytes().splitlines()) < 4):
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    saved = len(path.read_bytes().splitlines())
    assert child.returncode == 130
    said = " ".join(err.split())
    assert f"interrupted: {saved} trajectories are saved in {out}" in said
    assert "run the same command again to go on from there" in said


def test_runs_list_says_which_run_it_skipped_whatever_its_folder_is_called(tmp_path):
    """A folder name that reads as Rich markup (`[bold]`) is printed as it is."""
    bad = tmp_path / "[bold]old"
    bad.mkdir()
    (bad / "summary.json").write_text("{oops")
    result = runner.invoke(app, ["runs", "list", "--root", str(tmp_path)])
    assert result.exit_code == 0, result.output
    said = "".join(result.output.split())  # long paths are wrapped
    assert "".join(f"skipped {bad / 'summary.json'}:1: not valid JSON".split()) in said


def _run_keyed_agent(
    tmp_path: Path, cases_file: Path, monkeypatch, module: str, source: str
) -> Path:
    """Evaluate the Python agent `source` (`module` with `run`; a name of its own, as imported
    modules stay) with `OPENAI_API_KEY` set to KEY; checks the key is in no file of the run nor
    in the output, and gives the run folder."""
    agent_dir = tmp_path / "agentpkg"
    agent_dir.mkdir()
    (agent_dir / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(agent_dir))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    run = tmp_path / "run"
    result = _eval("--agent", f"python:{module}:run", "--cases", str(cases_file), "-o", str(run))
    assert result.exit_code == 0, result.output
    assert KEY not in result.output
    for path in run.iterdir():
        assert KEY not in path.read_text(), path.name
    return run


def test_a_python_agent_quoting_the_api_key_leaves_it_in_no_file_of_the_run(
    tmp_path, cases_file, monkeypatch
):
    """A Python agent's own client fails quoting the key it was given, or the agent echoes it:
    the configured key is masked in the trajectory, so in no file of the run and not printed."""
    source = (
        "import os\n\n"
        "def run(episode):\n"
        "    key = os.environ['OPENAI_API_KEY']\n"
        "    if 'W1001' in str(episode.messages):\n"
        "        raise RuntimeError(f'401 from upstream: bad key {key}')\n"
        "    return f'Which order? (debug: {key})'\n"
    )
    run = _run_keyed_agent(tmp_path, cases_file, monkeypatch, "leaky_agent", source)
    trajectories = [
        json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()
    ]
    assert any(t["error"] == "RuntimeError: 401 from upstream: bad key ***" for t in trajectories)
    assert any(t["final_reply"] == "Which order? (debug: ***)" for t in trajectories)


def test_an_api_key_in_a_tool_call_or_a_message_part_is_masked_in_every_file_of_the_run(
    tmp_path, cases_file, monkeypatch
):
    """The key in a call's arguments, in the name of a tool the agent made up, and in the
    agent's own messages (a call's arguments, a list-form content part) is masked too."""
    source = (
        "import json, os\n\n"
        "def run(episode):\n"
        "    key = os.environ['OPENAI_API_KEY']\n"
        "    episode.call('get_order', {'order_id': key})\n"
        "    episode.call(f'tool_{key}', {})\n"
        "    call = {'name': 'get_order', 'arguments': json.dumps({'order_id': key})}\n"
        "    return 'done', [\n"
        "        *episode.messages,\n"
        "        {'role': 'assistant', 'content': None,\n"
        "         'tool_calls': [{'id': 'x', 'type': 'function', 'function': call}]},\n"
        "        {'role': 'tool', 'tool_call_id': 'x', 'content': 'ok'},\n"
        "        {'role': 'assistant', 'content': [{'type': 'text', 'text': f'key {key}'}]},\n"
        "    ]\n"
    )
    run = _run_keyed_agent(tmp_path, cases_file, monkeypatch, "key_agent", source)
    first = json.loads((run / "trajectories.jsonl").read_text().splitlines()[0])
    assert [(c["tool"], c["params"]) for c in first["calls"]][:2] == [
        ("get_order", {"order_id": "***"}),
        ("tool_***", {}),
    ]
    assert first["messages"][-1]["content"] == [{"type": "text", "text": "key ***"}]
    called = first["messages"][-3]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(called) == {"order_id": "***"}


def test_masking_finds_a_key_that_json_escapes_and_leaves_a_trajectory_without_one():
    from casemill.evaluation.runner import _masked
    from casemill.evaluation.trajectory import Trajectory

    key = 'sk-"quoted"\\key'
    said = Trajectory(case_id="c_1", agent="a", agent_fingerprint="f", final_reply=f"key {key}")
    assert _masked(said, (key,)).final_reply == "key ***"
    clean = said.model_copy(update={"final_reply": "no key here"})
    assert _masked(clean, (key,)) is clean  # nothing to mask: the same object, not a copy


def test_a_run_whose_python_agent_always_raises_points_at_the_agent_not_the_network(
    tmp_path, cases_file, monkeypatch
):
    """Every trial raised: nothing was scored (exit 1), and the hint says to look at the agent's
    errors; 'reachable' is for agents that could not be reached."""
    agent_dir = tmp_path / "agentpkg"
    agent_dir.mkdir()
    (agent_dir / "raising_agent.py").write_text(
        "def run(episode):\n    raise KeyError('order_id')\n"
    )
    monkeypatch.syspath_prepend(str(agent_dir))
    run = tmp_path / "run"
    result = _eval(
        "--agent", "python:raising_agent:run", "--cases", str(cases_file), "-o", str(run)
    )
    err = " ".join(result.stderr.split())
    assert result.exit_code == 1, result.output
    assert "3 of 3 trials ended in an error (exception 3)" in err
    assert "Check the agent's errors; every trial is in" in err
    assert "reachable" not in err


def test_a_baseline_that_is_the_run_directory_is_refused_before_anything_is_written(
    tmp_path, cases_file
):
    """`-o runs/x --baseline runs/x` would overwrite the baseline's results with the run's."""
    run = tmp_path / "run"
    assert _eval("--agent", "reference", "--cases", str(cases_file), "-o", str(run)).exit_code == 0
    before = (run / "results.jsonl").read_text()
    argv = ["--agent", "reference:no_confirmation", "--cases", str(cases_file), "-o", str(run)]
    result = _eval(*argv, "--baseline", str(tmp_path / "." / "run"))
    assert result.exit_code == 2, result.output
    assert "is the run directory" in " ".join(result.output.split())
    assert (run / "results.jsonl").read_text() == before


def test_runs_list_of_a_folder_that_does_not_exist_is_an_input_error(tmp_path, monkeypatch):
    result = runner.invoke(app, ["runs", "list", "--root", str(tmp_path / "rnus")])
    assert isinstance(result.exception, UserError)
    assert str(result.exception) == f"--root {tmp_path / 'rnus'}: no such folder"
    monkeypatch.chdir(tmp_path)  # the default, runs/, is simply empty before the first run
    result = runner.invoke(app, ["runs", "list"])
    assert result.exit_code == 0 and "no evaluated runs under runs" in result.output


def test_runs_list_and_show_print_an_agent_named_with_an_emoji_code_as_it_is(tmp_path, cases_file):
    """Rich shows `:m:` as an emoji: `openai:m:` (model `m:`) must read as typed."""
    run = tmp_path / "runs" / "r"
    assert _eval("--agent", "reference", "--cases", str(cases_file), "-o", str(run)).exit_code == 0
    data = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps({**data, "agent": "openai:m:"}))
    listed = runner.invoke(app, ["runs", "list", "--root", str(tmp_path / "runs")])
    shown = runner.invoke(app, ["runs", "show", str(run)])
    for result in (listed, shown):
        assert result.exit_code == 0, result.output
        assert "openai:m:" in result.output and "\u24c2" not in result.output
