"""Approved cases reach the corpus exactly once, stamped with their review; rejected never."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from review_factory import invalid_case

from casemill.corpus import CorpusStore
from casemill.review.errors import DecisionBlocked
from casemill.review.export import export_batch
from casemill.review.items import ItemFilter


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


class _CorpusWithHook(CorpusStore):
    """A corpus whose `add_version` runs `before` (a reviewer acting while the export writes, or
    a failing disk) and `after` (an interrupt once the version is written) around the write."""

    def __init__(self, root, before: Callable[[], None] = lambda: None, after=lambda: None):
        super().__init__(root)
        self.before, self.after = before, after

    def add_version(self, *args, **kwargs):
        self.before()
        manifest = super().add_version(*args, **kwargs)
        self.after()
        return manifest


def _agree(store, corpus, batch_id: str) -> None:
    """Queue and corpus agree: a case is in the corpus exactly when the queue says it was
    approved and exported, and the corpus stamps it approved."""
    active = corpus.active_ids()
    for item in store.list(ItemFilter(batch_id=batch_id)):
        exported = item.status == "approved" and item.exported_at is not None
        assert (item.case.id in active) == exported, item.case_id
        if exported:
            assert corpus.get(item.case.id).review.status == "approved"


def test_undo_reject_or_edit_while_the_export_writes_is_refused(store, parent, children, tmp_path):
    store.enqueue(children[:3], "b1", parents={parent.id: parent})
    for case in children[:3]:
        store.approve(case.id, "ana", None)
    late = children[2].id
    refused: list[str] = []

    def bob_takes_it_back() -> None:  # in the web app, while the export writes the corpus
        data = children[2].model_dump(mode="json")
        data["expected"]["reply_contains"] = ["14.50", "refund", "mug"]
        for attempt in (
            lambda: store.undo(late, "bob", None),
            lambda: store.reject(late, "bob", None, reason="wrong label"),
            lambda: store.edit(late, "bob", None, data),
            lambda: store.claim(late, "bob"),
        ):
            with pytest.raises(DecisionBlocked) as exc:
                attempt()
            refused.append(str(exc.value))
        bulk = store.bulk_decide(
            ItemFilter(batch_id="b1", status="approved"), "rejected", "bob", "x"
        )
        refused.extend(why for _, why in bulk.skipped)

    corpus = _CorpusWithHook(tmp_path / "corpus", before=bob_takes_it_back)
    result = export_batch(store, corpus, "b1")
    assert len(refused) == 7
    assert all("is being exported to the corpus; try again after the export" in m for m in refused)
    assert set(result.added) == {c.id for c in children[:3]} and result.closed
    item = store.get(late)
    assert (item.status, item.reviewer, item.corpus_version) == ("approved", "ana", 1)
    assert item.exported_at is not None and item.lease_holder is None
    _agree(store, corpus, "b1")
    actions = [e.action for e in store.audit_log(case_id=late)]
    assert actions == ["enqueue", "approve", "claim", "export"]
    with pytest.raises(DecisionBlocked, match="exported to corpus version 1"):
        store.undo(late, "bob", None)  # after the export: final, as before


def test_a_case_rejected_before_the_claim_stays_out_of_the_corpus(
    store, parent, children, tmp_path
):
    store.enqueue(children[:2], "b1", parents={parent.id: parent})
    for case in children[:2]:
        store.approve(case.id, "ana", None)
    claimed = store.claim_export("b1", "export")  # the first step of an export, done by hand
    assert [i.case_id for i in claimed] == [children[0].id, children[1].id]
    with pytest.raises(DecisionBlocked, match="being exported by another export"):
        export_batch(store, CorpusStore(tmp_path / "corpus"), "b1")
    assert store.release_export(claimed, "export") == (children[0].id, children[1].id)
    store.undo(children[1].id, "bob", None)
    store.reject(children[1].id, "bob", None, reason="wrong label")
    corpus = CorpusStore(tmp_path / "corpus")
    result = export_batch(store, corpus, "b1")
    assert result.added == (children[0].id,) and result.closed
    assert corpus.active_ids() == {children[0].id}
    _agree(store, corpus, "b1")


def test_an_export_whose_corpus_write_fails_gives_the_cases_back(store, parent, children, tmp_path):
    store.enqueue(children[:2], "b1", parents={parent.id: parent})
    for case in children[:2]:
        store.approve(case.id, "ana", None)

    def disk_full() -> None:
        raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space left"):
        export_batch(store, _CorpusWithHook(tmp_path / "corpus", before=disk_full), "b1")
    for case in children[:2]:
        item = store.get(case.id)
        assert (item.status, item.exported_at, item.lease_holder) == ("approved", None, None)
        assert [e.action for e in store.audit_log(case_id=case.id)][-2:] == ["claim", "release"]
    assert store.undo(children[1].id, "bob", None).status == "pending"  # decidable again
    store.reject(children[1].id, "bob", None, reason="wrong label")
    corpus = CorpusStore(tmp_path / "corpus")
    result = export_batch(store, corpus, "b1")
    assert result.added == (children[0].id,) and result.closed
    _agree(store, corpus, "b1")


def test_an_export_interrupted_after_the_corpus_write_marks_what_the_corpus_holds(
    store, parent, children, tmp_path
):
    store.enqueue(children[:2], "b1", parents={parent.id: parent})
    for case in children[:2]:
        store.approve(case.id, "ana", None)

    def interrupted() -> None:
        raise KeyboardInterrupt

    corpus = _CorpusWithHook(tmp_path / "corpus", after=interrupted)
    with pytest.raises(KeyboardInterrupt):
        export_batch(store, corpus, "b1")
    assert corpus.active_ids() == {children[0].id, children[1].id}
    assert {store.get(c.id).corpus_version for c in children[:2]} == {1}
    _agree(store, corpus, "b1")
    with pytest.raises(DecisionBlocked, match="exported to corpus version 1"):
        store.undo(children[1].id, "bob", None)


def test_a_decision_undone_after_the_export_read_the_batch_keeps_it_open(
    store, parent, children, tmp_path, monkeypatch
):
    """The export reads every batch's counts, then closes those fully decided and exported; a
    reviewer undoing a rejection between the two must leave the batch open, with the case
    decidable, not closed around a pending case nobody could ever decide."""
    store.enqueue(children[:3], "b1", parents={parent.id: parent})
    store.approve(children[0].id, "ana", None)
    store.approve(children[1].id, "ana", None)
    store.reject(children[2].id, "ana", None, reason="wrong amount")
    read_counts = store.batches

    def counts_then_bob_undoes() -> list:
        statuses = read_counts()
        store.undo(children[2].id, "bob", None)
        return statuses

    monkeypatch.setattr(store, "batches", counts_then_bob_undoes)
    result = export_batch(store, CorpusStore(tmp_path / "corpus"), "b1")
    assert set(result.added) == {children[0].id, children[1].id} and not result.closed
    monkeypatch.undo()
    status = store.batch_status("b1")
    assert (status.closed, status.pending, status.exported) == (False, 1, 2)
    assert store.approve(children[2].id, "bob", None).status == "approved"
    again = export_batch(store, CorpusStore(tmp_path / "corpus"), "b1")
    assert again.added == (children[2].id,) and again.closed


def test_closing_waits_for_a_decision_in_flight_and_counts_it(pg_url, parent, children):
    """On PostgreSQL a decision holds its item's row lock until it commits; closing the batch
    waits for it and then counts the queue as it is after it (here: a rejection undone)."""
    import threading

    from sqlalchemy import select, update

    from casemill.review.schema import items, make_engine
    from casemill.review.store import ReviewStore

    store = ReviewStore(make_engine(pg_url))
    store.enqueue(children[:2], "b1", parents={parent.id: parent})
    store.reject(children[0].id, "ana", None, reason="x")
    store.reject(children[1].id, "ana", None, reason="y")
    late = children[1].id
    outcome: list[bool] = []
    with store.engine.connect() as undoing:
        tx = undoing.begin()  # a decision in flight: its item locked, not yet committed
        undoing.execute(select(items.c.case_id).where(items.c.case_id == late).with_for_update())
        closer = threading.Thread(target=lambda: outcome.append(store.close_if_done("b1")))
        closer.start()
        closer.join(0.5)
        assert closer.is_alive()  # waiting on the lock, not closing on what it saw before
        undoing.execute(update(items).where(items.c.case_id == late).values(status="pending"))
        tx.commit()
    closer.join(30)
    assert outcome == [False] and not store.batch_status("b1").closed
    store.engine.dispose()


def _dead_holder(monkeypatch) -> str:
    """Make the next export claim name a process of this machine that has exited, as the
    claim of an export killed with SIGKILL does."""
    import socket
    import subprocess

    gone = subprocess.Popen(["true"])
    gone.wait()
    holder = f"export:deadbeef0001@{socket.gethostname()}:{gone.pid}"
    monkeypatch.setattr("casemill.review.batch_ops.new_holder", lambda: holder)
    return holder


def _clocked_store(db_url: str, clock: list):
    from casemill.review.schema import make_engine
    from casemill.review.store import ReviewStore

    return ReviewStore(make_engine(db_url), clock=lambda: clock[0])


def test_an_export_killed_after_its_corpus_write_is_finished_by_a_take_over(
    db_url, parent, children, tmp_path, monkeypatch
):
    """An export killed between the corpus write and the queue update: hours later its cases
    still cannot be undone or rejected (the corpus holds them), a plain re-run is refused
    naming the dead export and the command, and `--take-over` marks them exported."""
    from datetime import UTC, datetime, timedelta

    from casemill.review.export import reviewed_case

    clock = [datetime(2026, 1, 5, 9, 0, tzinfo=UTC)]
    store = _clocked_store(db_url, clock)
    store.enqueue(children[:3], "b1", parents={parent.id: parent})
    for case in children[:3]:
        store.approve(case.id, "ana", None)
    _dead_holder(monkeypatch)
    claimed = store.claim_export("b1", "ana")  # the dead export's two first steps
    corpus = CorpusStore(tmp_path / "corpus")
    corpus.add_version(add=[reviewed_case(i) for i in claimed], note="review batch b1")
    monkeypatch.undo()
    clock[0] += timedelta(hours=2)
    with pytest.raises(DecisionBlocked, match="--take-over"):
        store.undo(children[1].id, "bob", None)  # the corpus holds it: not behind its back
    with pytest.raises(DecisionBlocked) as refused:
        export_batch(store, corpus, "b1")
    message = str(refused.value)
    assert "being exported by another export (export deadbeef0001, run by ana, on " in message
    assert "claimed at 2026-01-05 09:00 UTC, 120 min ago" in message
    assert "`casemill review export --take-over`" in message
    result = export_batch(store, corpus, "b1", take_over=True)
    assert (result.corpus_version, result.added, result.closed) == (None, (), True)
    assert set(result.already_in_corpus) == {c.id for c in children[:3]}
    assert len(corpus.manifests()) == 1
    _agree(store, corpus, "b1")
    actions = [e.action for e in store.audit_log(case_id=children[1].id)]
    assert actions == ["enqueue", "approve", "claim", "take-over", "export"]
    with pytest.raises(DecisionBlocked, match="casemill corpus retire"):
        store.undo(children[1].id, "bob", None)


def test_an_export_killed_before_its_corpus_write_is_written_by_a_take_over(
    store, parent, children, tmp_path, monkeypatch
):
    store.enqueue(children[:2], "b1", parents={parent.id: parent})
    for case in children[:2]:
        store.approve(case.id, "ana", None)
    _dead_holder(monkeypatch)
    store.claim_export("b1", "ana")
    monkeypatch.undo()
    corpus = CorpusStore(tmp_path / "corpus")
    result = export_batch(store, corpus, "b1", take_over=True)
    assert (result.corpus_version, set(result.added)) == (1, {c.id for c in children[:2]})
    assert result.closed
    _agree(store, corpus, "b1")


def test_the_claim_of_an_export_still_running_is_not_taken_over(store, parent, children, tmp_path):
    store.enqueue(children[:2], "b1", parents={parent.id: parent})
    store.approve(children[0].id, "ana", None)
    store.claim_export("b1", "ana")  # this process: alive
    with pytest.raises(DecisionBlocked, match="that process is still running"):
        export_batch(store, CorpusStore(tmp_path / "corpus"), "b1", take_over=True)
    item = store.get(children[0].id)
    assert item.lease_holder.startswith("export:") and item.exported_at is None


def test_an_export_of_another_domain_is_refused_unless_told(
    sqlite_store, parent, children, tmp_path
):
    from casemill.case.model import Case
    from casemill.review.errors import NewDomainRefused

    store = sqlite_store
    data = children[1].model_dump(mode="json", exclude={"id"})
    other = Case.model_validate(data | {"domain": "generic:acme"})
    store.enqueue([children[0], other], "b9", parents={parent.id: parent})
    store.approve(children[0].id, "ana", 1)
    corpus = CorpusStore(tmp_path / "corpus")
    assert export_batch(store, corpus, "b9").added == (children[0].id,)
    store.approve(other.id, "ana", 1)
    with pytest.raises(NewDomainRefused, match=r"add 1 of generic:acme to .*holds only support"):
        export_batch(store, corpus, "b9")
    assert len(corpus.manifests()) == 1  # nothing written
    assert store.get(other.id).exported_at is None  # given back, still approved
    told = export_batch(store, corpus, "b9", new_domain=True)
    assert told.added == (other.id,) and {c.domain for c in corpus.cases()} == {
        "support",
        "generic:acme",
    }
