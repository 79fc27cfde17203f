"""Deduplication within logs and against a corpus; the CLI's summary, exits and files; the
accuracy acceptance on the airline logs."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.casebuild import approved
from mining_helpers import sample_records, write_jsonl
from typer.testing import CliRunner

from casemill.cli import app
from casemill.corpus import CorpusStore
from casemill.errors import UserError
from casemill.mining import dedup, merge_results, mine, mine_file

RECORDS = sample_records(4, seed=9)


def test_repeated_conversations_are_dropped_within_and_across_files(tmp_path):
    again = copy.deepcopy(RECORDS[0])
    again["conversation_id"] = "copy-of-0"  # same words, same ids: a re-export
    log = write_jsonl(tmp_path / "a.jsonl", [*RECORDS, again])
    result = mine([log], "openai-jsonl", redact=False)
    once = mine([write_jsonl(tmp_path / "b.jsonl", RECORDS)], "openai-jsonl", redact=False)
    assert len(result.cases) == len(once.cases)
    assert result.summary.duplicates["within_logs"] >= 1
    merged = merge_results([mine_file(log, "openai-jsonl", redact=False), once])
    assert len(merged.cases) == len(once.cases)
    assert merged.summary.conversations_read == 9


def test_a_conversation_logged_again_under_other_ids_is_dropped_with_redaction_on(tmp_path):
    """Surrogates are drawn by what a conversation holds, not by its id: a re-export with a new
    conversation id and new tool call ids redacts to the same values, so its cases are
    duplicates (they used to differ by their surrogates and all stayed)."""
    again = copy.deepcopy(RECORDS[0])
    again["conversation_id"] = "export-2-0"
    renamed = 0
    for message in again["messages"]:
        for call in message.get("tool_calls") or []:
            call["id"] = f"re-{call['id']}"
            renamed += 1
        if message.get("tool_call_id"):
            message["tool_call_id"] = f"re-{message['tool_call_id']}"
    assert renamed, "the record has tool calls whose ids the re-export changes"
    result = mine([write_jsonl(tmp_path / "a.jsonl", [*RECORDS, again])], "openai-jsonl")
    once = mine([write_jsonl(tmp_path / "b.jsonl", RECORDS)], "openai-jsonl")
    alone = mine([write_jsonl(tmp_path / "c.jsonl", [RECORDS[0]])], "openai-jsonl")
    assert len(result.cases) == len(once.cases)
    assert result.summary.duplicates == {"within_logs": len(alone.cases)}


def test_dedup_verdicts_do_not_depend_on_the_filter_of_new_signatures(tmp_path, monkeypatch):
    """The Bloom filter only spares the table a look-up: with a filter of 8 bits (nearly every
    signature a false positive) the verdicts and the cases are the same."""
    again = copy.deepcopy(RECORDS[1])
    again["conversation_id"] = "copy-of-1"
    log = write_jsonl(tmp_path / "a.jsonl", [*RECORDS, again, *sample_records(6, seed=3)])
    wide = mine([log], "openai-jsonl", redact=False)
    monkeypatch.setattr(dedup, "_BLOOM_BITS", 8)
    monkeypatch.setattr(dedup, "_QUEUE", 2)
    narrow = mine([log], "openai-jsonl", redact=False)
    assert wide.summary.duplicates == narrow.summary.duplicates
    assert wide.summary.duplicates["within_logs"] >= 1
    assert [c.id for c in wide.cases] == [c.id for c in narrow.cases]


def test_cases_already_in_the_corpus_are_dropped(tmp_path):
    log = write_jsonl(tmp_path / "a.jsonl", RECORDS)
    first = mine([log], "openai-jsonl")
    store = CorpusStore(tmp_path / "corpus")
    store.add_version(approved(*first.cases[:3]), note="mined earlier")
    again = mine([log], "openai-jsonl", existing=store.cases())
    assert len(again.cases) == len(first.cases) - 3
    assert again.summary.duplicates == {"corpus": 3}


def test_without_a_corpus_no_minhash_index_is_loaded(tmp_path):
    """The MinHash index (datasketch, scipy: about a second to import) is only for comparing
    with a corpus; mining logs alone deduplicates without it."""
    log = write_jsonl(tmp_path / "a.jsonl", RECORDS)
    code = (
        "import sys; from pathlib import Path; from casemill.mining import mine; "
        f"r = mine([Path({str(log)!r})], 'openai-jsonl'); "
        "print(len(r.cases), 'datasketch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    count, loaded = done.stdout.split()
    assert int(count) > 0 and loaded == "False"


def test_cli_writes_candidates_and_prints_a_summary(tmp_path):
    log = write_jsonl(tmp_path / "a.jsonl", [*RECORDS, b'{"conversation_id": "x", "messages": ['])
    out = tmp_path / "out" / "cands.jsonl"
    result = CliRunner().invoke(app, ["mine", str(log), "-f", "openai-jsonl", "-o", str(out)])
    assert result.exit_code == 1, result.output  # a record was quarantined, as import says
    assert "4 conversations read" in result.output and "quarantined" in result.output
    lines = out.read_text().splitlines()
    assert lines and all(json.loads(x)["review"]["status"] == "pending" for x in lines)
    quarantine = out.with_name("cands.quarantine.jsonl")
    (record,) = [json.loads(x) for x in quarantine.read_text().splitlines()]
    assert record["line"] == 5 and record["reason"] == "truncated" and record["file"] == str(log)


def test_cli_fails_when_no_conversation_could_be_read(tmp_path):
    log = write_jsonl(tmp_path / "a.jsonl", RECORDS[:2])
    out = tmp_path / "o.jsonl"
    result = CliRunner().invoke(app, ["mine", str(log), "-f", "transcript", "-o", str(out)])
    assert isinstance(result.exception, UserError)  # `casemill` prints it and exits 2
    said = " ".join(str(result.exception).split())
    assert "all 2 record(s) were quarantined (missing_messages 2" in said
    assert "are the logs in --format transcript?" in said
    assert out.read_text() == ""
    assert out.with_name("o.quarantine.jsonl").read_text().count("missing_messages") == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = CliRunner().invoke(app, ["mine", str(empty), "-f", "openai-jsonl", "-o", str(out)])
    assert result.exit_code == 0 and "no conversation found" in " ".join(result.output.split())


def test_a_csv_mapping_that_cannot_be_used_is_said_before_mining(tmp_path):
    log = tmp_path / "t.csv"
    log.write_text("ticket_id,role,message\nT1,customer,my lamp broke\nT1,agent,sorry\n")
    out = tmp_path / "o.jsonl"
    for mapping, said in (
        # was a TypeError traceback
        ({"delimiter": "tab"}, "field 'delimiter': the delimiter is one character"),
        # was every row quarantined as unknown_role
        ({"role_values": {"customer": "client"}}, "field 'role_values': role_values maps to"),
        ({"conversation": "x"}, "field 'conversation': Extra inputs are not permitted"),
    ):
        path = tmp_path / "m.json"
        path.write_text(json.dumps(mapping))
        result = CliRunner().invoke(
            app, ["mine", str(log), "-f", "csv", "--csv-mapping", str(path), "-o", str(out)]
        )
        assert isinstance(result.exception, UserError)  # exit 2, said as is, by casemill
        told = str(result.exception)
        assert "m.json: not a valid CSV column mapping" in told
        assert said in told and "errors.pydantic.dev" not in told
    assert not out.exists()
    roles = tmp_path / "roles.json"
    roles.write_text(json.dumps({"role_values": {"Customer": "User", "AGENT": "assistant"}}))
    result = CliRunner().invoke(
        app, ["mine", str(log), "-f", "csv", "--csv-mapping", str(roles), "-o", str(out)]
    )
    assert result.exit_code == 0 and out.read_text().count("\n") == 1


@pytest.mark.slow
def test_cli_rejects_unknown_formats_and_missing_files(tmp_path):
    casemill = Path(sys.executable).parent / "casemill"
    log = write_jsonl(tmp_path / "a.jsonl", RECORDS[:1])
    for args, message in (
        ([str(tmp_path / "none.jsonl"), "-f", "openai-jsonl"], "no such log file"),
        ([str(tmp_path), "-f", "openai-jsonl"], "a folder, not a log file"),
        ([str(log), "-f", "openai-jsonl", "--max-turns", "0"], "greater than or equal to 1"),
        (
            [str(log), "-f", "openai-jsonl", "--corpus", str(tmp_path / "nope")],
            f"--corpus {tmp_path / 'nope'}: no such corpus folder",
        ),
        (
            [str(log), "-f", "xml"],
            "--format 'xml' is not one of openai-jsonl, transcript, csv, otel",
        ),
        ([str(log), "-f", "openai-jsonl", "--no-redact", "--keep-raw", "r.jsonl"], "--keep-raw"),
        (
            [str(log), "-f", "openai-jsonl", "--csv-mapping", "m.json"],
            "--csv-mapping applies to --format csv only, not --format openai-jsonl",
        ),
    ):
        done = subprocess.run(
            [str(casemill), "mine", *args, "-o", str(tmp_path / "o.jsonl")],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2, done.stderr
        assert message in " ".join(done.stderr.split())
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.slow
@pytest.mark.shared_data
def test_airline_accuracy_meets_the_targets(shared_data, root: Path):
    done = subprocess.run(
        [
            sys.executable,
            str(root / "bench" / "mine_accuracy.py"),
            "--data",
            str(shared_data / "tau-bench-airline-logs"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    # the last strict and state-equivalent lines are those of the mining with tool specs
    lines = {line.split(":")[0].strip(): line for line in done.stdout.splitlines()}
    for kind in ("strict", "state-equivalent"):
        words = lines[kind].split()
        precision, recall = float(words[2]), float(words[4])
        assert precision >= 0.95 and recall >= 0.90, lines[kind]
    assert "without tool specs:" in done.stdout and "with tool specs:" in done.stdout
    assert "needs_label: 69/69" in done.stdout


def test_shingles_of_compared_texts_are_kept_within_their_bound(monkeypatch):
    """The shingles kept for comparisons are those of `shingles`, and no more of them than the
    bound (the text at hand aside) stay kept."""
    from casemill.dedup import shingles

    monkeypatch.setattr(dedup, "_SHINGLES_KEPT", 50)
    texts = [f"customer {i} wants a refund for order {i * 7}" for i in range(20)]
    with dedup.MinedDeduper() as deduper:
        for text in [*texts, *texts[::-1]]:
            assert deduper._shingles_of(text) == shingles(text)
            kept = sum(len(s) for s in deduper._shingles.values())
            assert kept == deduper._shingles_kept
            assert kept <= 50 + len(shingles(text))
        assert texts[0] in deduper._shingles  # the most recently used stays


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_leaves_no_output_and_says_so(tmp_path, workers):
    """SIGINT to the process group (as Ctrl-C sends it) once mining has written its first MB:
    exit 130, a message, and no output or temporary file left behind (nor a worker)."""
    import os
    import signal
    import time

    import orjson

    from casemill.mining.synthetic import support_log

    log = tmp_path / "log.jsonl"
    with log.open("wb") as fh:
        for _, record in zip(range(6000), support_log(seed=1, instructions=True), strict=False):
            fh.write(orjson.dumps(record) + b"\n")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    casemill = Path(sys.executable).parent / "casemill"
    child = subprocess.Popen(
        [str(casemill), "mine", str(log), "-f", "openai-jsonl", "-o", str(out_dir / "c.jsonl"),
         "-w", str(workers)],
        start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    deadline = time.time() + 120
    while time.time() < deadline and child.poll() is None:
        if any(p.stat().st_size >= 2**20 for p in out_dir.glob(".c.jsonl.*.tmp")):
            break
        time.sleep(0.01)
    assert child.poll() is None, "mining ended before it could be interrupted"
    os.killpg(child.pid, signal.SIGINT)
    output, _ = child.communicate(timeout=60)
    assert child.returncode == 130, output
    said = " ".join(output.split())
    assert f"interrupted: nothing written to {out_dir / 'c.jsonl'}" in said
    assert list(out_dir.iterdir()) == []
    for _ in range(1000):  # the workers end with the main process
        try:
            os.killpg(child.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.01)
    else:
        raise AssertionError("a process of the interrupted run is still running")


def test_cli_summary_counts_read_singular_for_one(tmp_path):
    """One file and one conversation read "1 file" and "1 conversation", not "1 file(s)";
    a path with square brackets is printed as it is, not taken for markup."""
    folder = tmp_path / "[x]"
    folder.mkdir()
    log = write_jsonl(folder / "a.jsonl", RECORDS[:1])
    out = folder / "c.jsonl"
    result = CliRunner().invoke(app, ["mine", str(log), "-f", "openai-jsonl", "-o", str(out)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "1 conversation read from 1 file," in said
    assert "file(s)" not in said
    assert "[x]/c.jsonl" in "".join(result.output.split())


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the drop itself
def test_a_ctrl_c_that_python_drops_in_a_finalizer_still_stops_mining(tmp_path):
    """A KeyboardInterrupt raised while a weakref callback or `__del__` runs is printed as
    'Exception ignored' and dropped (CI once saw mining run to its end so); the interrupt is
    remembered and raised at the next progress report."""
    import signal

    import typer

    from casemill.cli.mine import _interruptible

    class Finalized:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGINT)  # its KeyboardInterrupt is dropped here

    reported = []

    def mining(progress) -> str:  # noqa: ANN001 - the progress callback mine_to_files takes
        Finalized()  # collected at once: the signal arrives inside __del__
        progress(10)
        return "mined to the end"

    with pytest.raises(typer.Exit) as stopped:
        _interruptible(tmp_path / "c.jsonl", mining, progress=reported.append)
    assert stopped.value.exit_code == 130 and reported == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
