"""Ten reviewers in threads (their own connections) make 1,000 decisions between them, on SQLite
and on PostgreSQL: no decision is lost and none is duplicated."""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest
from review_factory import child_case, seed_case

from casemill.review.errors import LeaseHeld, StaleWrite
from casemill.review.items import ItemFilter
from casemill.review.schema import make_engine
from casemill.review.store import ReviewStore

REVIEWERS = 10
DECISIONS = 1000


def _reviewer(store: ReviewStore, name: str, seed: int, made: list, errors: list) -> None:
    rng = random.Random(seed)
    try:
        while True:
            item = store.claim_next(name)
            if item is None:
                return
            if rng.random() < 0.8:
                store.approve(item.case_id, name, item.version)
                made.append((item.case_id, "approved", name))
            else:
                store.reject(item.case_id, name, item.version, reason="not realistic")
                made.append((item.case_id, "rejected", name))
    except Exception as exc:  # noqa: BLE001 - collected and asserted on below
        errors.append(exc)


@pytest.mark.slow
def test_ten_reviewers_thousand_decisions(db_url):
    engine = make_engine(db_url)
    store = ReviewStore(engine)
    parent = seed_case()
    cases = [child_case(parent, n) for n in range(DECISIONS)]
    assert store.enqueue(cases, "bulk", parents={parent.id: parent}).added.__len__() == DECISIONS
    made: list = []
    errors: list = []
    threads = [
        threading.Thread(target=_reviewer, args=(store, f"r{i}", i, made, errors))
        for i in range(REVIEWERS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=240)
    assert errors == []
    ids = [case_id for case_id, _, _ in made]
    assert len(ids) == DECISIONS and len(set(ids)) == DECISIONS  # none lost, none twice
    assert store.count(ItemFilter(status="pending")) == 0
    decisions = [e for e in store.audit_log(batch_id="bulk") if e.action in ("approve", "reject")]
    assert len(decisions) == DECISIONS
    assert Counter(e.case_id for e in decisions).most_common(1)[0][1] == 1
    final = {i.case_id: (i.status, i.reviewer) for i in store.list(ItemFilter(batch_id="bulk"))}
    assert final == {case_id: (status, who) for case_id, status, who in made}
    assert len({who for _, _, who in made}) > 1  # the work was actually shared
    engine.dispose()


def test_two_writers_same_version_exactly_one_wins(db_url):
    engine = make_engine(db_url)
    store = ReviewStore(engine)
    parent = seed_case()
    case = child_case(parent, 1)
    store.enqueue([case], "b")
    barrier = threading.Barrier(8)
    outcomes: list = []

    def write(i: int) -> None:
        barrier.wait()
        try:
            store.approve(case.id, f"r{i}", 1)
            outcomes.append("ok")
        except (StaleWrite, LeaseHeld) as exc:
            outcomes.append(type(exc).__name__)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 1 and outcomes.count("StaleWrite") == 7
    assert [e.action for e in store.audit_log(case_id=case.id)] == ["enqueue", "approve"]
    engine.dispose()
