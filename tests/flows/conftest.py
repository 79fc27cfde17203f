"""Fixtures of the flow tests: a small seed set and a corpus made from it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from casemill.case.model import Case
from casemill.corpus import CorpusStore
from casemill.io.jsonl import atomic_write_jsonl, read_jsonl

ROOT = Path(__file__).resolve().parents[2]


def seed_cases(n: int) -> list[Case]:
    cases = [
        Case.model_validate(line.value) for line in read_jsonl(ROOT / "seeds" / "support.jsonl")
    ]
    return cases[:n]


@pytest.fixture
def small_seeds(tmp_path: Path) -> Path:
    path = tmp_path / "seeds" / "support.jsonl"
    atomic_write_jsonl(path, (c.model_dump(mode="json") for c in seed_cases(8)))
    return path.parent


@pytest.fixture
def small_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    CorpusStore(root).add_version(seed_cases(12), note="test corpus")
    return root


@pytest.fixture
def project_files(tmp_path: Path) -> Path:
    """A working folder holding the bundled sample log and gate, as a user's project would."""
    shutil.copytree(ROOT / "gates", tmp_path / "gates")
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    return tmp_path
