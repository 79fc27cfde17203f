"""The review stage without Prefect and without the CLI: `run_enqueue` and `run_export` check
their inputs, fill the queue and the corpus, and say what they did; the flow's pieces
(`check_enqueue`, `enqueue_part`) give the same queue as `run_enqueue`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.casebuild import approved
from review_factory import guessed_case, invalid_case
from sqlalchemy import select

from casemill.corpus import CorpusStore
from casemill.errors import UserError
from casemill.io.jsonl import atomic_write_jsonl, dumps_line
from casemill.review.export import export_batch
from casemill.review.schema import audit, items
from casemill.review.stage import (
    EnqueueOutcome,
    EnqueueRequest,
    ExportRequest,
    check_enqueue,
    enqueue_part,
    nothing_to_review_message,
    parent_lookup,
    run_enqueue,
    run_export,
    target_corpus,
)
from casemill.review.store import ReviewStore


@pytest.fixture
def seeds(tmp_path, monkeypatch, parent) -> Path:
    """A seeds folder holding the parent, as the settings' seeds folder."""
    folder = tmp_path / "seeds"
    folder.mkdir()
    atomic_write_jsonl(folder / "s.jsonl", [parent.model_dump(mode="json")])
    monkeypatch.setenv("CASEMILL_SEEDS_DIR", str(folder))
    return folder


def candidates(path: Path, cases, bad_lines: tuple[str, ...] = ()) -> Path:
    lines = [dumps_line(c.model_dump(mode="json")) for c in cases]
    path.write_text("".join(lines) + "".join(f"{b}\n" for b in bad_lines))
    return path


def db(tmp_path: Path, name: str = "q") -> str:
    return f"sqlite:///{tmp_path / name}.db"


def queued(tmp_path: Path, cases, batch_id: str = "b") -> tuple[str, ReviewStore]:
    """A queue holding `cases` in `batch_id`, by `run_enqueue`: its URL and its store."""
    url = db(tmp_path)
    run_enqueue(EnqueueRequest(db_url=url, cases=tuple(cases), batch_id=batch_id))
    return url, ReviewStore.open(url)


def test_run_enqueue_queues_a_file_with_parents_and_quarantines_bad_lines(
    tmp_path, seeds, children
):
    file = candidates(tmp_path / "cands.jsonl", children[:3], ('{"id": 1}', "not json"))
    steps: list[str] = []
    request = EnqueueRequest(db_url=db(tmp_path), cases_path=file, batch_id="b1", actor="zoe")
    outcome = run_enqueue(request, progress=steps.append)

    assert outcome.summary() == {
        "batch": "b1",
        "added": 3,
        "already_queued": 0,
        "failing_validation": 0,
        "bad_lines": 2,
        "auto_approved": 0,
        "batch_made": True,
        "queued_in": [],
    }
    assert steps == [f"enqueueing {file}"]
    quarantined = [json.loads(x) for x in (tmp_path / "cands.quarantine.jsonl").open()]
    assert [q["line"] for q in quarantined] == [4, 5]
    store = ReviewStore.open(request.db_url)
    assert [i.case_id for i in store.list()] == [c.id for c in children[:3]]
    assert all(store.get(c.id).parent.id == c.provenance.parents[0] for c in children[:3])
    with store.engine.connect() as conn:
        actors = set(conn.execute(select(audit.c.actor)).scalars())
    assert actors == {"zoe"}


def test_run_enqueue_of_cases_with_the_auto_policy_approves_the_valid_ones(
    tmp_path, seeds, parent, children
):
    bad = invalid_case(parent, 9)
    cases = (*(c.model_dump(mode="json") for c in children[:2]), bad)
    steps: list[str] = []
    request = EnqueueRequest(db_url=db(tmp_path), cases=cases, batch_id="auto1", policy="auto")
    bar: list[tuple[int, int]] = []
    outcome = run_enqueue(request, progress=steps.append, bar=lambda *told: bar.append(told))

    assert bar == [(3, 3)]  # the cases validated, of all
    assert outcome.counts() == {
        "added": 3,
        "already_queued": 0,
        "invalid": 1,
        "quarantined": 0,
        "auto_approved": 2,
        "batch_made": True,
    }
    assert outcome.auto is not None and [s[0] for s in outcome.auto.skipped] == [bad.id]
    assert steps == ["enqueueing 3 cases", "applying the auto policy to batch auto1"]
    status = ReviewStore.open(request.db_url).batch_status("auto1")
    assert (status.approved, status.pending) == (2, 1)


def test_an_enqueue_of_cases_all_queued_elsewhere_makes_no_batch(tmp_path, seeds, children):
    url, _ = queued(tmp_path, children[:2], "first")
    again = run_enqueue(EnqueueRequest(db_url=url, cases=tuple(children[:2]), batch_id="second"))
    assert again.summary()["batch_made"] is False
    assert again.summary()["queued_in"] == ["first"]
    assert [b.batch_id for b in ReviewStore.open(url).batches()] == ["first"]
    assert nothing_to_review_message("second", again.counts()) == (
        "batch second: nothing to review, so no batch made (2 cases already queued in other "
        "batches, which export them, 0 bad lines); not waiting"
    )


def test_the_flow_pieces_and_run_enqueue_fill_the_queue_alike(tmp_path, seeds, children):
    """The CLI calls run_enqueue; the flow calls check_enqueue, then enqueue_part in a task:
    the same rows either way."""
    file = candidates(tmp_path / "cands.jsonl", children)
    one = EnqueueRequest(db_url=db(tmp_path, "one"), cases_path=file, batch_id="b")
    two = EnqueueRequest(
        db_url=db(tmp_path, "two"), cases_path=file, batch_id="b", corpus_option="corpus_dir"
    )
    run_enqueue(one)
    check_enqueue(two)
    enqueue_part(two)

    def rows(url: str) -> list[dict]:
        with ReviewStore.open(url).engine.connect() as conn:
            found = conn.execute(select(items).order_by(items.c.position)).mappings()
            return [{k: v for k, v in r.items() if k != "enqueued_at"} for r in found]

    assert rows(one.db_url) == rows(two.db_url)
    assert len(rows(one.db_url)) == 5


def test_parents_are_looked_up_in_named_files_else_the_seeds_and_the_corpus(
    tmp_path, seeds, empty_corpus
):
    named = tmp_path / "parents.jsonl"
    named.write_text("")
    request = EnqueueRequest(db_url="", cases=(), parents=(named,))
    assert parent_lookup(request)[0] == [named]
    sources, corpus = parent_lookup(EnqueueRequest(db_url="", cases=()))
    assert sources == [seeds] and corpus is not None and corpus.root == empty_corpus
    nowhere = EnqueueRequest(
        db_url="", cases=(), seeds_dir=tmp_path / "none", corpus_dir=tmp_path / "none"
    )
    assert parent_lookup(nowhere) == ([], None)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"policy": "robots"}, "policy must be one of human, auto, not 'robots'"),
        ({"cases": None}, "give exactly one of cases_path or cases"),
        ({"cases": None, "cases_path": Path("nowhere.jsonl")}, "cases_path nowhere.jsonl: no"),
        ({"batch_id": None}, "cases given as a list need a batch id"),
        ({"parents": (Path("nope"),)}, "--parents nope: no such file or folder"),
        ({"corpus_dir": Path("nowhere")}, "--corpus nowhere: no such corpus folder; to start"),
        (
            {"corpus_dir": Path("nowhere"), "corpus_option": "corpus_dir"},
            "corpus_dir nowhere: no such corpus folder (looked in ",
        ),
    ],
)
def test_check_enqueue_refuses_before_the_queue_is_touched(tmp_path, children, change, message):
    url = db(tmp_path)
    fields = {"db_url": url, "cases": tuple(children[:1]), "batch_id": "b", **change}
    with pytest.raises(UserError) as err:
        run_enqueue(EnqueueRequest(**fields))
    assert str(err.value).startswith(message)
    assert not (tmp_path / "q.db").exists()


def test_the_settings_corpus_is_named_as_such_when_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("CASEMILL_CORPUS_DIR", str(tmp_path / "gone"))
    with pytest.raises(UserError) as err:
        target_corpus(None)
    assert str(err.value).startswith(f"corpus_dir (settings) {tmp_path / 'gone'}: no such corpus")
    assert target_corpus(tmp_path).root == tmp_path  # an empty folder starts a corpus


def test_refuse_closed_refuses_a_closed_batch_even_without_new_cases(tmp_path, seeds, children):
    url = db(tmp_path)
    store = ReviewStore.open(url)
    store.enqueue(children[:1], "nightly")
    store.approve(children[0].id, "ana", None)
    export_batch(store, CorpusStore(tmp_path / "c"), "nightly")
    same = EnqueueRequest(db_url=url, cases=tuple(children[:1]), batch_id="nightly")
    assert run_enqueue(same).summary()["already_queued"] == 1  # the CLI: nothing new, no error
    closed = EnqueueRequest(
        db_url=url, cases=tuple(children[:1]), batch_id="nightly", refuse_closed=True
    )
    with pytest.raises(UserError, match="review batch 'nightly' is closed"):
        run_enqueue(closed)


def test_run_export_writes_the_approved_cases_as_a_corpus_version(
    tmp_path, seeds, children, empty_corpus
):
    url, store = queued(tmp_path, children[:3])
    store.approve(children[0].id, "ana", None)
    store.approve(children[1].id, "ana", None)
    store.reject(children[2].id, "ana", None, reason="dup")
    steps: list[str] = []
    outcome = run_export(ExportRequest(db_url=url, batch_id="b"), progress=steps.append)

    assert outcome.as_dict() == {
        "batch_id": "b",
        "corpus_version": 1,
        "added": [children[0].id, children[1].id],
        "already_in_corpus": [],
        "closed": True,
    }
    assert steps == [f"exporting to {empty_corpus}"]
    corpus = CorpusStore(empty_corpus)
    assert corpus.active_ids() == {children[0].id, children[1].id}
    assert store.get(children[0].id).corpus_version == 1
    again = run_export(ExportRequest(db_url=url, corpus_dir=empty_corpus))
    assert (again.corpus_version, again.added) == (None, ())


def test_run_export_refuses_a_corpus_it_cannot_write_before_marking_anything(
    tmp_path, seeds, parent, children
):
    url, store = queued(tmp_path, children[:1])
    store.approve(children[0].id, "ana", None)
    seeds_like = tmp_path / "cases"
    seeds_like.mkdir()
    atomic_write_jsonl(
        seeds_like / "x.jsonl", [c.model_dump(mode="json") for c in approved(parent)]
    )
    with pytest.raises(UserError, match=f"--corpus {seeds_like}: not a corpus folder"):
        run_export(ExportRequest(db_url=url, corpus_dir=seeds_like))
    assert store.get(children[0].id).exported_at is None


def test_a_guessed_label_is_not_auto_approved(tmp_path, seeds):
    guessed = guessed_case(1)
    outcome = run_enqueue(
        EnqueueRequest(db_url=db(tmp_path), cases=(guessed,), batch_id="g", policy="auto")
    )
    assert isinstance(outcome, EnqueueOutcome)
    assert outcome.summary()["auto_approved"] == 0
    assert ReviewStore.open(db(tmp_path)).get(guessed.id).status == "pending"
