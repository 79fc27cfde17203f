"""The corpus store: versions, idempotent adds, retiring, manifests, and crash safety."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from fixtures.casebuild import approved, cancel_case, clarify_case, refund_case, scenario_case

import casemill.corpus.store as store_module
from casemill.case.model import Review
from casemill.corpus import CorpusStore, existing_store, verify_corpus
from casemill.errors import UserError

A, B, C, D = approved(refund_case(), cancel_case(), clarify_case(), scenario_case())


@pytest.fixture
def store(tmp_path):
    return CorpusStore(tmp_path / "corpus", clock=lambda: datetime(2026, 11, 22, 12, 0, tzinfo=UTC))


def test_versions_add_and_retire(store):
    v1 = store.add_version([A, B], note="first")
    assert (v1.version, v1.added, v1.active_count) == (1, tuple(sorted([A.id, B.id])), 2)
    assert v1.created_at == "2026-11-22T12:00:00+00:00" and v1.note == "first"
    v2 = store.add_version([C], retire=[A.id])
    assert (v2.version, v2.added, v2.retired, v2.active_count) == (2, (C.id,), (A.id,), 2)
    assert store.active_ids() == {B.id, C.id}
    assert store.active_ids(version=1) == {A.id, B.id}
    assert [c.id for c in store.cases(version=1)] == sorted([A.id, B.id])
    assert store.get(A.id) == A  # retired cases stay readable by id
    assert v2.counts["category"] == {"capability": 1, "robustness": 1}
    assert store.stats()["active"] == 2 and store.stats()["latest"] == "v0002"


def test_adding_again_is_idempotent(store):
    store.add_version([A, B])
    before = store.cases_path.read_bytes()
    assert store.add_version([A, B]) is None
    assert store.latest().version == 1 and store.cases_path.read_bytes() == before
    v2 = store.add_version([A, C])
    assert v2.added == (C.id,)


def test_adding_a_retired_case_again_keeps_its_stored_line_and_old_versions_verify(store):
    # cases.jsonl is never rewritten: the re-approved copy (another reviewer, another time) of a
    # retired case re-activates the stored case, so v0001's hash still holds
    store.add_version([A, B])
    store.add_version(retire=[A.id])
    before = store.cases_path.read_bytes()
    again = A.model_copy(update={"review": A.review.model_copy(update={"reviewer": "someone"})})
    v3 = store.add_version([again])
    assert (v3.added, v3.active_count) == ((A.id,), 2)
    assert store.cases_path.read_bytes() == before
    assert store.get(A.id) == A
    assert verify_corpus(store).ok


def test_retire_unknown_is_a_user_error(store):
    store.add_version([A])
    with pytest.raises(UserError, match="not active"):
        store.add_version(retire=["c_nope"])


def test_existing_store_refuses_a_path_that_is_no_folder(store, tmp_path):
    store.add_version([A])
    assert existing_store(store.root).cases() == [A]
    for path in (tmp_path / "nope", store.cases_path):
        with pytest.raises(UserError, match=f"^--seeds-corpus {path}: no such corpus folder$"):
            existing_store(path, "--seeds-corpus")


def test_files_are_sorted_and_manifest_hashes_verify(store):
    store.add_version([D, C, B, A])
    ids = [json.loads(x)["id"] for x in store.cases_path.read_text().splitlines()]
    assert ids == sorted(ids)
    report = verify_corpus(store)
    assert report.ok and report.active == 4 and report.stray == []


def test_crash_between_cases_and_manifest(store, monkeypatch):
    store.add_version([A, B])
    real = store_module.atomic_write_text

    def crash_on_manifest(path, chunks):
        if "manifests" in str(path):
            raise OSError("power cut")
        return real(path, chunks)

    monkeypatch.setattr(store_module, "atomic_write_text", crash_on_manifest)
    with pytest.raises(OSError):
        store.add_version([C])
    monkeypatch.undo()

    assert store.latest().version == 1
    assert [c.id for c in store.cases()] == sorted([A.id, B.id])  # previous version whole
    assert C.id not in store.active_ids()
    report = verify_corpus(store)
    assert report.ok and report.stray == [C.id]
    v2 = store.add_version([C])  # the stray case can be added properly later
    assert v2.added == (C.id,) and verify_corpus(store).stray == []


def test_crash_while_writing_cases_leaves_the_old_file(store, monkeypatch):
    store.add_version([A])
    before = store.cases_path.read_bytes()

    def boom(*args):
        raise OSError("disk full")

    monkeypatch.setattr("casemill.io.jsonl.os.replace", boom)
    with pytest.raises(OSError):
        store.add_version([B])
    monkeypatch.undo()
    assert store.cases_path.read_bytes() == before
    assert [p.name for p in store.root.iterdir() if p.name.endswith(".tmp")] == []
    assert verify_corpus(store).ok


def test_verify_finds_tampering(store):
    store.add_version([A, B])
    lines = store.cases_path.read_text().splitlines()
    store.cases_path.write_text("\n".join(lines[:1]) + "\n")
    report = verify_corpus(store)
    assert not report.ok
    assert "missing from cases.jsonl" in report.problems[0].message

    store.cases_path.write_text("\n".join(lines) + "\n{broken\n")
    report = verify_corpus(store)
    assert [p.message.split(":")[0] for p in report.problems] == ["corrupt line"]


def test_existing_store_refuses_a_folder_of_plain_case_files(tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "support.jsonl").write_text("{}\n")
    with pytest.raises(
        UserError, match=r"^--corpus .*seeds: not a corpus folder .* support\.jsonl"
    ):
        existing_store(seeds)
    (tmp_path / "new").mkdir()  # an empty folder is an empty corpus
    assert existing_store(tmp_path / "new").cases() == []


def test_two_writers_at_once_make_two_versions_and_lose_no_case(tmp_path):
    """Writer one stops between writing cases.jsonl and its manifest (in its clock) until
    writer two is done or a grace period passes. Without the folder's lock writer two ran in
    between, and the two wrote the same v0001: one writer's cases were named by no manifest."""
    import threading

    root = tmp_path / "corpus"
    two_done = threading.Event()
    moment = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

    def slow_clock() -> datetime:
        two_done.wait(timeout=2)
        return moment

    one = threading.Thread(target=CorpusStore(root, clock=slow_clock).add_version, args=([A, B],))
    one.start()
    while not (root / "cases.jsonl").exists() and one.is_alive():
        two_done.wait(0.01)  # writer one holds the lock (or, unlocked, has written its cases)

    def second() -> None:
        CorpusStore(root, clock=lambda: moment).add_version([C])
        two_done.set()

    two = threading.Thread(target=second)
    two.start()
    one.join()
    two.join()
    store = CorpusStore(root)
    assert [m.version for m in store.manifests()] == [1, 2]
    assert store.active_ids() == {A.id, B.id, C.id}
    assert [c.id for c in store.cases()] == sorted([A.id, B.id, C.id])


def test_get_many_reads_the_corpus_once_for_every_case_asked(store, monkeypatch):
    store.add_version([A, B])
    store.add_version(retire=[B.id])
    reads = []
    original = store_module.read_jsonl
    monkeypatch.setattr(
        store_module, "read_jsonl", lambda *a, **k: reads.append(a) or original(*a, **k)
    )
    got = store.get_many([A.id, B.id, "c_missing"])
    assert got == {A.id: A, B.id: B}  # retired cases too: parents may have been retired
    assert len(reads) == 1
    assert store.get(A.id) == A and store.get("c_missing") is None
    assert store.get_many([]) == {} and len(reads) == 3  # one a get, none for nothing


def test_only_approved_cases_enter_the_corpus(store):
    pending, rejected = (
        refund_case(),
        cancel_case().model_copy(update={"review": Review(status="rejected", reviewer="bob")}),
    )
    with pytest.raises(UserError) as refused:
        store.add_version([A, pending, rejected])
    assert str(refused.value) == (
        f"only approved cases enter the corpus: 2 case(s) are not (first: {pending.id}, "
        f"{rejected.id})"
    )
    assert store.manifests() == [] and not (store.root / "cases.jsonl").exists()
