"""`casemill review export` killed with SIGKILL at every step of its work, then the documented
recovery (`casemill review export --take-over`): queue and corpus agree, and no rejected case is
active in the corpus, whatever reviewers tried in between."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from review_factory import child_case, seed_case
from typer.testing import CliRunner

from casemill.cli import app
from casemill.corpus import CorpusStore
from casemill.review.errors import DecisionBlocked
from casemill.review.items import ItemFilter
from casemill.review.schema import make_engine
from casemill.review.store import ReviewStore

APPROVED = 10  # 10 claims, 2 corpus files, 10 marks, the close: 26 steps
KILLER = Path(__file__).with_name("export_killer.py")
ROOT = Path(__file__).parents[2]


def _queue(db_url: str) -> ReviewStore:
    """A batch of APPROVED approved cases and one rejected."""
    store = ReviewStore(make_engine(db_url))
    parent = seed_case()
    cases = [child_case(parent, n) for n in range(APPROVED + 1)]
    store.enqueue(cases, "b1", parents={parent.id: parent})
    for case in cases[:APPROVED]:
        store.approve(case.id, "ana", None)
    store.reject(cases[APPROVED].id, "ana", None, reason="wrong label")
    return store


def _kill_export_at(step: int, db_url: str, corpus: Path) -> int:
    """Run the export in a subprocess that kills itself at `step`; its return code."""
    env = {**os.environ, "KILL_AT": str(step), "CASEMILL_REVIEWER": "exporter"}
    args = [sys.executable, str(KILLER), "--batch", "b1", "--db", db_url, "--corpus", str(corpus)]
    return subprocess.run(args, env=env, cwd=ROOT, capture_output=True, timeout=120).returncode


def _reviewer_takes_back(store: ReviewStore) -> int:
    """A reviewer undoes and rejects every approved case the queue lets them; how many."""
    taken = 0
    for item in store.list(ItemFilter(batch_id="b1", status="approved")):
        try:
            store.undo(item.case_id, "bob", None)
        except DecisionBlocked:
            continue
        store.reject(item.case_id, "bob", None, reason="changed my mind")
        taken += 1
    return taken


def _check_agree(store: ReviewStore, corpus: CorpusStore) -> None:
    """Queue and corpus agree, and no rejected case is active in the corpus."""
    active = corpus.active_ids()
    for item in store.list(ItemFilter(batch_id="b1")):
        exported = item.status == "approved" and item.exported_at is not None
        assert (item.case.id in active) == exported, (item.case_id, item.status)
        assert item.lease_holder is None
    assert all(c.review.status == "approved" for c in corpus.cases())


def _recover(db_url: str, corpus: Path) -> None:
    """The documented recovery: a plain re-run names the dead export when its claim is left;
    `--take-over` finishes its job."""
    runner = CliRunner()
    base = ["review", "export", "--batch", "b1", "--db", db_url, "--corpus", str(corpus)]
    plain = runner.invoke(app, base)
    if plain.exit_code != 0:
        assert "being exported by another export" in str(plain.exception)
        assert "--take-over" in str(plain.exception)
        result = runner.invoke(app, [*base, "--take-over"], catch_exceptions=False)
        assert result.exit_code == 0, result.output


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_export_killed_at_any_step_is_recovered(backend, request, tmp_path):
    steps = range(1, 28) if backend == "sqlite" else (1, 5, 11, 12, 13, 15, 19, 26)
    killed = 0
    for step in steps:
        db_url = (
            f"sqlite:///{tmp_path / f'q{step}.db'}"
            if backend == "sqlite"
            else request.getfixturevalue("pg_url")
        )
        if backend == "postgresql":
            _empty_queue(db_url)
        corpus = tmp_path / f"corpus{step}"
        corpus.mkdir()
        store = _queue(db_url)
        code = _kill_export_at(step, db_url, corpus)
        killed += code == -signal.SIGKILL
        taken = _reviewer_takes_back(store)
        assert not (CorpusStore(corpus).active_ids() & _rejected(store)), step
        _recover(db_url, corpus)
        _check_agree(store, CorpusStore(corpus))
        status = store.batch_status("b1")
        assert (status.closed, status.exported, status.rejected) == (
            True,
            APPROVED - taken,
            1 + taken,
        )
        store.engine.dispose()
    assert killed >= (20 if backend == "sqlite" else len(steps))


def _rejected(store: ReviewStore) -> set[str]:
    return {i.case.id for i in store.list(ItemFilter(batch_id="b1", status="rejected"))}


def _empty_queue(db_url: str) -> None:
    """An empty queue in the PostgreSQL schema of the test (one schema per test, so it is
    emptied between steps)."""
    from sqlalchemy import text

    engine = ReviewStore(make_engine(db_url)).engine
    with engine.begin() as conn:
        for table in ("review_audit", "review_items", "review_batches"):
            conn.execute(text(f"DELETE FROM {table}"))
    engine.dispose()
