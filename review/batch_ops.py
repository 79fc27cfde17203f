"""Batch-level operations of the review queue: bulk decisions by filter, the `auto` policy,
batch status, export marks and the audit log. Mixed into `ReviewStore`."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Row

from casemill.errors import UserError
from review.errors import DecisionBlocked, LeaseHeld, NotFound, StaleWrite
from review.items import BatchStatus, BulkResult, Item, ItemFilter, needs_label
from review.schema import audit, batches, items

log = logging.getLogger(__name__)

AUTO_REVIEWER = "auto"

NEEDS_GUESS = "needs a human label (observed behaviour, may be wrong)"

# a bulk decision on everything is asked for by name (status=pending), never by leaving the
# filter out; `casemill review approve/reject` refuses the same way (naming its --filter)
NEEDS_FILTER = "a bulk decision needs at least one filter (for everything pending: status=pending)"


@dataclass(frozen=True)
class AuditEntry:
    id: int
    case_id: str
    batch_id: str
    actor: str
    at: str
    action: str
    before: dict[str, Any]
    after: dict[str, Any]


class BatchOps:
    """Needs `engine`, `list`, `_decide`, `_write` and `_now` from `ReviewStore`."""

    # -- bulk --------------------------------------------------------------------------------
    def bulk_decide(
        self, flt: ItemFilter, decision: str, reviewer: str, reason: str | None = None
    ) -> BulkResult:
        """Approve or reject every item matching `flt` (pending ones unless the filter names a
        status). Items failing validation and items whose label is a low-confidence guess
        (`needs_label`) are never bulk-approved, and items another reviewer holds are skipped;
        all are listed in the result. An empty filter is refused
        (`NEEDS_FILTER`)."""
        if decision not in ("approved", "rejected"):
            raise UserError(f"decision must be approved or rejected, not {decision!r}")
        if flt.empty:
            raise UserError(NEEDS_FILTER)
        if decision == "rejected" and not (reason or "").strip():
            raise UserError("a bulk reject needs a reason (--reason)")
        if flt.status is None:
            flt = ItemFilter(**{**flt.__dict__, "status": "pending"})
        changed, skipped = [], []
        for item in self.list(flt):
            if item.status == decision:
                continue
            if decision == "approved" and needs_label(item.case):
                skipped.append((item.case_id, f"{NEEDS_GUESS}: approve it on its own"))
                continue
            try:
                self._decide(item.case_id, reviewer, item.version, decision, reason)
                changed.append(item.case_id)
            except (DecisionBlocked, LeaseHeld, StaleWrite) as exc:
                skipped.append((item.case_id, str(exc)))
        log.info(
            "bulk %s by %s on %s: %d changed, %d skipped",
            decision,
            reviewer,
            flt.describe(),
            len(changed),
            len(skipped),
        )
        return BulkResult(tuple(changed), tuple(skipped))

    def auto_decide(self, batch_id: str) -> BulkResult:
        """The `auto` policy: approve every pending item of the batch that passes every validator
        (reviewer `auto`, marked auto-approved); the others wait for a person. A case whose label
        is a low-confidence guess (mined with the `needs_label` label) always waits for a person:
        passing the validators says the label is consistent, not that it is right.

        Only a batch enqueued with the `auto` policy is decided so: the cases of a `human` batch
        wait for a person whoever asks (a `UserError`). A batch that was never made (its cases
        were all queued elsewhere already) has nothing to decide."""
        with self.engine.connect() as conn:
            policy = conn.execute(
                select(batches.c.policy).where(batches.c.batch_id == batch_id)
            ).scalar()
        if policy is not None and policy != "auto":
            raise UserError(
                f"batch {batch_id} has the {policy} policy: its cases wait for a person "
                "(the auto policy approves only a batch enqueued with policy auto)"
            )
        changed, skipped = [], []
        for item in self.list(ItemFilter(batch_id=batch_id, status="pending")):
            if not item.valid or item.findings:
                skipped.append((item.case_id, "fails validation: " + _first_finding_item(item)))
                continue
            if needs_label(item.case):
                skipped.append((item.case_id, NEEDS_GUESS))
                continue
            try:
                self._decide(
                    item.case_id,
                    AUTO_REVIEWER,
                    item.version,
                    "approved",
                    "auto policy: every validator passed",
                    auto=True,
                )
                changed.append(item.case_id)
            except (DecisionBlocked, LeaseHeld, StaleWrite) as exc:
                skipped.append((item.case_id, str(exc)))
        return BulkResult(tuple(changed), tuple(skipped))

    # -- batches -----------------------------------------------------------------------------
    def batch_status(self, batch_id: str) -> BatchStatus:
        """One batch's status, counted over its own items only (flows poll it while waiting)."""
        found = self._statuses(batch_id)
        if not found:
            raise NotFound(
                f"no batch {batch_id!r} in the review queue; see `casemill review status`"
            )
        return found[0]

    def batches(self) -> list[BatchStatus]:
        return self._statuses()

    def _statuses(self, batch_id: str | None = None) -> list[BatchStatus]:
        """The status of every batch, or of `batch_id` alone."""
        heads_q = select(batches)
        counts_q = select(
            items.c.batch_id, items.c.status, func.count(), func.count(items.c.exported_at)
        ).group_by(items.c.batch_id, items.c.status)
        if batch_id is not None:
            heads_q = heads_q.where(batches.c.batch_id == batch_id)
            counts_q = counts_q.where(items.c.batch_id == batch_id)
        with self.engine.connect() as conn:
            heads = {r.batch_id: r for r in conn.execute(heads_q)}
            counts = conn.execute(counts_q).all()
        per: dict[str, dict[str, int]] = {b: {} for b in heads}
        for batch_id, status, n, exported in counts:
            per.setdefault(batch_id, {})[status] = n
            per[batch_id]["exported"] = per[batch_id].get("exported", 0) + exported
        out = []
        for batch_id in sorted(per):
            c = per[batch_id]
            head = heads.get(batch_id)
            out.append(
                BatchStatus(
                    batch_id=batch_id,
                    policy=head.policy if head else "human",
                    total=sum(c.get(s, 0) for s in ("pending", "approved", "rejected")),
                    pending=c.get("pending", 0),
                    approved=c.get("approved", 0),
                    rejected=c.get("rejected", 0),
                    exported=c.get("exported", 0),
                    closed=bool(head and head.closed_at),
                )
            )
        return out

    def mark_exported(self, case_ids: Iterable[str], corpus_version: int | None, actor: str) -> int:
        n = 0
        now = self._now()
        with self.engine.begin() as conn:
            for case_id in case_ids:

                def change(row: Row, case_id: str = case_id) -> dict[str, Any]:
                    if row._mapping["status"] != "approved":
                        raise DecisionBlocked(f"case {case_id} is not approved")
                    return {"exported_at": now, "corpus_version": corpus_version}

                self._write(conn, case_id, actor, None, "export", change)
                n += 1
        return n

    def close_batch(self, batch_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                batches.update()
                .where(batches.c.batch_id == batch_id, batches.c.closed_at.is_(None))
                .values(closed_at=self._now())
            )

    def audit_log(
        self, case_id: str | None = None, batch_id: str | None = None
    ) -> list[AuditEntry]:
        stmt = select(audit).order_by(audit.c.id)
        if case_id:
            stmt = stmt.where(audit.c.case_id == case_id)
        if batch_id:
            stmt = stmt.where(audit.c.batch_id == batch_id)
        with self.engine.connect() as conn:
            return [
                AuditEntry(
                    r.id,
                    r.case_id,
                    r.batch_id,
                    r.actor,
                    r.at,
                    r.action,
                    json.loads(r.before_json),
                    json.loads(r.after_json),
                )
                for r in conn.execute(stmt)
            ]


def _first_finding_item(item: Item) -> str:
    return item.findings[0].message if item.findings else "invalid"
