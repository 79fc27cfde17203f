"""`casemill review enqueue` checks its corpus (`--corpus`, else CASEMILL_CORPUS_DIR, else
./corpus) as `review export` does, before anything is queued: a missing folder or a folder that
is not a corpus is refused with exit code 2, naming the path and the fix; nothing is enqueued,
no queue database and no quarantine file is made. A real corpus, or an empty folder made to
start one, is used: parents are looked up in it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.casebuild import approved
from review_factory import child_case, seed_case
from typer.testing import CliRunner

from casemill.cli import app
from casemill.corpus import CorpusStore
from casemill.errors import UserError
from casemill.io.jsonl import dumps_line
from casemill.review.store import ReviewStore

runner = CliRunner()


def _candidates(tmp_path: Path) -> Path:
    """Two children of the seed and one bad line (which would go to a quarantine file)."""
    parent = seed_case()
    file = tmp_path / "cands.jsonl"
    lines = [dumps_line(child_case(parent, n).model_dump(mode="json")) for n in range(2)]
    file.write_text(lines[0] + "{truncated\n" + lines[1])
    return file


def _nothing_made(tmp_path: Path, db_file: Path) -> None:
    assert not db_file.exists()  # the queue was not even opened
    assert not (tmp_path / "cands.quarantine.jsonl").exists()


def test_enqueue_with_no_corpus_in_the_working_folder_is_refused_up_front(tmp_path):
    # run from the wrong folder, no --corpus, no CASEMILL_CORPUS_DIR: ./corpus is not there
    file = _candidates(tmp_path)
    db_file = tmp_path / "q.db"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CASEMILL_CORPUS_DIR"}
    proc = subprocess.run(
        [sys.executable, "-c", "from casemill.cli import main; main()"]
        + ["review", "enqueue", str(file), "--batch", "b1", "--db", f"sqlite:///{db_file}"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert " ".join(proc.stderr.split()) == (
        f"error: corpus_dir (settings) corpus: no such corpus folder (looked in "
        f"{elsewhere / 'corpus'}); run from the folder that holds the corpus, or name it with "
        f"--corpus DIR or CASEMILL_CORPUS_DIR; to start a new corpus there, create the folder "
        f"first (mkdir -p corpus)"
    )
    _nothing_made(tmp_path, db_file)
    assert list(elsewhere.iterdir()) == []


def _not_corpora(tmp_path: Path) -> dict[str, Path]:
    seeds = tmp_path / "seeds"  # case files, not a corpus: `casemill corpus add` makes one
    seeds.mkdir()
    (seeds / "support.jsonl").write_text(dumps_line(seed_case().model_dump(mode="json")))
    docs = tmp_path / "docs"  # a folder of anything else
    docs.mkdir()
    (docs / "notes.md").write_text("notes\n")
    return {"seeds": seeds, "docs": docs, "missing": tmp_path / "nope"}


@pytest.mark.parametrize(
    ("folder", "says"),
    [
        ("seeds", "not a corpus folder (no cases.jsonl, no manifests/), though it holds support"),
        ("docs", "not a corpus folder (no cases.jsonl, no manifests/), and not empty"),
        ("missing", "no such corpus folder"),
    ],
)
@pytest.mark.parametrize("named_by", ["--corpus", "CASEMILL_CORPUS_DIR"])
def test_enqueue_into_a_folder_that_is_not_a_corpus_is_refused_and_queues_nothing(
    tmp_path, monkeypatch, folder, says, named_by
):
    file = _candidates(tmp_path)
    db_file = tmp_path / "q.db"
    path = _not_corpora(tmp_path)[folder]
    args = ["review", "enqueue", str(file), "--batch", "b1", "--db", f"sqlite:///{db_file}"]
    if named_by == "--corpus":
        args += ["--corpus", str(path)]
        option = "--corpus"
    else:
        monkeypatch.setenv("CASEMILL_CORPUS_DIR", str(path))
        option = "corpus_dir (settings)"
    r = runner.invoke(app, args)
    assert isinstance(r.exception, UserError), r.output  # `casemill` prints it and exits 2
    assert str(r.exception).startswith(f"{option} {path}: {says}")
    _nothing_made(tmp_path, db_file)


def test_enqueue_uses_a_real_corpus_and_finds_parents_in_it(tmp_path, monkeypatch):
    file = _candidates(tmp_path)
    db = f"sqlite:///{tmp_path / 'q.db'}"
    corpus = tmp_path / "corpus"
    (parent,) = approved(seed_case())
    CorpusStore(corpus).add_version([parent], note="v1")
    monkeypatch.setenv("CASEMILL_CORPUS_DIR", str(corpus))
    monkeypatch.setenv("CASEMILL_SEEDS_DIR", str(tmp_path / "no-seeds"))  # the corpus alone
    r = runner.invoke(app, ["review", "enqueue", str(file), "--batch", "b1", "--db", db])
    assert r.exit_code == 0, r.output
    items = ReviewStore.open(db).list()
    assert len(items) == 2 and {i.parent.id for i in items} == {parent.id}


def test_enqueue_into_an_empty_folder_made_for_a_new_corpus_is_accepted(tmp_path):
    file = _candidates(tmp_path)
    db = f"sqlite:///{tmp_path / 'q.db'}"
    new = tmp_path / "new"
    new.mkdir()
    args = ["review", "enqueue", str(file), "--batch", "b1", "--corpus", str(new), "--db", db]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("batch b1: 2 added")
    assert len(ReviewStore.open(db).list()) == 2
    assert list(new.iterdir()) == []  # read, not written: the export writes the corpus
