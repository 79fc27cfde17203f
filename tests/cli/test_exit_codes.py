"""Exit codes a script can rely on: an internal error (a bug) exits 3 with its traceback in a
log file whose path is shown, not on screen; `mine` and `import` share one rule (exit 1 when a
record was quarantined, the good ones written)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import casemill.cli as cli

ROOT = Path(__file__).resolve().parents[2]


def test_an_internal_error_exits_3_with_the_traceback_in_a_log(monkeypatch, tmp_path, capsys):
    def broken() -> None:
        raise KeyError("c_0123")

    monkeypatch.setattr(cli, "app", broken)
    monkeypatch.setenv("CASEMILL_CRASH_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == cli.INTERNAL_ERROR == 3
    (log,) = tmp_path.glob("casemill-crash-*.log")
    screen = capsys.readouterr().err
    assert "internal error" in screen and "KeyError" in screen
    assert str(log) in "".join(screen.split())  # the path, however the console wrapped it
    assert "Traceback" not in screen
    text = log.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text and "KeyError: 'c_0123'" in text
    assert log.stat().st_mode & 0o077 == 0  # a traceback can quote the data: owner only


def test_a_user_error_still_exits_2(monkeypatch, capsys):
    from casemill.errors import UserError

    def refused() -> None:
        raise UserError("seeds.jsonl: no such file")

    monkeypatch.setattr(cli, "app", refused)
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 2
    assert "no such file" in capsys.readouterr().err


def mined_exit(tmp_path: Path, lines: list[str]) -> int:
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "casemill", "mine", str(log), "-f", "openai-jsonl"]
        + ["-o", str(tmp_path / "out.jsonl"), "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert "Traceback" not in done.stderr
    return done.returncode


GOOD = json.dumps(
    {
        "conversation_id": "a",
        "resolved": True,
        "messages": [
            {"role": "user", "content": "Where is my order?"},
            {"role": "assistant", "content": "It has shipped."},
        ],
    }
)


def test_mine_exits_1_when_a_record_was_quarantined_as_import_does(tmp_path):
    assert mined_exit(tmp_path, [GOOD]) == 0
    assert mined_exit(tmp_path, [GOOD, '{"conversation_id": "b", "messages": [']) == 1
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8").strip()  # the good one written
