"""Fuzz: good records mixed with seeded mutants of others (`tests/fuzz_records.py`: truncation,
byte flips, wrong types, huge strings, deep nesting, invalid UTF-8, lone surrogates,
NaN/Infinity, huge numbers, duplicate keys, BOM, NUL, U+2028, non-object lines, 10,000-turn
conversations) through `validate`, `review enqueue`, `eval`, `import` and `mine`, as the command
line runs them. For each: no exception escapes (no traceback), every good record comes out, and
every record refused is named by file and line, a line of a mutant. `bench/fuzz_inputs.py` runs
the same over 10,000 mutants and more."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill.cli import app

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_records import MUTATIONS, mixed_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SEEDS = (ROOT / "seeds" / "support.jsonl").read_bytes().split(b"\n")[:-1]
SAMPLES = (
    (ROOT / "tests" / "formats" / "fixtures" / "companion_mixed.jsonl")
    .read_bytes()
    .split(b"\n")[:-1]
)
runner = CliRunner()
KINDS = sorted(MUTATIONS)


def jsonl(path: Path) -> list[dict]:
    """The records of a JSONL file, split at line feeds only (a U+2028 inside a string is not a
    line break, as `str.splitlines` takes it)."""
    return [json.loads(x) for x in path.read_bytes().split(b"\n") if x.strip()]


def run(*args: str) -> dict:
    """The command's `--json` output; fails on any exception the command let out."""
    result = runner.invoke(app, [*args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{args[0]} raised {result.exception!r}"
    )
    assert result.exit_code in (0, 1), result.output[-2000:]
    return json.loads(result.stdout)


def case_file(tmp_path: Path, seed: int, n: int) -> tuple[Path, set[int], dict[int, str]]:
    rng = random.Random(seed)
    path = tmp_path / f"cases-{seed}.jsonl"
    goods, sources = SEEDS[:20], SEEDS[20:]
    good_lines, mutants = mixed_file(path, goods, sources, n, rng, KINDS)
    return path, good_lines, mutants


@pytest.mark.parametrize("seed", [0, 1])
def test_validate_keeps_every_good_case_and_names_each_bad_one(tmp_path, monkeypatch, seed):
    monkeypatch.chdir(tmp_path)  # where validate writes its quarantine
    path, good_lines, mutants = case_file(tmp_path, seed, 2 * len(KINDS))
    report = run("validate", "--no-batch", str(path))
    bad = {(b["file"], b["line"]) for b in report["bad_records"]}
    assert all(file == str(path) for file, _ in bad)
    assert not {line for _, line in bad} & good_lines
    assert {line for _, line in bad} <= set(mutants)
    assert report["valid"] + report["bad"] == report["records"]
    assert report["valid"] >= len(good_lines)


@pytest.mark.parametrize("seed", [2])
def test_enqueue_and_eval_keep_every_good_case(tmp_path, monkeypatch, seed):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    monkeypatch.setenv("CASEMILL_CORPUS_DIR", str(corpus))
    path, good_lines, mutants = case_file(tmp_path, seed, len(KINDS))
    good_ids = {json.loads(SEEDS[i])["id"] for i in range(20)}
    counts = run("review", "enqueue", str(path), "--db", f"sqlite:///{tmp_path / 'q.db'}")
    assert counts["added"] >= len(good_lines)
    quarantine = path.with_suffix(".quarantine.jsonl")
    named = jsonl(quarantine)
    assert {q["line"] for q in named} <= set(mutants)
    assert all(q["file"] == str(path) for q in named)

    out = tmp_path / "run"
    result = runner.invoke(
        app, ["eval", "--agent", "reference", "--cases", str(path)] + ["-o", str(out)]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code in (0, 1), result.output[-2000:]
    ran = {r["case_id"] for r in jsonl(out / "results.jsonl")}
    assert good_ids <= ran
    refused = jsonl(out / "quarantine.jsonl")
    assert {(q["file"], q["line"]) for q in refused} <= {(str(path), n) for n in mutants}


def test_import_keeps_every_good_sample(tmp_path):
    rng = random.Random(3)
    path = tmp_path / "samples.jsonl"
    goods, sources = SAMPLES[:6], SAMPLES[6:]
    good_lines, mutants = mixed_file(path, goods, sources, 3 * len(KINDS), rng, KINDS)
    out = tmp_path / "imported.jsonl"
    summary = run("import", str(path), "--from", "companion", "-o", str(out))
    imported = jsonl(out)
    lines = {c["provenance"]["source"]["line"] for c in imported}
    assert good_lines <= lines
    named = jsonl(tmp_path / "imported.quarantine.jsonl")
    assert {q["line"] for q in named} <= set(mutants)
    assert summary


def log_lines() -> list[bytes]:
    """Conversations of the airline logs (when ../shared/data is there), else synthetic ones."""
    logs = ROOT.parent / "shared" / "data" / "tau-bench-airline-logs" / "support_logs.jsonl"
    if logs.is_file():
        return logs.read_bytes().split(b"\n")[:-1]
    from casemill.mining.synthetic import support_log

    return [json.dumps(record).encode() for record in support_log(seed=0, count=30)]


def mined_conversations(path: Path, out: Path) -> set[str]:
    """The ids of the conversations `casemill mine` made cases of."""
    run("mine", str(path), "--format", "openai-jsonl", "-o", str(out))
    return {c["provenance"]["source"]["conversation_id"] for c in jsonl(out)}


def test_mine_keeps_every_good_conversation(tmp_path):
    lines = log_lines()
    alone = tmp_path / "alone.jsonl"
    alone.write_bytes(b"\n".join(lines[:10]) + b"\n")
    expected = mined_conversations(alone, tmp_path / "alone-mined.jsonl")
    assert expected
    rng = random.Random(4)
    path = tmp_path / "logs.jsonl"
    _, mutants = mixed_file(path, lines[:10], lines[10:30], 2 * len(KINDS), rng, KINDS)
    assert expected <= mined_conversations(path, tmp_path / "mined.jsonl")
    quarantine = tmp_path / "mined.quarantine.jsonl"
    named = jsonl(quarantine) if quarantine.exists() else []
    assert {q["line"] for q in named} <= set(mutants)
    assert all(q["file"] == str(path) for q in named)
