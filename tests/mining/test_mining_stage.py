"""The mine stage (`casemill.mining.stage`), without Prefect and without the command line: its
checks, the files it writes, and that its pieces, split as the flow splits them, write what one
`run_mine` writes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.casebuild import approved
from mining_helpers import interleaved, sample_records, until_last_reply, write_jsonl

from casemill.corpus import CorpusStore
from casemill.errors import UserError
from casemill.mining import mine, stage
from casemill.mining.output import mine_to_files
from casemill.mining.stage import FLOW_NAMES, MineRequest, run_mine
from casemill.mining.synthetic import model_calls

RECORDS = sample_records(12, seed=7)


def _request(tmp_path: Path, logs: list[Path], **kwargs) -> MineRequest:
    return MineRequest(
        tuple(logs), kwargs.pop("fmt", "openai-jsonl"), tmp_path / "c.jsonl", **kwargs
    )


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.parent.iterdir()) if p.is_file()}


def test_run_mine_writes_the_candidates_quarantine_and_summary_of_one_pass(tmp_path):
    log = write_jsonl(tmp_path / "a.jsonl", [*RECORDS, b"{not json"])
    outcome = run_mine(_request(tmp_path, [log]))
    expected = mine([log], "openai-jsonl")
    written = (tmp_path / "c.jsonl").read_text().splitlines()
    assert written == [c.model_dump_json() for c in expected.cases]
    assert outcome.summary == expected.summary
    assert outcome.summary.cases_total == len(written) > 0
    assert outcome.quarantine == tmp_path / "c.quarantine.jsonl"
    assert len(outcome.quarantine.read_text().splitlines()) == outcome.quarantined == 1
    assert outcome.summary.quarantined == {"invalid_json": 1}
    assert outcome.keep_raw is None and outcome.workers == 1
    assert outcome.as_json()["out"] == str(tmp_path / "c.jsonl")
    assert outcome.as_flow_result()["count"] == len(written)


def test_run_mine_writes_byte_for_byte_what_mine_to_files_writes(tmp_path):
    log = write_jsonl(tmp_path / "a.jsonl", RECORDS)
    one, two = tmp_path / "one", tmp_path / "two"
    summary = mine_to_files([log], "openai-jsonl", one / "c.jsonl", keep_raw=one / "raw.jsonl")
    outcome = run_mine(
        MineRequest((log,), "openai-jsonl", two / "c.jsonl", keep_raw=two / "raw.jsonl")
    )
    assert outcome.summary == summary
    assert _files(one / "c.jsonl") == _files(two / "c.jsonl")
    assert len(_files(two / "c.jsonl")) == 3 and summary.redactions
    assert stat.S_IMODE((two / "raw.jsonl").stat().st_mode) == 0o600  # raw personal data


def test_chunks_of_any_size_write_the_same_files(tmp_path, monkeypatch):
    """The streamed pass is cut into parts: where it is cut changes nothing."""
    log = write_jsonl(tmp_path / "a.jsonl", [*RECORDS, *RECORDS[:4]])  # duplicates too
    whole = run_mine(MineRequest((log,), "openai-jsonl", tmp_path / "whole" / "c.jsonl"))
    monkeypatch.setattr(stage, "CHUNK", 3)
    cut = run_mine(MineRequest((log,), "openai-jsonl", tmp_path / "cut" / "c.jsonl"))
    assert cut.summary == whole.summary and whole.summary.duplicates["within_logs"] >= 4
    assert _files(tmp_path / "cut" / "c.jsonl") == _files(tmp_path / "whole" / "c.jsonl")


def test_a_file_a_part_then_finish_writes_what_run_mine_writes(tmp_path):
    """The flow's split: each file mined on its own (every case kept), merged in order."""
    logs = [write_jsonl(tmp_path / f"log-{n}.jsonl", RECORDS[n * 4 : n * 4 + 8]) for n in range(2)]
    request = MineRequest(
        tuple(logs), "openai-jsonl", tmp_path / "flow" / "c.jsonl", names=FLOW_NAMES
    )
    planned = stage.plan(request)
    assert not planned.is_stream()
    parts = [stage.mine_file_part(p, "openai-jsonl", planned.options) for p in planned.files]
    split = stage.finish(planned, parts)
    one = run_mine(MineRequest(tuple(logs), "openai-jsonl", tmp_path / "cli" / "c.jsonl"))
    assert split.summary == one.summary and one.summary.duplicates["within_logs"] >= 4
    assert _files(tmp_path / "flow" / "c.jsonl") == _files(tmp_path / "cli" / "c.jsonl")


def test_a_stream_mined_part_after_part_then_finish_writes_what_run_mine_writes(tmp_path):
    lines = interleaved([model_calls(until_last_reply(r)) for r in RECORDS[:6]])
    half = len(lines) // 2
    logs = [write_jsonl(tmp_path / "calls-1.jsonl", lines[:half])]
    logs.append(write_jsonl(tmp_path / "calls-2.jsonl", lines[half:]))
    planned = stage.plan(MineRequest(tuple(logs), "openai-jsonl", tmp_path / "flow" / "c.jsonl"))
    assert planned.is_stream()
    parts, state = [], None
    for path in [*planned.files, None]:
        part, state = stage.mine_stream_part(path, "openai-jsonl", state, planned.options)
        parts.append(part)
    split = stage.finish(planned, parts)
    one = run_mine(MineRequest(tuple(logs), "openai-jsonl", tmp_path / "cli" / "c.jsonl"))
    assert split.summary == one.summary and one.summary.conversations_read == 6
    assert _files(tmp_path / "flow" / "c.jsonl") == _files(tmp_path / "cli" / "c.jsonl")


def test_cases_already_in_the_corpus_are_not_written_again(tmp_path):
    log = write_jsonl(tmp_path / "a.jsonl", RECORDS)
    first = mine([log], "openai-jsonl")
    store = CorpusStore(tmp_path / "corpus")
    store.add_version(approved(*first.cases[:3]), note="mined earlier")
    outcome = run_mine(_request(tmp_path, [log], corpus=tmp_path / "corpus"))
    assert outcome.summary.duplicates == {"corpus": 3}
    ids = [json.loads(line)["id"] for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert ids == [c.id for c in first.cases[3:]]


def test_the_workers_function_is_given_the_logs_total_bytes(tmp_path):
    log = write_jsonl(tmp_path / "a.jsonl", RECORDS[:2])
    asked = []
    planned = stage.plan(_request(tmp_path, [log], workers=lambda total: asked.append(total) or 1))
    assert asked == [log.stat().st_size] == [planned.total_bytes]
    assert planned.options.workers == 1 and planned.options.dedup is False


def test_progress_is_told_the_bytes_read_of_the_total(tmp_path):
    log = write_jsonl(tmp_path / "a.jsonl", RECORDS)
    told = []
    run_mine(_request(tmp_path, [log]), progress=lambda n, total: told.append((n, total)))
    size = log.stat().st_size
    assert told[0] == (0, size) and {t for _, t in told} == {size}
    assert sum(n for n, _ in told) == size


def test_an_interrupted_run_leaves_no_file(tmp_path):
    log = write_jsonl(tmp_path / "a.jsonl", RECORDS)

    def interrupt(n: int, total: int) -> None:
        if n:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_mine(_request(tmp_path, [log], keep_raw=tmp_path / "raw.jsonl"), progress=interrupt)
    assert os.listdir(tmp_path) == ["a.jsonl"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"fmt": "bogus"}, "--format 'bogus' is not one of openai-jsonl"),
        ({"fmt": "bogus", "names": FLOW_NAMES}, "unknown log format 'bogus'; known: openai-jsonl"),
        ({"logs": ["."]}, "a folder, not a log file: ."),
        ({"logs": ["nowhere.jsonl"]}, "no such log file: nowhere.jsonl"),
        ({"redact": False, "keep_raw": "raw.jsonl"}, "--keep-raw only makes sense with redaction"),
        ({"csv_mapping": "m.json"}, "--csv-mapping applies to --format csv only"),
        ({"corpus": "corpsu"}, "--corpus corpsu: no such corpus folder"),
        ({"corpus": "corpsu", "names": FLOW_NAMES}, "corpus_dir corpsu: no such corpus folder"),
        ({"out": "a.jsonl"}, "--out a.jsonl is also a log"),
        ({"quarantine": "a.jsonl"}, "--quarantine a.jsonl is also a log"),
        ({"out": "a.jsonl", "names": FLOW_NAMES}, "out a.jsonl is also a log"),
        ({"keep_raw": "c.jsonl"}, "--keep-raw c.jsonl is also --out"),
        ({"tools": "tools.json"}, "tools.json: cannot read the tools file"),
    ],
)
def test_bad_inputs_are_refused_before_anything_is_mined(tmp_path, monkeypatch, change, message):
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "a.jsonl", RECORDS[:2])
    fields = {"logs": ["a.jsonl"], "fmt": "openai-jsonl", "out": "c.jsonl", **change}
    fields["logs"] = tuple(Path(p) for p in fields["logs"])
    for name in ("out", "quarantine", "keep_raw", "corpus", "csv_mapping", "tools"):
        if isinstance(fields.get(name), str):
            fields[name] = Path(fields[name])
    with pytest.raises(UserError, match=f"^{message}"):
        run_mine(MineRequest(**fields))
    assert os.listdir(tmp_path) == ["a.jsonl"]


def test_logs_of_another_format_are_a_problem_an_empty_log_is_nothing_found(tmp_path):
    log = write_jsonl(tmp_path / "a.jsonl", RECORDS[:3])
    wrong = run_mine(_request(tmp_path, [log], fmt="transcript"))
    assert not wrong.nothing_found
    problem = wrong.unread_problem()
    assert problem is not None and problem.startswith("no conversation could be read: all 3 ")
    assert problem.endswith("are the logs in --format transcript?")
    empty = write_jsonl(tmp_path / "empty.jsonl", [])
    nothing = run_mine(MineRequest((empty,), "openai-jsonl", tmp_path / "e.jsonl"))
    assert nothing.nothing_found and nothing.unread_problem() is None
    assert (tmp_path / "e.jsonl").read_bytes() == b""


KILLED_MINE = """
import os, signal, sys
from pathlib import Path
from casemill.mining.stage import MineRequest, run_mine

def kill(n, total):
    if n:
        os.kill(os.getpid(), signal.SIGKILL)

run_mine(MineRequest((Path(sys.argv[1]),), "openai-jsonl", Path(sys.argv[2])), progress=kill)
"""


def test_the_temporary_files_of_a_killed_run_are_removed_by_the_next(tmp_path):
    """`kill -9` mid-run leaves the hidden temporary files beside the outputs; the next run
    writing them removes them, and writes what a run that was never killed writes."""
    log = write_jsonl(tmp_path / "a.jsonl", RECORDS)
    out = tmp_path / "out" / "c.jsonl"
    killed = subprocess.run([sys.executable, "-c", KILLED_MINE, str(log), str(out)], check=False)
    assert killed.returncode == -9
    assert sorted(p.name.endswith(".tmp") for p in out.parent.iterdir()) == [True, True]
    run_mine(_request(out.parent, [log]))
    clean = tmp_path / "clean"
    clean.mkdir()
    run_mine(_request(clean, [log]))
    assert _files(out) == _files(clean / "c.jsonl")
