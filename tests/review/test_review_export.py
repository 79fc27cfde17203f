"""Approved cases reach the corpus exactly once, stamped with their review; rejected never."""

from __future__ import annotations

from review_factory import invalid_case

from casemill.corpus import CorpusStore
from review.export import export_batch


def test_export_writes_approved_once_with_review_stamp(sqlite_store, parent, children, tmp_path):
    store = sqlite_store
    store.enqueue(children, "b1", parents={parent.id: parent})
    store.approve(children[0].id, "ana", 1, notes="clean")
    store.reject(children[1].id, "bob", 1, reason="meaning changed")
    data = children[2].model_dump(mode="json")
    data["expected"]["reply_contains"] = ["14.50", "refund", "mug"]
    edited = store.edit(children[2].id, "ana", 1, data, approve=True)
    corpus = CorpusStore(tmp_path / "corpus")
    first = export_batch(store, corpus, "b1")
    assert first.corpus_version == 1
    assert set(first.added) == {children[0].id, edited.case.id}
    assert not first.closed  # two items still pending
    cases = {c.id: c for c in corpus.cases()}
    assert children[1].id not in cases
    stamped = cases[children[0].id]
    assert stamped.review.status == "approved" and stamped.review.reviewer == "ana"
    assert stamped.review.notes == "clean" and stamped.review.decided_at is not None
    assert [e.path for e in cases[edited.case.id].review.edits] == ["expected.reply_contains[2]"]
    again = export_batch(store, corpus, "b1")
    assert again.corpus_version is None and again.added == ()
    assert len(corpus.manifests()) == 1 and len(corpus.cases()) == 2
    assert store.get(children[0].id).exported_at is not None


def test_export_closes_decided_batch_and_marks_auto(sqlite_store, parent, children, tmp_path):
    store = sqlite_store
    bad = invalid_case(parent, 1)
    store.enqueue([*children[:2], bad], "b2", parents={parent.id: parent}, policy="auto")
    store.auto_decide("b2")
    store.reject(bad.id, "ana", None, reason="broken label")
    corpus = CorpusStore(tmp_path / "corpus")
    result = export_batch(store, corpus, "b2")
    assert result.closed and store.batch_status("b2").closed
    assert all(c.review.auto_approved and c.review.reviewer == "auto" for c in corpus.cases())
    assert {c.id for c in corpus.cases()} == {children[0].id, children[1].id}


def test_a_guessed_label_a_person_approved_is_no_longer_marked_needs_label(sqlite_store, tmp_path):
    from review_factory import guessed_case

    guess = guessed_case(1)
    sqlite_store.enqueue([guess], "b3")
    sqlite_store.approve(guess.id, "ana", 1, notes="the refund is right")
    corpus = CorpusStore(tmp_path / "corpus")
    export_batch(sqlite_store, corpus, "b3")
    (case,) = corpus.cases()
    assert case.id == guess.id  # the tags are not what a case means
    assert case.tags.labels == ("mined", "conversation", "labelled_in_review")
    assert case.provenance.label_confidence == "low"  # the miner's, as it was
    assert case.review.reviewer == "ana"
