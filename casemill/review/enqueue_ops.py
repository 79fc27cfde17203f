"""Putting cases in the review queue: each case validated, its parent attached, its row and an
audit row written in one transaction under its batch. Mixed into `ReviewStore`.

Idempotent by case id: a case already queued (in any batch), or the content a queued case was
edited into, is left as it is. A batch is made only for cases it will hold, a batch's policy is
fixed when it is made, and a closed batch takes no new case.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.engine import Connection, Row

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.review.errors import DecisionBlocked
from casemill.review.items import EnqueueResult
from casemill.review.schema import BATCH_ID_MAX, NAME_MAX, audit, batches, check_name, items
from casemill.validation.findings import Finding

log = logging.getLogger(__name__)

POLICIES = ("human", "auto")

# a case to queue: the case, its parent when one was found, and its validation findings
Row_ = tuple[Case, Case | None, list[Finding]]


class EnqueueOps:
    """Needs `engine`, `validator`, `_lock` and `_now` from `ReviewStore`."""

    def enqueue(
        self,
        cases: Iterable[Case],
        batch_id: str,
        parents: Mapping[str, Case] | None = None,
        policy: str = "human",
        actor: str = "system",
        note: str = "",
        tick: Callable[[int, int], None] | None = None,
    ) -> EnqueueResult:
        """Put cases in the queue under `batch_id`. Idempotent by case id: a case already queued
        (in any batch), or the content a queued case was edited into, is left as it is. Each case
        is validated now; its findings travel with it; `tick(done, total)` is told now and then
        how many are validated."""
        if policy not in POLICIES:
            raise UserError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
        check_name("batch id", batch_id, BATCH_ID_MAX)
        check_name("actor", actor, NAME_MAX)
        rows = self._validated(cases, parents or {}, tick)
        now = self._now()
        with self.engine.begin() as conn:
            head = self._locked_batch(conn, batch_id, policy)
            queued_in = _queued_in(conn, [c.id for c, _, _ in rows])
            new = any(c.id not in queued_in for c, _, _ in rows)
            _make_or_check(conn, head, batch_id, policy, note, now, new)
            added, already, invalid = _insert_items(conn, rows, queued_in, batch_id, actor, now)
        log.info("batch %s: %d enqueued, %d already queued", batch_id, len(added), len(already))
        elsewhere = sorted({queued_in[i] for i in already} - {batch_id})
        return EnqueueResult(
            batch_id,
            tuple(added),
            tuple(already),
            tuple(invalid),
            queued_in=tuple(elsewhere),
            batch_exists=head is not None or bool(added),
        )

    def _validated(
        self,
        cases: Iterable[Case],
        parents: Mapping[str, Case],
        tick: Callable[[int, int], None] | None = None,
    ) -> list[Row_]:
        """Each case with its parent (the first of its provenance's parents that `parents`
        holds) and its findings; validated before the transaction, which stays short."""
        cases = list(cases)
        rows = []
        for done, case in enumerate(cases, 1):
            parent = next((parents[p] for p in case.provenance.parents if p in parents), None)
            rows.append((case, parent, self.validator(case)))
            if tick is not None and (done % 100 == 0 or done == len(cases)):
                tick(done, len(cases))
        return rows

    def _locked_batch(self, conn: Connection, batch_id: str, policy: str) -> Row | None:
        """The batch's row (None for a new batch), locked on PostgreSQL so that a concurrent
        close waits for these cases; refused when the batch has another policy."""
        head = conn.execute(
            self._lock(select(batches).where(batches.c.batch_id == batch_id))
        ).first()
        if head is not None and head.policy != policy:
            # the auto policy decides a whole batch: it must not approve the cases of a
            # human batch, nor leave cases pending, unnoticed, in an auto one
            raise UserError(
                f"batch {batch_id} has the {head.policy} policy, not {policy}; enqueue "
                f"with policy {head.policy}, or into another batch"
            )
        return head


def _make_or_check(
    conn: Connection, head: Row | None, batch_id: str, policy: str, note: str, now: str, new: bool
) -> None:
    """Make the batch when it is new and will hold `new` cases; refuse `new` cases for a
    closed batch."""
    # a new batch is made only for cases it will hold: one whose cases are all queued
    # elsewhere would sit empty in `review status`, never decided
    if head is None and new:
        conn.execute(
            batches.insert().values(batch_id=batch_id, created_at=now, policy=policy, note=note)
        )
    if head is not None and head.closed_at and new:
        # nobody could decide a case added now: a closed batch's decisions are final
        raise DecisionBlocked(
            f"batch {batch_id} was closed at {head.closed_at} (decided and exported); "
            "queue new cases in another batch"
        )


def _insert_items(
    conn: Connection,
    rows: list[Row_],
    queued_in: dict[str, str],
    batch_id: str,
    actor: str,
    now: str,
) -> tuple[list[str], list[str], list[str]]:
    """Insert the cases `queued_in` does not hold after the batch's last position, each with
    its audit row; the ids added, already queued and failing validation. Each case added goes
    into `queued_in` under `batch_id`: the same case again later in `rows` (a file holding it
    twice) is then already queued, in this batch."""
    added, already, invalid = [], [], []
    position = conn.execute(
        select(func.coalesce(func.max(items.c.position), 0)).where(items.c.batch_id == batch_id)
    ).scalar_one()
    for case, parent, findings in rows:
        if case.id in queued_in:
            already.append(case.id)
            continue
        queued_in[case.id] = batch_id
        position += 1
        valid = not any(f.severity == "error" for f in findings)
        conn.execute(
            items.insert().values(**_item_values(case, parent, findings, batch_id, position, now))
        )
        conn.execute(
            audit.insert().values(
                case_id=case.id,
                batch_id=batch_id,
                actor=actor,
                at=now,
                action="enqueue",
                before_json="{}",
                after_json=json.dumps({"status": "pending", "valid": valid}),
            )
        )
        added.append(case.id)
        if not valid:
            invalid.append(case.id)
    return added, already, invalid


def _item_values(
    case: Case, parent: Case | None, findings: list[Finding], batch_id: str, position: int, now: str
) -> dict[str, Any]:
    ops = case.provenance.operators
    return {
        "case_id": case.id,
        "batch_id": batch_id,
        "position": position,
        "status": "pending",
        "case_json": case.model_dump_json(),
        "current_id": case.id,
        "original_json": case.model_dump_json(),
        "parent_id": parent.id
        if parent
        else (case.provenance.parents[0] if case.provenance.parents else None),
        "parent_json": parent.model_dump_json() if parent else None,
        "findings_json": json.dumps([f.as_dict() for f in findings]),
        "valid": not any(f.severity == "error" for f in findings),
        "origin": case.provenance.origin,
        "operator": ops[-1].name if ops else "(none)",
        "intents": "," + ",".join(case.tags.intents) + ",",
        "category": case.tags.category,
        "version": 1,
        "edits_json": "[]",
        "auto_approved": False,
        "double_review": False,
        "enqueued_at": now,
    }


def _queued_in(conn: Connection, ids: list[str]) -> dict[str, str]:
    """Which of `ids` the queue holds already (as an item's key or as the id an edit gave it),
    each with the batch holding it."""
    if not ids:
        return {}
    rows = conn.execute(
        select(items.c.case_id, items.c.current_id, items.c.batch_id).where(
            or_(items.c.case_id.in_(ids), items.c.current_id.in_(ids))
        )
    )
    wanted = set(ids)
    return {i: r.batch_id for r in rows for i in (r.case_id, r.current_id) if i in wanted}
