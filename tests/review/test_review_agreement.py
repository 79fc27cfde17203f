"""Double review and Cohen's kappa."""

from __future__ import annotations

import random

import pytest

from casemill.review.agreement import (
    agreement,
    claim_second,
    cohen_kappa,
    sample_double,
    second_opinion,
)
from casemill.review.errors import DecisionBlocked


def test_kappa_known_values():
    # 20 items: both approve 14, both reject 2, disagree 4 -> p_o = .8, p_e = .66, kappa = .4118
    pairs = [("approved", "approved")] * 14 + [("rejected", "rejected")] * 2
    pairs += [("approved", "rejected")] * 2 + [("rejected", "approved")] * 2
    k = cohen_kappa(pairs)
    assert (k.n, k.observed, k.expected) == (20, 0.8, 0.68)
    assert k.kappa == pytest.approx((0.8 - 0.68) / (1 - 0.68), abs=1e-6)
    assert cohen_kappa([("approved", "approved")] * 3).kappa == 1.0
    assert cohen_kappa([]).kappa is None


def test_double_review_flow(sqlite_store, parent, children):
    store = sqlite_store
    store.enqueue(children, "b1", parents={parent.id: parent})
    flagged = sample_double(store, "b1", 0.4, random.Random(3))
    assert len(flagged) == 2 and flagged == sample_double(store, "b1", 0.4, random.Random(3))
    for case in children:
        store.approve(case.id, "ana", None)
    assert claim_second(store, "ana") is None  # the first reviewer cannot second herself
    seen = []
    while (item := claim_second(store, "bob")) is not None:
        seen.append(item.case_id)
        second_opinion(store, item.case_id, "bob", "approved" if len(seen) == 1 else "rejected")
    assert seen == flagged
    with pytest.raises(DecisionBlocked, match="already has a second opinion"):
        second_opinion(store, flagged[0], "cy", "approved")
    result = agreement(store, "b1")
    assert (result.n, result.observed) == (2, 0.5)
    assert store.get(flagged[1]).status == "approved"  # a second opinion changes nothing


def test_a_second_opinion_waits_for_the_first_decision(sqlite_store, parent, children):
    store = sqlite_store
    store.enqueue(children[:1], "b1", parents={parent.id: parent})
    sample_double(store, "b1", 1.0, random.Random(0))
    with pytest.raises(DecisionBlocked, match="has no first decision yet"):
        second_opinion(store, children[0].id, "bob", "approved")
    store.approve(children[0].id, "bob", None)  # bob's is the first decision after all
    with pytest.raises(DecisionBlocked, match="bob made the first decision"):
        second_opinion(store, children[0].id, "bob", "approved")
    assert agreement(store, "b1").n == 0


def test_a_fraction_outside_0_to_1_is_refused(sqlite_store, children):
    from casemill.errors import UserError

    sqlite_store.enqueue(children, "frac")
    for fraction in (0, 1.5, float("nan")):
        with pytest.raises(UserError, match=r"^fraction .*: expected a number above 0 and at most"):
            sample_double(sqlite_store, "frac", fraction, random.Random(0))
