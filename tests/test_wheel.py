"""A wheel built from the repository works on its own: installed into a fresh environment (the
locked dependencies, from uv's cache or the registry), `casemill demo --review auto` runs from an
empty folder on the data the package carries (casemill.bundled), and writes the corpus and the
report it prints."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UV = shutil.which("uv")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),  # a loaded machine: Prefect's first start alone can take a minute
    pytest.mark.skipif(UV is None, reason="needs uv on PATH (./dev installs it)"),
]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without this checkout's virtual environment or Prefect server."""
    drop = (
        "VIRTUAL_ENV",
        "PYTHONPATH",
        "PREFECT_API_URL",
        "PREFECT_HOME",
        "UV_PROJECT_ENVIRONMENT",
    )
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


def sh(*cmd: str | Path, cwd: Path = ROOT, timeout: float = 300) -> str:
    done = subprocess.run(
        [str(c) for c in cmd],
        cwd=cwd,
        env=clean_env(COLUMNS="400"),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{cmd} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel and the locked dependencies installed."""
    tmp = tmp_path_factory.mktemp("wheel")
    sh(UV, "build", "--wheel", "--out-dir", tmp / "dist", "--quiet")
    (wheel,) = (tmp / "dist").glob("casemill-*.whl")
    locked = tmp / "requirements.txt"
    sh(UV, "export", "--frozen", "--no-dev", "--no-hashes", "--no-emit-project", "-q", "-o", locked)
    venv = tmp / "venv"
    sh(UV, "venv", "--quiet", "--python", sys.executable, venv)
    sh(UV, "pip", "install", "--quiet", "--python", venv / "bin" / "python", "-r", locked, wheel)
    return venv


def test_the_wheel_carries_its_data_and_the_checkout_plays_no_part(installed, tmp_path):
    probe = (
        "import casemill, casemill.validation.schema as s; from casemill.bundled import "
        "data_path; print(casemill.__file__); print(s.CASE_SCHEMA_PATH); "
        "print(data_path('gates', 'default.toml'))"
    )
    lines = sh(installed / "bin" / "python", "-c", probe, cwd=tmp_path).splitlines()
    site = installed.resolve()
    for line in lines:
        assert Path(line).is_file() and Path(line).resolve().is_relative_to(site), line
    assert Path(lines[1]).read_bytes() == (ROOT / "schemas" / "case.schema.json").read_bytes()


def test_demo_runs_from_an_empty_folder(installed, tmp_path):
    out = sh(
        installed / "bin" / "casemill",
        "demo",
        "--review",
        "auto",
        "--agents",
        "reference",  # the faulty variants add minutes and nothing this test checks
        cwd=tmp_path,
        timeout=600,
    )
    corpus = re.search(r"^corpus\s+(\S+)/\s+version (v\d+).*\(manifest (\S+)\)", out, re.M)
    assert corpus, out
    assert (tmp_path / corpus[1] / "cases.jsonl").is_file()
    assert (tmp_path / corpus[3]).is_file() and corpus[2] != "v0001"  # a new version was made
    report = re.search(r"^report\s+reference: task success .*\n\s+(\S+/report\.html)$", out, re.M)
    assert report, out
    assert (tmp_path / report[1]).is_file()
