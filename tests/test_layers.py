"""The import contracts of pyproject.toml ([tool.importlinter]) hold: the command line and the
flows above the stages, the stages independent of one another above the core, no cycles between
casemill's packages. `lint-imports` runs in a subprocess, as CI and a developer run it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(cwd: Path, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(config)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_import_contracts_are_kept():
    done = lint_imports(ROOT, ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 2 kept, 0 broken." in done.stdout


BROKEN = {
    "an import up from the core, inside a function": (
        {"case/ids.py": "def _late():\n    from casemill.mining import output\n"},
        ["casemill.case is not allowed to import casemill.mining"],
    ),
    "one stage importing another": (
        {"review/diff.py": "import casemill.evaluation.gate\n"},
        ["casemill.review is not allowed to import casemill.evaluation"],
    ),
    # corpus imports text: text importing corpus back closes a cycle the layers alone allow
    "a cycle inside the core": (
        {"text.py": "def _late():\n    import casemill.corpus\n"},
        [
            "cli and flows above the stages above the core KEPT",
            "No cycles are allowed in casemill.",
            "- .text -> .corpus (1 import)",
        ],
    ),
    "a new module without a layer": (
        {"newcomer.py": '"""Not yet given a layer."""\n'},
        ["casemill.newcomer"],
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("what", list(BROKEN))
def test_the_contracts_catch(tmp_path, what):
    """The contracts are not vacuous: each edit (code appended to a copy of the package) breaks
    one, and lint-imports names it."""
    edits, expected = BROKEN[what]
    shutil.copytree(ROOT / "casemill", tmp_path / "casemill", symlinks=True)
    for module, code in edits.items():
        path = tmp_path / "casemill" / module
        before = path.read_text(encoding="utf-8") if path.exists() else ""
        path.write_text(before + "\n\n" + code, encoding="utf-8")
    done = lint_imports(tmp_path, ROOT / "pyproject.toml")
    assert done.returncode == 1, done.stdout
    for text in expected:
        assert text in done.stdout
