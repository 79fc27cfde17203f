"""The review flow end to end under a Prefect test server: enqueue, pause waiting for a typed
input, resumed when a reviewer thread decides the batch, export exactly the approved cases. And
the polling fallback without Prefect."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
from fixtures.casebuild import approved
from review_factory import invalid_case

from casemill.corpus import CorpusStore
from casemill.errors import UserError
from casemill.flows.review import (
    BatchTimeout,
    enqueue_batch,
    enqueue_message,
    enqueue_task,
    export_message,
    paused_runs,
    resume_waiting,
    review_batch,
    run_batch_id,
    summary_rows,
    wait_for_batch,
)
from casemill.io.jsonl import atomic_write_jsonl
from casemill.review.errors import NotFound
from casemill.review.export import export_batch
from casemill.review.items import BatchStatus
from casemill.review.present import item_view
from casemill.review.store import ReviewStore


def new_corpus(tmp_path) -> Path:
    """An empty folder for a new corpus: the flow adds to a corpus that exists, or to an empty
    folder made for one, and refuses a path that names nothing."""
    path = tmp_path / "corpus"
    path.mkdir(exist_ok=True)
    return path


def test_wait_for_batch_polls_until_decided_or_times_out(sqlite_store, children):
    store = sqlite_store
    store.enqueue(children[:2], "b1")
    now = [0.0]
    sleeps: list[float] = []

    def sleep(s: float) -> None:
        sleeps.append(s)
        now[0] += s
        if len(sleeps) == 3:
            store.approve(children[0].id, "ana", None)
            store.reject(children[1].id, "ana", None, reason="dup")

    status = wait_for_batch(store, "b1", timeout_s=60, poll_s=2, sleep=sleep, clock=lambda: now[0])
    assert status.decided and (status.approved, status.rejected) == (1, 1) and sleeps == [2, 2, 2]
    store.enqueue(children[2:3], "b2")
    with pytest.raises(BatchTimeout, match="1 of 1 still pending"):
        wait_for_batch(store, "b2", timeout_s=5, poll_s=2, sleep=sleep, clock=lambda: now[0])


def _wait(predicate, timeout: float = 90.0, every: float = 0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError("condition not met in time")


@pytest.mark.slow
def test_flow_pauses_is_resumed_and_exports_approved(prefect_harness, tmp_path, parent, children):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    corpus_dir = new_corpus(tmp_path)
    bad = invalid_case(parent, 1)
    cases = [c.model_dump(mode="json") for c in [*children[:3], bad]]
    outcome: dict = {}

    def run_flow() -> None:
        try:
            outcome["result"] = review_batch(
                batch_id="flow-b1",
                cases=cases,
                corpus_dir=str(corpus_dir),
                db_url=db,
                timeout_s=300,
                watch_s=None,
            )
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertions below
            outcome["error"] = exc

    thread = threading.Thread(target=run_flow, daemon=True)
    thread.start()
    store = ReviewStore.open(db)
    _wait(lambda: store.batches() and store.batch_status("flow-b1").total == 4)
    runs = _wait(lambda: paused_runs("flow-b1"))
    assert len(runs) == 1 and "error" not in outcome
    # a reviewer decides the batch; only the last decision completes it
    store.approve(children[0].id, "ana", None)
    store.approve(children[1].id, "ana", None)
    store.reject(children[2].id, "bob", None, reason="meaning changed")
    assert resume_waiting(store, "flow-b1") == []  # one still pending: nobody is resumed
    store.reject(bad.id, "bob", None, reason="broken label")
    assert resume_waiting(store, "flow-b1", decided_by="test") == [str(runs[0].id)]
    thread.join(timeout=120)
    assert not thread.is_alive() and "error" not in outcome, outcome.get("error")
    result = outcome["result"]
    assert set(result["added"]) == {children[0].id, children[1].id} and result["closed"]
    corpus = CorpusStore(corpus_dir)
    assert {c.id for c in corpus.cases()} == {children[0].id, children[1].id}
    assert len(corpus.manifests()) == 1


@pytest.mark.slow
def test_auto_policy_flow_resumes_itself(prefect_harness, tmp_path, parent, children):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    corpus_dir = new_corpus(tmp_path)
    bad = invalid_case(parent, 2)
    cases = [c.model_dump(mode="json") for c in [*children[:2], bad]]
    outcome: dict = {}

    def run_flow() -> None:
        try:
            outcome["result"] = review_batch(
                batch_id="flow-auto",
                cases=cases,
                corpus_dir=str(corpus_dir),
                db_url=db,
                policy="auto",
                timeout_s=300,
                watch_s=0.5,
            )
        except BaseException as exc:  # noqa: BLE001
            outcome["error"] = exc

    thread = threading.Thread(target=run_flow, daemon=True)
    thread.start()
    store = ReviewStore.open(db)
    _wait(lambda: paused_runs("flow-auto"))
    assert store.batch_status("flow-auto").approved == 2  # auto-approved; the broken one waits
    store.reject(bad.id, "ana", None, reason="broken label")  # no explicit resume: the watcher
    thread.join(timeout=120)
    assert "error" not in outcome, outcome.get("error")
    corpus = CorpusStore(corpus_dir)
    assert all(c.review.auto_approved for c in corpus.cases()) and len(corpus.cases()) == 2


@pytest.mark.slow
def test_flow_without_waiting_exports_what_auto_approved(
    prefect_harness, tmp_path, parent, children
):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    bad = invalid_case(parent, 5)
    cases = [c.model_dump(mode="json") for c in [*children[:2], bad]]
    result = review_batch(
        batch_id="flow-nowait",
        cases=cases,
        corpus_dir=str(new_corpus(tmp_path)),
        db_url=db,
        policy="auto",
        wait=False,
    )
    assert set(result["added"]) == {children[0].id, children[1].id} and not result["closed"]
    assert ReviewStore.open(db).get(bad.id).status == "pending"


def test_summary_artifact_rows_give_decisions_and_export():
    status = BatchStatus(
        "b1", "human", total=5, pending=0, approved=3, rejected=2, exported=3, closed=True
    )
    rows = summary_rows(status, {"added": ["a", "b", "c"], "corpus_version": 4})
    assert {r["figure"]: r["value"] for r in rows} == {
        "total": "5",
        "approved": "3",
        "rejected": "2",
        "pending": "0",
        "exported": "3",
        "corpus_version": "4",
    }


def test_wait_for_batch_names_a_batch_the_queue_does_not_have(sqlite_store, children):
    sqlite_store.enqueue(children[:2], "b1")
    again = sqlite_store.enqueue(children[:2], "b2")  # every case is queued in b1 already
    assert again.added == () and not again.batch_exists

    def sleep(_s: float) -> None:
        raise AssertionError("waited for a batch that was not made")

    with pytest.raises(NotFound, match="no batch 'b2' in the review queue"):
        wait_for_batch(sqlite_store, "b2", timeout_s=60, poll_s=1, sleep=sleep)


@pytest.mark.slow
def test_flow_over_cases_queued_elsewhere_does_not_wait(prefect_harness, tmp_path, children):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    ReviewStore.open(db).enqueue(children[:2], "first")
    cases = [c.model_dump(mode="json") for c in children[:2]]
    result = review_batch(
        batch_id="again",
        cases=cases,
        corpus_dir=str(new_corpus(tmp_path)),
        db_url=db,
        timeout_s=30,
        watch_s=None,
    )
    assert result["corpus_version"] is None and result["added"] == []
    assert result["batch_id"] == "again" and not result["closed"]
    store = ReviewStore.open(db)
    assert store.batch_status("first").pending == 2  # still waiting for people
    assert [b.batch_id for b in store.batches()] == ["first"]  # no empty batch "again"


@pytest.mark.slow
def test_flow_timeout_says_what_is_pending_and_how_to_review_it(
    prefect_harness, tmp_path, children
):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    cases = [c.model_dump(mode="json") for c in children[:2]]
    with pytest.raises(BatchTimeout) as err:
        review_batch(
            batch_id="late",
            cases=cases,
            corpus_dir=str(new_corpus(tmp_path)),
            db_url=db,
            timeout_s=3,
            watch_s=None,
        )
    assert str(err.value) == (
        "batch late not decided within 3 s: 2 of 2 still pending; review them with "
        "`casemill review next --filter batch=late`"
    )


def test_the_flow_enqueues_cases_with_their_parents_from_corpus_or_seeds(
    sqlite_store, tmp_path, parent, children
):
    from casemill.io.jsonl import dumps_line

    corpus_dir = tmp_path / "corpus"
    (in_corpus,) = approved(parent)
    CorpusStore(corpus_dir).add_version([in_corpus])
    file = tmp_path / "cands.jsonl"
    file.write_text("".join(dumps_line(c.model_dump(mode="json")) for c in children[:2]))
    counts = enqueue_batch(sqlite_store, "f1", str(file), None, "human", corpus_dir, tmp_path)
    assert counts["added"] == 2
    assert sqlite_store.get(children[0].id).parent == in_corpus  # from the corpus
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "s.jsonl").write_text(dumps_line(parent.model_dump(mode="json")))
    cases = [children[2].model_dump(mode="json")]
    enqueue_batch(sqlite_store, "f2", None, cases, "human", tmp_path / "none", seeds)
    item = sqlite_store.get(children[2].id)
    assert item.parent == parent and item_view(item).changes  # the reviewer sees the diff


def test_enqueue_task_finds_parents_in_the_corpus_and_the_seeds(tmp_path, parent, children):
    """The nightly review batch holds the expansion of the seeds, whose parents are not in the
    batch: the flow looks them up in the corpus and the seeds, as `casemill review enqueue`
    does, so the reviewer sees the parent and the operator's diff."""
    db = f"sqlite:///{tmp_path / 'q.db'}"
    corpus_dir = tmp_path / "corpus"
    (in_corpus,) = approved(parent)
    CorpusStore(corpus_dir).add_version([in_corpus], note="seeds")
    candidates = tmp_path / "candidates.jsonl"
    atomic_write_jsonl(candidates, [c.model_dump(mode="json") for c in children[:2]])
    counts = enqueue_task.fn(db, "from-file", str(candidates), None, "human", str(corpus_dir))
    store = ReviewStore.open(db)
    assert counts["added"] == 2
    assert [store.get(c.id).parent for c in children[:2]] == [in_corpus, in_corpus]

    seeds = tmp_path / "seeds.jsonl"
    atomic_write_jsonl(seeds, [parent.model_dump(mode="json")])
    cases = [c.model_dump(mode="json") for c in children[2:4]]
    enqueue_task.fn(db, "from-seeds", None, cases, "human", str(tmp_path / "none"), str(seeds))
    assert [store.get(c.id).parent for c in children[2:4]] == [parent, parent]


def test_export_message_says_what_was_added_or_that_the_corpus_is_unchanged():
    assert export_message("b1", {"added": ["a", "b"], "corpus_version": 3}) == (
        "batch b1 exported: 2 cases added to corpus version 3"
    )
    assert export_message("b1", {"added": ["a"], "corpus_version": 4}).endswith(
        "1 case added to corpus version 4"
    )
    nothing = {"added": [], "already_in_corpus": ["a"], "corpus_version": None}
    assert export_message("b2", nothing) == (
        "batch b2: no approved case to add (1 already in the corpus); the corpus is unchanged"
    )
    status = BatchStatus(
        "b2", "human", total=1, pending=0, approved=0, rejected=1, exported=0, closed=True
    )
    assert summary_rows(status, nothing)[-1] == {"figure": "corpus_version", "value": "unchanged"}


def test_flow_refuses_a_closed_batch_before_enqueueing(prefect_harness, tmp_path, children):
    """prefect.yaml's review-batch had the fixed batch id 'nightly': its second run put the new
    cases, pending, into the batch the first run's export had closed, where no decision is
    allowed, and waited for them until its timeout."""
    db = f"sqlite:///{tmp_path / 'q.db'}"
    store = ReviewStore.open(db)
    store.enqueue(children[:1], "nightly")
    store.approve(children[0].id, "ana", None)
    export_batch(store, CorpusStore(tmp_path / "corpus"), "nightly")
    with pytest.raises(UserError, match="review batch 'nightly' is closed"):
        review_batch(
            batch_id="nightly",
            cases=[children[1].model_dump(mode="json")],
            db_url=db,
            corpus_dir=str(new_corpus(tmp_path)),
            timeout_s=5,
        )
    assert store.batch_status("nightly").total == 1  # the new case was not queued


def test_flow_refuses_a_missing_corpus_or_cases_file_before_enqueueing(
    prefect_harness, tmp_path, children
):
    """A mistyped corpus_dir got a new corpus of its own, and the batch, marked exported, never
    reached the real one; a missing cases_path ended in a FileNotFoundError's traceback."""
    db = f"sqlite:///{tmp_path / 'q.db'}"
    cases = [children[0].model_dump(mode="json")]
    typo = tmp_path / "corpsu"
    with pytest.raises(UserError, match=f"corpus_dir {typo}: no such corpus folder"):
        review_batch(batch_id="b1", cases=cases, db_url=db, corpus_dir=str(typo), policy="auto")
    assert not typo.exists() and ReviewStore.open(db).batches() == []
    missing = tmp_path / "nowhere.jsonl"
    with pytest.raises(UserError, match=f"cases_path {missing}: no such file"):
        review_batch(
            batch_id="b1", cases_path=str(missing), db_url=db, corpus_dir=str(new_corpus(tmp_path))
        )
    assert ReviewStore.open(db).batches() == []


def test_flow_fills_the_date_into_the_batch_id(prefect_harness, tmp_path, children):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    before = datetime.now(UTC)
    review_batch(
        batch_id="review-{date}",
        cases=[children[0].model_dump(mode="json")],
        db_url=db,
        corpus_dir=str(new_corpus(tmp_path)),
        policy="auto",
        wait=False,
    )
    days = {f"review-{d:%Y-%m-%d}" for d in (before, datetime.now(UTC))}
    assert {b.batch_id for b in ReviewStore.open(db).batches()} <= days


def test_a_paused_run_is_found_by_its_filled_in_batch_id():
    """The web app resumes the run waiting for a decided batch by its batch_id parameter: a
    template is filled in from the run's scheduled start, in UTC, as the run filled it."""
    start = datetime(2026, 11, 23, 5, 30, tzinfo=timezone(timedelta(hours=2)))
    run = SimpleNamespace(parameters={"batch_id": "review-{datetime}"}, expected_start_time=start)
    assert run_batch_id(run) == "review-20261123T033000Z"
    assert run_batch_id(SimpleNamespace(parameters={"batch_id": "b1"})) == "b1"
    assert (
        run_batch_id(SimpleNamespace(parameters={"batch_id": "b-{x}"}, expected_start_time=start))
        is None
    )


def test_a_batch_id_with_capitals_and_underscores_pauses_and_resumes(
    prefect_harness, tmp_path, children
):
    """The pause's input key was 'review-BATCH-N' as is, and Prefect accepts lower-case letters,
    digits and dashes only: a batch named 'Team_A' (or 'review-{datetime}', filled in as
    'review-20261123T045530Z') failed the run as it paused."""
    db = f"sqlite:///{tmp_path / 'q.db'}"
    outcome: dict = {}

    def run_flow() -> None:
        try:
            outcome["result"] = review_batch(
                batch_id="Team_A",
                cases=[children[0].model_dump(mode="json")],
                corpus_dir=str(new_corpus(tmp_path)),
                db_url=db,
                timeout_s=300,
                watch_s=0.5,
            )
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertions below
            outcome["error"] = exc

    thread = threading.Thread(target=run_flow, daemon=True)
    thread.start()
    _wait(lambda: paused_runs("Team_A") or "error" in outcome)
    assert "error" not in outcome, outcome.get("error")
    ReviewStore.open(db).approve(children[0].id, "ana", None)
    thread.join(timeout=120)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["result"]["added"] == [children[0].id]


def test_enqueue_message_reads_as_words():
    counts = {"added": 3325, "already_queued": 0, "invalid": 2, "quarantined": 1}
    assert enqueue_message("nightly", {**counts, "auto_approved": 0}) == (
        "batch nightly: 3325 queued, 0 already queued, 2 failing validation, "
        "1 bad lines quarantined"
    )
    assert enqueue_message("b", {**counts, "auto_approved": 7}).endswith(
        ", 7 approved by the auto policy"
    )
