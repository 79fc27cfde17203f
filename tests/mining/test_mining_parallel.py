"""casemill.mining.parallel: worker processes give byte for byte the output of one process."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest
from mining_helpers import chat, sample_records, write_jsonl

from casemill.mining import MineOptions, mine, parallel
from casemill.mining.output import mine_to_files
from casemill.mining.parallel import BATCH, _batches
from casemill.mining.pipeline import Tally, parsed


def _logs(tmp_path: Path) -> list[Path]:
    """Two files of support conversations (the second repeats part of the first, so later
    cases are duplicates of earlier ones) with bad records between good ones."""
    records = sample_records(count=3 * BATCH, seed=5)
    bad = [
        b'{"conversation_id": "cut-off", "messages": [',
        b"not json at all",
        chat("who", [{"role": "wizard", "content": "hello"}]),
        chat("mute", [{"role": "assistant", "content": "Anyone there?"}]),
    ]
    first = records[:40] + bad[:2] + records[40:150] + bad[2:] + records[150:]
    return [
        write_jsonl(tmp_path / "support_a.jsonl", first),
        write_jsonl(tmp_path / "support_b.jsonl", records[100:] + bad[:1]),
    ]


def _mine_to_folder(logs: list[Path], folder: Path, workers: int, existing=()) -> tuple:
    folder.mkdir()
    summary = mine_to_files(
        logs,
        "openai-jsonl",
        folder / "out.jsonl",
        keep_raw=folder / "raw.jsonl",
        options=MineOptions(workers=workers),
        existing=existing,
    )
    files = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    return summary, files


def test_workers_write_the_same_files_as_one_process(tmp_path):
    logs = _logs(tmp_path)
    one, one_files = _mine_to_folder(logs, tmp_path / "one", workers=1)
    two, two_files = _mine_to_folder(logs, tmp_path / "two", workers=2)

    assert two_files == one_files
    assert two == one
    # every good conversation, and the one without a customer turn (the parser read it)
    assert one.conversations_read == 3 * BATCH + 1 + (3 * BATCH - 100)
    assert one.duplicates["within_logs"] > 0  # the second file's repeats, found in order
    assert one.quarantined == {
        "invalid_json": 1,
        "no_customer_turn": 1,
        "truncated": 2,
        "unknown_role": 1,
    }
    assert one.redactions and one_files["raw.jsonl"]


def test_workers_deduplicate_against_a_corpus_as_one_process(tmp_path):
    logs = _logs(tmp_path)[:1]
    corpus = mine(logs, "openai-jsonl", options=MineOptions()).cases[:30]
    one, one_files = _mine_to_folder(logs, tmp_path / "one", workers=1, existing=corpus)
    two, two_files = _mine_to_folder(logs, tmp_path / "two", workers=2, existing=corpus)

    assert two_files == one_files
    assert one.duplicates["corpus"] == 30


def test_mine_in_memory_with_workers_gives_the_same_cases(tmp_path):
    logs = _logs(tmp_path)
    one = mine(logs, "openai-jsonl")
    two = mine(logs, "openai-jsonl", options=MineOptions(workers=2))

    assert [c.id for c in two.cases] == [c.id for c in one.cases]
    assert two.cases == one.cases
    assert two.quarantined == one.quarantined
    assert two.summary == one.summary


def test_workers_started_by_spawn_give_the_same_cases(tmp_path, monkeypatch):
    """Where there is no fork server (Windows), workers are spawned: fresh interpreters that
    import casemill.mining themselves and get the run's options through the initializer."""
    monkeypatch.setattr(parallel.multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    assert parallel._context().get_start_method() == "spawn"
    logs = _logs(tmp_path)[1:]
    one = mine(logs, "openai-jsonl")
    two = mine(logs, "openai-jsonl", options=MineOptions(workers=2))

    assert [c.id for c in two.cases] == [c.id for c in one.cases]
    assert two.cases == one.cases and len(one.cases) > 3 * BATCH - 100
    assert two.summary == one.summary


def test_batches_keep_order_and_never_mix_files(tmp_path):
    logs = _logs(tmp_path)
    records = list(parsed(logs, "openai-jsonl", MineOptions(), Tally()))
    batches = list(_batches(records))

    assert [item for _, batch in batches for item in batch] == [item for _, item in records]
    assert all(len(batch) <= BATCH for _, batch in batches)
    for derive, batch in batches:
        files = {item.file for item in batch}
        assert len(files) == 1
        assert derive is next(d for d, item in records if item.file in files)


@pytest.mark.slow
def test_cli_workers_option_writes_the_same_candidates(tmp_path):
    casemill = Path(sys.executable).parent / "casemill"
    log = _logs(tmp_path)[1]
    outs = []
    for workers in ("1", "2"):
        out = tmp_path / f"cands_{workers}.jsonl"
        done = subprocess.run(
            [
                str(casemill),
                "mine",
                str(log),
                "-f",
                "openai-jsonl",
                "-o",
                str(out),
                "--json",
                "--workers",
                workers,
            ],
            capture_output=True,
            text=True,
        )
        summary = json.loads(done.stdout)
        # records were quarantined (the log holds bad lines): mine writes the good ones, exits 1
        assert sum(summary["quarantined"].values()) > 0
        assert done.returncode == 1, done.stderr
        assert summary["conversations_read"] == 3 * BATCH - 100
        assert summary["workers"] == int(workers)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0].count(b"\n") > 3 * BATCH - 100


def _ids_mined_with_workers(log: Path, queue) -> None:
    result = mine([log], "openai-jsonl", options=MineOptions(workers=2))
    queue.put([c.id for c in result.cases])


def test_a_daemonic_process_mines_in_itself(tmp_path):
    """A Dask worker's process is daemonic and may not start processes of its own: asked for
    workers there, mining runs in that process, with the same cases."""
    log = _logs(tmp_path)[1]
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(target=_ids_mined_with_workers, args=(log, queue), daemon=True)
    process.start()
    ids = queue.get(timeout=120)
    process.join(timeout=30)
    assert process.exitcode == 0
    assert ids == [c.id for c in mine([log], "openai-jsonl").cases]


def test_cli_mines_big_logs_on_every_core_unless_told(monkeypatch):
    """Without --workers: one process below AUTO_WORKERS_MB of logs, one worker a core from
    there on; --workers N is N whatever the size, and 0 is one a core."""
    from casemill.cli.mine import AUTO_WORKERS_MB, chosen_workers

    monkeypatch.setattr("os.cpu_count", lambda: 8)
    big = AUTO_WORKERS_MB * 2**20
    assert [chosen_workers(None, n) for n in (0, big - 1, big, 10 * big)] == [1, 1, 8, 8]
    assert [chosen_workers(n, big) for n in (1, 3, 0)] == [1, 3, 8]
    assert chosen_workers(0, 0) == 8
    monkeypatch.setattr("os.cpu_count", lambda: None)  # unknown: one
    assert (chosen_workers(None, big), chosen_workers(0, big)) == (1, 1)
