"""The corpus store: versions, idempotent adds, retiring, manifests, and crash safety."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

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
        f"{rejected.id}; {pending.id}: review.status is 'pending')"
    )
    assert store.manifests() == [] and not (store.root / "cases.jsonl").exists()


def _line_of(store: CorpusStore, case_id: str) -> int:
    lines = store.cases_path.read_text().splitlines()
    return next(n for n, text in enumerate(lines, 1) if json.loads(text)["id"] == case_id)


def _edit_line(store: CorpusStore, number: int, old: str, new: str) -> None:
    lines = store.cases_path.read_text().splitlines()
    assert old in lines[number - 1]
    lines[number - 1] = lines[number - 1].replace(old, new, 1)
    store.cases_path.write_text("\n".join(lines) + "\n")


def test_a_case_saying_approved_with_no_reviewer_does_not_enter(store):
    # a generated candidate whose status was flipped by hand: no decision is recorded
    forged = refund_case().model_copy(update={"review": Review(status="approved")})
    with pytest.raises(UserError) as refused:
        store.add_version([B, forged])
    assert str(refused.value) == (
        f"only approved cases enter the corpus: 1 case(s) are not (first: {forged.id}; "
        f"{forged.id}: review.status says approved but review.reviewer is empty: no decision "
        "is recorded)"
    )
    assert store.manifests() == [] and not store.cases_path.exists()
    # a reviewer with no decision time is a decision (the seeds carry no time)
    assert store.add_version([B]).active_count == 1 and B.review.decided_at is None


def test_the_committed_corpus_and_seeds_are_approved_and_verify():
    """What `./dev demo` starts from: nothing legitimate is refused by the approval rule."""
    root = Path(__file__).resolve().parents[2]
    corpus = CorpusStore(root / "corpus")
    assert verify_corpus(corpus).problems == []
    seeds = [json.loads(text) for text in (root / "seeds" / "support.jsonl").open()]
    assert {s["review"]["reviewer"] for s in seeds} == {"casemill-seeds"}
    assert len(corpus.cases()) == 75


def test_verify_names_the_line_of_an_active_case_edited_to_rejected(store):
    store.add_version([A, B])
    number = _line_of(store, A.id)
    _edit_line(store, number, '"status":"approved"', '"status":"rejected"')
    report = verify_corpus(store)
    assert not report.ok
    manifest = str(store.manifests_dir / "v0001.json")
    assert [p.where for p in report.problems] == [manifest, f"{store.cases_path}:{number}"]
    assert report.problems[0].message.startswith("active_sha256 does not match the 2 cases")
    assert f"`git diff {store.cases_path}`" in report.problems[0].message
    assert report.problems[1].message.startswith(
        f"case {A.id} is in the corpus but is not approved (review.status is 'rejected')"
    )
    assert f"casemill corpus retire {A.id}" in report.problems[1].message
    with pytest.raises(UserError) as refused:  # not served as an active case any more
        store.cases()
    assert str(refused.value).startswith(
        f"{store.cases_path}:{number}: active case {A.id} is not approved"
    )


def test_verify_names_an_active_case_whose_reviewer_was_removed(store):
    store.add_version([A, B])
    number = _line_of(store, B.id)
    _edit_line(store, number, '"reviewer":"casemill-tests"', '"reviewer":null')
    report = verify_corpus(store)
    where = {p.where: p.message for p in report.problems}
    assert "review.reviewer is empty" in where[f"{store.cases_path}:{number}"]


def test_verify_names_the_lines_a_moved_slice_count_points_at(store):
    store.add_version([A, B, C])
    assert (A.tags.category, B.tags.category, C.tags.category) == (
        "capability",
        "capability",
        "robustness",
    )
    number = _line_of(store, A.id)
    _edit_line(store, number, '"category":"capability"', '"category":"adversarial"')
    report = verify_corpus(store)
    messages = [p.message for p in report.problems]
    assert len(messages) == 2 and messages[0].startswith("active_sha256 does not match")
    assert messages[1] == (
        "counts.category differ from the cases it names (adversarial 0 -> 1, capability 2 -> 1)"
        f"; the edited line is one of {store.cases_path}:{number}"
    )


def test_verify_reports_a_damaged_manifest_and_never_raises(store):
    store.add_version([A])
    store.add_version([B])
    path = store.manifests_dir / "v0001.json"
    path.write_text(path.read_text().replace('"version"', '"versoin"'))
    report = verify_corpus(store)
    assert not report.ok and report.versions == 1  # v0002 read, v0001 not
    assert [p.where for p in report.problems] == [str(path), str(path)]
    assert report.problems[0].message.startswith("field 'version' is missing; restore it")
    assert report.problems[1].message.startswith("field 'versoin' is not a manifest field")
    assert report.stray == []  # unknown without v0001's list of cases
    with pytest.raises(UserError) as refused:  # other commands: the file and the field too
        store.manifests()
    assert str(refused.value).startswith(f"{path}: field 'version' is missing")

    path.write_text("{not json")
    report = verify_corpus(store)
    assert [p.where for p in report.problems] == [str(path)]
    assert report.problems[0].message.startswith("not valid JSON")

    path.write_text((store.manifests_dir / "v0002.json").read_text())
    report = verify_corpus(store)
    assert f"{path}: field 'version' is 2, the file name says v0001" in [
        f"{p.where}: {p.message.split(';')[0]}" for p in report.problems
    ]
