"""Double review of a sample and inter-reviewer agreement (Cohen's kappa).

A sample of a batch is flagged for double review. The first decision on a flagged item is the
real one; a second reviewer records an independent second opinion that changes nothing in the
queue. Agreement compares the two on every item that has both.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select

from casemill.errors import UserError
from casemill.review.errors import DecisionBlocked, NotFound
from casemill.review.items import DECISIONS, Item
from casemill.review.schema import items, now_iso, second_opinions
from casemill.review.store import ReviewStore


@dataclass(frozen=True)
class Agreement:
    n: int
    observed: float | None
    expected: float | None
    kappa: float | None


def cohen_kappa(pairs: Iterable[tuple[str, str]]) -> Agreement:
    """Cohen's kappa of paired labels: (p_o - p_e) / (1 - p_e); 1.0 when both reviewers agree
    on everything and chance agreement is already 1 (a single label used throughout)."""
    pairs = list(pairs)
    n = len(pairs)
    if n == 0:
        return Agreement(0, None, None, None)
    observed = sum(a == b for a, b in pairs) / n
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    expected = sum(first[k] * second[k] for k in set(first) | set(second)) / (n * n)
    kappa = 1.0 if expected == 1.0 else (observed - expected) / (1 - expected)
    return Agreement(n, round(observed, 6), round(expected, 6), round(kappa, 6))


def sample_double(
    store: ReviewStore, batch_id: str, fraction: float, rng: random.Random
) -> list[str]:
    """Flag a random `fraction` (above 0, at most 1; at least one item) of the batch's items for
    double review."""
    if not 0 < fraction <= 1:  # NaN fails too
        raise UserError(f"fraction {fraction}: expected a number above 0 and at most 1, e.g. 0.1")
    with store.engine.begin() as conn:
        ids = sorted(
            conn.execute(select(items.c.case_id).where(items.c.batch_id == batch_id)).scalars()
        )
        if not ids:
            raise NotFound(f"no batch {batch_id!r} in the review queue")
        chosen = sorted(rng.sample(ids, max(1, round(len(ids) * fraction))))
        conn.execute(items.update().where(items.c.case_id.in_(chosen)).values(double_review=True))
    return chosen


def claim_second(store: ReviewStore, reviewer: str, batch_id: str | None = None) -> Item | None:
    """The next flagged item decided by someone else that has no second opinion yet."""
    stmt = (
        select(items.c.case_id)
        .where(
            items.c.double_review.is_(True),
            items.c.status.in_(DECISIONS),
            items.c.reviewer != reviewer,
        )
        .where(items.c.case_id.not_in(select(second_opinions.c.case_id)))
        .order_by(items.c.batch_id, items.c.position)
        .limit(1)
    )
    if batch_id:
        stmt = stmt.where(items.c.batch_id == batch_id)
    with store.engine.connect() as conn:
        case_id = conn.execute(stmt).scalar()
    return store.get(case_id) if case_id else None


def second_opinion(store: ReviewStore, case_id: str, reviewer: str, decision: str) -> None:
    if decision not in DECISIONS:
        raise DecisionBlocked(f"a second opinion is approved or rejected, not {decision!r}")
    item = store.get(case_id)
    if not item.double_review:
        raise DecisionBlocked(f"case {case_id} is not flagged for double review")
    if item.status not in DECISIONS:
        # a second opinion before the first could come from the reviewer who then decides it
        # first, and kappa would compare that reviewer with themself
        raise DecisionBlocked(
            f"case {case_id} has no first decision yet; a second opinion follows one"
        )
    if item.reviewer == reviewer:
        raise DecisionBlocked(
            f"{reviewer} made the first decision on {case_id}; "
            "a second reviewer must give the second opinion"
        )
    with store.engine.begin() as conn:
        if conn.execute(
            select(second_opinions.c.case_id).where(second_opinions.c.case_id == case_id)
        ).first():
            raise DecisionBlocked(f"case {case_id} already has a second opinion")
        conn.execute(
            second_opinions.insert().values(
                case_id=case_id, reviewer=reviewer, decision=decision, at=now_iso(store.clock)
            )
        )


def agreement(store: ReviewStore, batch_id: str | None = None) -> Agreement:
    stmt = select(items.c.status, second_opinions.c.decision).join(
        second_opinions, second_opinions.c.case_id == items.c.case_id
    )
    if batch_id:
        stmt = stmt.where(items.c.batch_id == batch_id)
    with store.engine.connect() as conn:
        pairs = [(a, b) for a, b in conn.execute(stmt) if a in DECISIONS]
    return cohen_kappa(pairs)
