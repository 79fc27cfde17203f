"""The reproductions of issue 27, items 1-3: a file of one good record and one hostile one (a
lone surrogate, nesting a thousand levels deep, an integer past a float's range) through the
commands. Each keeps the good record, names the bad one by file and line, and raises nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill.cli import app

ROOT = Path(__file__).resolve().parents[1]
GOOD_CASE, OTHER_CASE = (
    (ROOT / "seeds" / "support.jsonl").read_text(encoding="utf-8").splitlines()[:2]
)
GOOD_SAMPLE = (
    (ROOT / "tests" / "formats" / "fixtures" / "companion_mixed.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()[0]
)
runner = CliRunner()


def surrogate_case() -> str:
    case = json.loads(OTHER_CASE)
    case["review"]["notes"] = "checked \ud800"  # not part of the id: the case is otherwise valid
    return json.dumps(case)


def two_records(tmp_path: Path, good: str, bad: str, name: str = "in.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(good + "\n" + bad + "\n", encoding="utf-8")
    return path


def invoke(*args: str):
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_validate_names_the_lone_surrogate(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where validate writes its quarantine
    path = two_records(tmp_path, GOOD_CASE, surrogate_case())
    result = invoke("validate", "--no-batch", "--json", str(path))
    report = json.loads(result.stdout)
    assert (report["valid"], report["bad"]) == (1, 1)
    assert report["findings"][0]["rule"] == "unencodable-text"
    assert (report["findings"][0]["file"], report["findings"][0]["line"]) == (str(path), 2)


def test_enqueue_queues_the_good_case_beside_a_lone_surrogate(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    monkeypatch.setenv("CASEMILL_CORPUS_DIR", str(corpus))
    path = two_records(tmp_path, GOOD_CASE, surrogate_case())
    db = f"sqlite:///{tmp_path / 'q.db'}"
    result = invoke("review", "enqueue", str(path), "--db", db, "--json")
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout)
    assert counts["added"] == 1
    assert counts["bad_lines"] == 1


def test_eval_runs_the_good_case_and_quarantines_the_surrogate(tmp_path):
    path = two_records(tmp_path, GOOD_CASE, surrogate_case())
    out = tmp_path / "run"
    invoke("eval", "--agent", "reference", "--cases", str(path), "-o", str(out))
    results = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(results) == 1
    quarantined = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert [(q["file"], q["line"]) for q in quarantined] == [(str(path), 2)]


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda s: s["order"].update(total=10**400), "number out of range"),
        (lambda s: s["input"][1].update(content="ok \ud800"), "lone surrogate"),
    ],
    ids=["huge-integer", "surrogate"],
)
def test_import_keeps_the_good_sample(tmp_path, edit, reason):
    bad = json.loads(GOOD_SAMPLE)
    bad["sample_id"] = "bad"
    edit(bad)
    path = two_records(tmp_path, GOOD_SAMPLE, json.dumps(bad))
    out = tmp_path / "out.jsonl"
    invoke("import", str(path), "--from", "companion", "-o", str(out))
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1
    quarantine = (tmp_path / "out.quarantine.jsonl").read_text(encoding="utf-8")
    assert reason in quarantine and '"line":2' in quarantine.replace(" ", "")


def deep_log_line(depth: int) -> str:
    """A conversation whose tool result answers a call id nested `depth` levels deep."""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_order", "arguments": "{}"},
    }
    messages = [
        {"role": "user", "content": "Where is my order #W1?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "@ID@", "content": '{"status": "shipped"}'},
        {"role": "assistant", "content": "It has shipped."},
    ]
    text = json.dumps({"conversation_id": "deep", "resolved": True, "messages": messages})
    return text.replace('"@ID@"', "[" * depth + '"call_1"' + "]" * depth)


def good_log_line(n: int) -> str:
    line = deep_log_line(0).replace('"deep"', f'"good-{n}"')
    return line.replace("#W1", f"#W{n}00")


def test_mine_keeps_the_good_conversations_beside_a_deep_one(tmp_path):
    log = tmp_path / "log.jsonl"
    lines = [good_log_line(1), deep_log_line(1000), good_log_line(2)]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "mined.jsonl"
    result = invoke("mine", str(log), "--format", "openai-jsonl", "-o", str(out), "--json")
    summary = json.loads(result.stdout)
    assert summary["conversations_mined"] == 2
    quarantine = [
        json.loads(x) for x in (tmp_path / "mined.quarantine.jsonl").read_text().splitlines()
    ]
    assert [(q["line"], q["reason"]) for q in quarantine] == [(2, "too_deep")]


def long_case(turns: int = 10_000) -> str:
    """A valid case of `turns` more turns: over the batch layer's 100,000-character bound."""
    from casemill.case.model import Case

    data = json.loads(OTHER_CASE)
    extra = [
        {"role": "customer" if n % 2 == 0 else "assistant", "content": f"still there? {n:05d}"}
        for n in range(turns)
    ]
    data["conversation"] = extra + data["conversation"]
    return Case.model_validate({**data, "id": ""}).model_dump_json()


def test_a_case_over_the_text_bound_is_refused_by_every_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where validate writes its quarantine
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    monkeypatch.setenv("CASEMILL_CORPUS_DIR", str(corpus))
    path = two_records(tmp_path, GOOD_CASE, long_case())
    report = json.loads(invoke("validate", "--no-batch", "--json", str(path)).stdout)
    assert (report["valid"], report["bad"]) == (1, 1)
    assert [(f["rule"], f["line"]) for f in report["findings"]] == [("text-length", 2)]
    db = f"sqlite:///{tmp_path / 'q.db'}"
    counts = json.loads(invoke("review", "enqueue", str(path), "--db", db, "--json").stdout)
    assert (counts["added"], counts["bad_lines"]) == (1, 1)
    out = tmp_path / "run"
    invoke("eval", "--agent", "reference", "--cases", str(path), "-o", str(out))
    assert len((out / "results.jsonl").read_text(encoding="utf-8").splitlines()) == 1
    quarantined = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert [q["line"] for q in quarantined] == [2]
    added = invoke("corpus", "add", str(path), "--corpus", str(corpus))
    assert added.exit_code != 0 and "bad record" in added.output
