"""`casemill.io.jsonl`: line decoding and its error messages; atomic writes and file modes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from casemill.io.jsonl import atomic_write_jsonl, decode_line, read_jsonl, where


def test_an_unterminated_string_is_placed_without_a_doubled_at() -> None:
    line = decode_line("f.jsonl", 3, b'{"a": "b')
    assert line is not None and line.value is None
    assert line.error == "not valid JSON: Unterminated string starting at column 7"


def test_other_json_errors_read_at_column() -> None:
    line = decode_line("f.jsonl", 1, b'{"a" 1}')
    assert line is not None
    assert line.error == "not valid JSON: Expecting ':' delimiter at column 6"


def test_where_adds_at_only_when_the_message_lacks_it() -> None:
    assert where("Expecting value", "line", 4) == "Expecting value at line 4"
    assert where("Unterminated string starting at", "line", 4) == (
        "Unterminated string starting at line 4"
    )


def test_a_gzip_cut_short_keeps_the_lines_before_and_ends_in_an_error_line(tmp_path) -> None:
    import gzip

    lines = b"".join(b'{"n": %d, "pad": "%s"}\n' % (n, b"x" * 200) for n in range(1, 41))
    whole = gzip.compress(lines)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    read = list(read_jsonl(cut))
    good, last = read[:-1], read[-1]
    assert [line.value["n"] for line in good] == list(range(1, len(good) + 1))
    assert last.number == len(good) + 1 and last.value is None
    assert last.error.startswith("unreadable gzip data: EOFError: ")


def test_gzip_data_is_read_whatever_the_file_is_named(tmp_path) -> None:
    import gzip

    packed = tmp_path / "cases.jsonl"
    packed.write_bytes(gzip.compress(b'{"n": 1}\n{"n": 2}\n'))
    assert [line.value for line in read_jsonl(packed)] == [{"n": 1}, {"n": 2}]
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(packed.read_bytes()[:-12])  # cut short: an error line, not a traceback
    assert list(read_jsonl(cut))[-1].error.startswith("unreadable gzip data: EOFError")


def test_a_gz_file_that_is_no_gzip_is_one_error_line(tmp_path) -> None:
    fake = tmp_path / "fake.jsonl.gz"
    fake.write_text('{"n": 1}\n')
    (line,) = read_jsonl(fake)
    assert (line.number, line.error) == (
        1,
        "unreadable gzip data: BadGzipFile: Not a gzipped file (b'{\"')",
    )


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_atomic_write_gives_a_new_file_the_umask_mode_not_owner_only(tmp_path, umask_022):
    """The corpus, candidates and reports are read by other users on a team's machine (the
    web app, workers, reviewers): a temporary file's 0600 must not become theirs."""
    path = atomic_write_jsonl(tmp_path / "cases.jsonl", [{"id": "a"}])
    assert _mode(path) == 0o644 and path.read_text() == '{"id":"a"}\n'


def test_an_atomic_rewrite_keeps_the_mode_the_file_had(tmp_path, umask_022):
    path = tmp_path / "cases.jsonl"
    path.write_text("{}\n")
    path.chmod(0o640)
    atomic_write_jsonl(path, [{"id": "b"}])
    assert _mode(path) == 0o640 and path.read_text() == '{"id":"b"}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["cases.jsonl"]  # no temporary file left


KILLED_WRITER = """
import os, signal, sys
from casemill.io.jsonl import atomic_write_jsonl

def records():
    for i in range(20_000):
        yield {"id": i, "text": "x" * 100}
    os.kill(os.getpid(), signal.SIGKILL)  # killed before the rename

atomic_write_jsonl(sys.argv[1], records())
"""


def test_a_write_killed_before_its_rename_is_cleaned_by_the_next_write(tmp_path):
    target = tmp_path / "candidates.jsonl"
    target.write_text('{"id":"old"}\n')
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target)], check=False)
    assert killed.returncode == -9
    [left] = _temps(tmp_path)
    assert (tmp_path / left).stat().st_size > 2_000_000  # megabytes, as in the probe
    assert target.read_text() == '{"id":"old"}\n'  # the target itself is untouched
    atomic_write_jsonl(target, [{"id": "new"}])
    assert _temps(tmp_path) == [] and target.read_text() == '{"id":"new"}\n'


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))
