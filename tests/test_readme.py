"""The README's commands, run in order on a clean clone, leave the clone as git found it
(`git status --porcelain` empty): they write under scratch/ or ignored folders, and the tracked
corpus is only read. The commands that serve (`review serve`, `serve`), that need a model
endpoint (`openai:MODEL`) or data outside the clone (tau2-bench's files) are left out."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LEFT_OUT = ("review serve", "casemill serve", "openai:MODEL", "../shared/data")

pytestmark = pytest.mark.slow


def readme_commands() -> list[str]:
    """The commands of the README's command-line block, comments cut."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## The command line") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def test_the_commands_are_found_and_the_ones_left_out_say_why():
    commands = readme_commands()
    assert commands[0].startswith("mkdir -p scratch")
    kept = [c for c in commands if not any(x in c for x in LEFT_OUT)]
    assert len(kept) >= 10
    outputs = [m.group(1) for c in commands for m in re.finditer(r" -o (\S+)", c)]
    assert len(outputs) >= 8 and all(o.startswith("scratch/") for o in outputs)


def test_the_readme_commands_leave_a_clean_clone_clean(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("needs git")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    cli = f"{sys.executable} -m casemill"
    ran = []
    for command in readme_commands():
        if any(x in command for x in LEFT_OUT):
            continue
        line = command.replace("uv run casemill", cli)
        done = subprocess.run(
            ["bash", "-c", line], cwd=clone, capture_output=True, text=True, timeout=600
        )
        assert done.returncode in (0, 1), f"{command}: {done.returncode}\n{done.stderr[-2000:]}"
        ran.append(command)
    assert len(ran) >= 10
    assert (clone / "scratch" / "runs" / "ref" / "report.html").is_file()
    assert (clone / "scratch" / "compare.html").is_file()
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""
