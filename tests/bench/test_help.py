"""Every benchmark script answers `--help` with its usage and a whole first paragraph of its
docstring, and does no work: `bench/pipeline_overhead.py --help` used to run the benchmark."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (ROOT / "bench").glob("*.py") if not p.name.startswith("_"))

sys.path.insert(0, str(ROOT / "bench"))
from _report import description  # noqa: E402


def test_description_is_the_first_paragraph_on_one_line() -> None:
    doc = "Scores a case set: the share\nof variants it catches.\n\n    uv run python x.py\n"
    assert description(doc) == "Scores a case set: the share of variants it catches."
    assert description(None) == ""


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_help_prints_usage_and_a_whole_sentence_and_runs_nothing(script: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(script), "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "1000"},  # argparse wraps at hyphens too
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {script.name}")
    said = " ".join(done.stdout.split("options:")[0].split("\n\n", 1)[1].split())
    assert said == description(script.read_text().split('"""')[1])
    assert said.endswith("."), said
    assert "FIGURE" not in done.stdout and "Prefect" not in done.stderr
