"""`casemill.io.tempfiles`: a writer killed mid-write leaves its temporary file; the next write
of the same target removes it, and nothing else (another target's, a live writer's)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from casemill.io import tempfiles
from casemill.io.tempfiles import MACHINE, STALE_AFTER_HOURS, remove_stale_temps, temp_beside


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def _touch(path: Path, hours_old: float = 0.0) -> Path:
    path.write_text("partial")
    when = time.time() - hours_old * 3600
    os.utime(path, (when, when))
    return path


def test_only_the_targets_own_stale_temps_are_removed(tmp_path):
    target = tmp_path / "c.jsonl"
    dead = _spawned_and_reaped_pid()
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as live:
        try:
            files = {
                "dead writer": _touch(tmp_path / f".c.jsonl.{dead}-{MACHINE}.abcd_123.tmp"),
                "live writer": _touch(tmp_path / f".c.jsonl.{live.pid}-{MACHINE}.efgh_456.tmp"),
                "other machine": _touch(tmp_path / f".c.jsonl.{dead}-0000beef.ijkl_789.tmp"),
                "unnamed, fresh": _touch(tmp_path / ".c.jsonl.mnop0123.tmp"),
                "unnamed, old": _touch(
                    tmp_path / ".c.jsonl.qrst4567.tmp", hours_old=STALE_AFTER_HOURS + 1
                ),
                "other target": _touch(tmp_path / f".c.jsonl.gz.{dead}-{MACHINE}.uvwx8901.tmp"),
                "not a temp": _touch(tmp_path / f".c.jsonl.{dead}-{MACHINE}.abcd_123.tmp.keep"),
            }
            removed = remove_stale_temps(target)
        finally:
            live.kill()
    gone = sorted(k for k, p in files.items() if not p.exists())
    assert gone == ["dead writer", "unnamed, old"]
    assert sorted(removed) == sorted([files["dead writer"], files["unnamed, old"]])


def test_a_live_writers_temp_goes_only_once_unwritten_for_the_limit(tmp_path):
    target = tmp_path / "c.jsonl"
    mine = _touch(tmp_path / f".c.jsonl.{os.getpid()}-{MACHINE}.abcd_123.tmp")
    assert remove_stale_temps(target) == [] and mine.exists()
    later = time.time() + (STALE_AFTER_HOURS + 1) * 3600
    assert remove_stale_temps(target, now=later) == [mine]


def test_a_new_temp_names_its_writer_and_this_machine(tmp_path):
    fd, tmp = temp_beside(tmp_path / "c.jsonl")
    os.close(fd)
    assert tmp.parent == tmp_path
    assert tmp.name.startswith(f".c.jsonl.{os.getpid()}-{MACHINE}.") and tmp.name.endswith(".tmp")
    assert tempfiles._pattern(tmp_path / "c.jsonl").fullmatch(tmp.name)


@pytest.mark.parametrize("name", ["c.jsonl", "a+b (1).jsonl", "x.*.tmp"])
def test_names_with_pattern_characters_match_only_their_own_temps(tmp_path, name):
    fd, tmp = temp_beside(tmp_path / name)
    os.close(fd)
    assert tempfiles._pattern(tmp_path / name).fullmatch(tmp.name)
    assert not tempfiles._pattern(tmp_path / "c.json").fullmatch(tmp.name)


def _spawned_and_reaped_pid() -> int:
    """The pid of a process that has ended (and been reaped, so it is no zombie)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)
