"""`casemill validate` streams its input: each record is checked as it is read, no case is kept,
and the batch suite works on a few scalars a case. Its outputs are those of the validator that
held every case: the golden files beside this test (`golden/stream_*`) were written by
`casemill validate` before it streamed, on `golden/stream_first.jsonl` and
`golden/stream_second.jsonl` (every layer, duplicates within and across files, lint warnings on
records the batch refuses, a BOM, CRLF endings, invalid UTF-8, a blank line)."""

from __future__ import annotations

import gc
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from fixtures.casebuild import cancel_case, clarify_case, line, record, refund_case

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.validation import (
    BatchColumns,
    BatchRules,
    Row,
    validate_paths,
    write_quarantine,
)
from casemill.validation.batch import _row, _write_tools, build_frames

GOLDEN = Path(__file__).resolve().parent / "golden"
INPUTS = ("stream_first.jsonl", "stream_second.jsonl")
ARGS = ["validate", "in/stream_second.jsonl", "in/stream_first.jsonl", "--quarantine", "q.jsonl"]


def _inputs(folder: Path) -> Path:
    (folder / "in").mkdir(parents=True)
    for name in INPUTS:
        shutil.copy(GOLDEN / name, folder / "in" / name)
    return folder


def _casemill(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "120"}
    return subprocess.run(
        [sys.executable, "-m", "casemill.cli", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )


def _without_seconds(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "seconds"}


@pytest.mark.slow
def test_json_report_and_quarantine_are_the_golden_ones(tmp_path):
    folder = _inputs(tmp_path)
    done = _casemill(folder, *ARGS, "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    golden = json.loads((GOLDEN / "stream_report.json").read_text(encoding="utf-8"))
    assert _without_seconds(report) == golden
    assert (folder / "q.jsonl").read_bytes() == (GOLDEN / "stream_quarantine.jsonl").read_bytes()
    batch = [(f["file"], f["line"], f["rule"]) for f in report["findings"] if f["layer"] == "batch"]
    assert ("in/stream_first.jsonl", 9, "allowed-intent") in batch  # the GE suite still ran
    assert ("in/stream_first.jsonl", 18, "text-length") in batch


@pytest.mark.slow
def test_human_output_is_the_golden_one(tmp_path):
    folder = _inputs(tmp_path)
    done = _casemill(folder, *ARGS)
    assert done.returncode == 1, done.stderr
    assert done.stdout == (GOLDEN / "stream_human.txt").read_text(encoding="utf-8")
    assert (folder / "q.jsonl").read_bytes() == (GOLDEN / "stream_quarantine.jsonl").read_bytes()


def _damaged_gzip(path: Path) -> Path:
    good = line(refund_case("W1030")) + "{nope\n" + line(cancel_case("W1031"))
    path.write_bytes(gzip.compress(good.encode()) + gzip.compress(b"\n" * 50_000)[:30])
    return path


def _no_write_cases(path: Path, n: int) -> Path:
    """`n` robustness cases that expect no write call: a no-write share of 100%."""
    rows = []
    for k in range(n):
        data = record(clarify_case())
        data["id"] = ""
        data["conversation"][1]["content"] += f" (ticket {k})"
        rows.append(line(data))
    path.write_text("".join(rows), encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_streamed_report_is_the_report_that_keeps_every_case(tmp_path):
    folder = _inputs(tmp_path)
    paths = [
        folder / "in",
        _damaged_gzip(folder / "z.jsonl.gz"),
        _no_write_cases(folder / "share.jsonl", 3),
    ]
    rules = BatchRules(min_category_cases=1, no_write_share={"robustness": (0.0, 0.5)})
    kept = validate_paths(paths, rules=rules)
    streamed = validate_paths(paths, rules=rules, keep_records=False)
    assert _without_seconds(streamed.as_dict()) == _without_seconds(kept.as_dict())
    assert streamed.valid_count == len(kept.valid) > 0
    assert [(f.rule, f.line) for f in streamed.batch_issues] == [("no-write-share", None)]
    assert (
        "100% of the 4 'robustness' cases expect no write call" in streamed.batch_issues[0].message
    )
    assert {f.rule for b in streamed.bad for f in b.findings} >= {"invalid-gzip", "no-dialogue"}
    write_quarantine(kept, tmp_path / "kept.jsonl")
    write_quarantine(streamed, tmp_path / "streamed.jsonl")
    assert (tmp_path / "streamed.jsonl").read_bytes() == (tmp_path / "kept.jsonl").read_bytes()


def _live_cases() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, Case))


@pytest.mark.slow
def test_a_streamed_report_holds_no_case_and_no_record_bytes(tmp_path):
    folder = _inputs(tmp_path)
    before = _live_cases()
    report = validate_paths([folder / "in"], keep_records=False)
    assert _live_cases() == before
    assert report.valid == [] and report.valid_count == 9 and report.records_kept is False
    assert report.bad and all(b.raw == b"" and b.raw_crc is not None for b in report.bad)
    with pytest.raises(ValueError, match="kept no cases"):
        _ = report.cases


def _numbered(n: int, start: int) -> list[str]:
    return [line(refund_case(f"W{start + k}")) for k in range(n)]


def test_duplicates_are_found_across_the_whole_input(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    cases = _numbered(150, 2000)
    first.write_text("".join(cases) + cases[0], encoding="utf-8")  # line 151 repeats line 1
    second.write_text(_numbered(1, 3000)[0] + cases[99], encoding="utf-8")  # line 2: line 100
    report = validate_paths([first, second], batch=False, keep_records=False)
    found = [
        (b.file, b.line, f.rule, f.message.split(": ")[1]) for b in report.bad for f in b.findings
    ]
    assert found == [
        (str(first), 151, "duplicate-id", f"first seen at {first}:1 (kept there)"),
        (str(second), 2, "duplicate-id", f"first seen at {first}:100 (kept there)"),
    ]
    assert report.valid_count == 151
    write_quarantine(report, tmp_path / "q.jsonl")
    raws = [json.loads(x)["raw"] for x in (tmp_path / "q.jsonl").read_text().splitlines()]
    assert raws == [cases[0].rstrip("\n"), cases[99].rstrip("\n")]


def _generic_case(n: int) -> Case:
    """A case of a domain whose write tools are unknown: left out of the no-write share."""
    data = record(refund_case(f"W{2000 + n}"))
    data.update(domain="generic:calendar", id="")
    data["environment"] = {"state": {}, "faults": []}
    data["expected"]["tool_calls"] = [
        {"tool": "reschedule_meeting", "params": {"meeting_id": f"M-{n}"}}
    ]
    return Case.model_validate(data)


def test_the_batch_frames_are_those_built_from_the_whole_cases():
    cases = [refund_case(), cancel_case(), clarify_case(), _generic_case(1), _generic_case(2)]
    rows = [Row(c, "f.jsonl", k) for k, c in enumerate(cases, 1)]
    rules = BatchRules()
    frames = build_frames(BatchColumns.of(rows), rules)
    # how the suite's frames were built when every case was held
    records = [_row(c, _write_tools(c.domain)) for c in cases]
    intents = [
        {"row": k, "intent": i}
        for k, c in enumerate(cases)
        if c.domain in rules.intents
        for i in c.tags.intents
    ]
    pd.testing.assert_frame_equal(frames["cases"], pd.DataFrame.from_records(records))
    expected = pd.DataFrame.from_records(intents, columns=["row", "intent"])
    pd.testing.assert_frame_equal(frames["intents"], expected)
    assert frames["cases"]["no_write"].isna().tolist() == [False, False, False, True, True]


def test_columns_give_back_each_row_and_place():
    columns = BatchColumns.of([Row(refund_case(), "f.jsonl", 3), Row(cancel_case(), None, None)])
    assert len(columns) == 2
    assert columns.case_id(0) == refund_case().id
    assert columns.place(0) == ("f.jsonl", 3) and columns.place(1) == (None, None)
    assert list(zip(columns.intent_rows, columns.intent_names, strict=True)) == [
        (0, "refund"),
        (1, "cancel"),
    ]


def test_a_quarantine_of_a_file_changed_since_it_was_validated_is_refused(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(line(refund_case()) + "{x\n" + line(cancel_case()), encoding="utf-8")
    report = validate_paths([path], batch=False, keep_records=False)
    assert [b.line for b in report.bad] == [2]
    path.write_text(line(refund_case()) + "{y\n" + line(cancel_case()), encoding="utf-8")
    target = tmp_path / "q.jsonl"
    with pytest.raises(UserError, match=rf"{path}:2: the file changed"):
        write_quarantine(report, target)
    assert not target.exists()
