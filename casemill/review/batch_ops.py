"""Batch-level operations of the review queue: bulk decisions by filter, the `auto` policy,
batch status, export claims and marks, and the audit log. Mixed into `ReviewStore`."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.engine import Row

from casemill.errors import UserError
from casemill.review.errors import DecisionBlocked, LeaseHeld, NotFound, StaleWrite
from casemill.review.items import BatchStatus, BulkResult, Item, ItemFilter, needs_label
from casemill.review.schema import audit, batches, items, now_iso

log = logging.getLogger(__name__)

AUTO_REVIEWER = "auto"

# an export's claim on the items it writes is a lease held by "export:<run id>" (a reviewer's
# name may not start so); it lapses after `export_lease_s` should the export die
EXPORT_HOLDER = "export:"
DEFAULT_EXPORT_LEASE_S = 60 * 60

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
    """Needs `engine`, `clock`, `export_lease_s`, `list`, `_where`, `_lock`, `_decide`, `_write` and
    `_now` from `ReviewStore`."""

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

    # -- export claims -----------------------------------------------------------------------
    def claim_export(self, batch_id: str | None, actor: str) -> tuple[Item, ...]:
        """Claim every approved, not yet exported item of `batch_id` (every batch when None) for
        an export, in one transaction, and return them as claimed: their versions are the ones
        `mark_exported` and `release_export` write against. Until then (or until the claim lapses
        after `export_lease_s`), undo, decisions, edits and leases on them are refused, so the
        corpus gets only cases still approved when it is written. An item another export holds
        is refused (`DecisionBlocked`) and nothing is claimed."""
        holder = EXPORT_HOLDER + uuid.uuid4().hex[:12]
        now = self._now()
        expires = now_iso(lambda: self.clock() + timedelta(seconds=self.export_lease_s))
        stmt = self._lock(
            select(items)
            .where(
                self._where(ItemFilter(batch_id=batch_id, status="approved")),
                items.c.exported_at.is_(None),
            )
            .order_by(items.c.batch_id, items.c.position)
        )

        def change(row: Row) -> dict[str, Any]:
            return {"lease_holder": holder, "lease_expires": expires}

        claimed = []
        with self.engine.begin() as conn:
            for row in conn.execute(stmt).all():
                m = row._mapping
                if exporting_until(m, now):
                    raise DecisionBlocked(
                        f"case {m['case_id']} of batch {m['batch_id']} is being exported by "
                        f"another export (its claim lapses at {m['lease_expires'][:16]} UTC); "
                        "run the export again after that one"
                    )
                claimed.append(
                    self._write(conn, m["case_id"], actor, m["version"], "claim", change)
                )
        return tuple(claimed)

    def release_export(self, claimed: Iterable[Item], actor: str) -> tuple[str, ...]:
        """Give claimed items back after a failed export (one transaction): they are approved
        and decidable again. Returns the ids given back; an item changed since its claim lapsed
        is left as it is."""
        released = []
        with self.engine.begin() as conn:
            for item in claimed:
                try:
                    self._write(conn, item.case_id, actor, item.version, "release", _unlease)
                except StaleWrite:
                    continue
                released.append(item.case_id)
        return tuple(released)

    def mark_exported(
        self, claimed: Iterable[Item], corpus_version: int | None, actor: str
    ) -> tuple[str, ...]:
        """Mark claimed items exported to `corpus_version` (one transaction), each only while it
        is as it was claimed. Returns the ids that were not: items changed after their claim
        lapsed, which the corpus holds although the queue changed them."""
        now = self._now()

        def change(row: Row) -> dict[str, Any]:
            return {**_unlease(row), "exported_at": now, "corpus_version": corpus_version}

        lapsed = []
        with self.engine.begin() as conn:
            for item in claimed:
                try:
                    self._write(conn, item.case_id, actor, item.version, "export", change)
                except StaleWrite:
                    lapsed.append(item.case_id)
        return tuple(lapsed)

    def close_if_done(self, batch_id: str) -> bool:
        """Close `batch_id` when it is fully decided and every approved case exported, as the
        queue holds it now: decided in one transaction that first locks the batch's row and its
        items' (PostgreSQL; SQLite's `BEGIN IMMEDIATE` serialises writers), so a decision, undo
        or enqueue in flight either lands before the check or is refused after it as a closed
        batch's. Returns whether this call closed it."""
        with self.engine.begin() as conn:
            head = conn.execute(
                self._lock(select(batches.c.closed_at).where(batches.c.batch_id == batch_id))
            ).first()
            if head is None or head.closed_at:
                return False
            conn.execute(self._lock(select(items.c.case_id).where(items.c.batch_id == batch_id)))
            undone = conn.execute(
                select(func.count())
                .select_from(items)
                .where(
                    items.c.batch_id == batch_id,
                    or_(
                        items.c.status == "pending",
                        and_(items.c.status == "approved", items.c.exported_at.is_(None)),
                    ),
                )
            ).scalar_one()
            if undone:
                return False
            conn.execute(
                batches.update()
                .where(batches.c.batch_id == batch_id, batches.c.closed_at.is_(None))
                .values(closed_at=self._now())
            )
            return True

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


def exporting_until(m: Mapping[str, Any], now: str) -> str | None:
    """When the export claim on a row lapses, while an export holds it; else None."""
    holder, expires = m["lease_holder"] or "", m["lease_expires"] or ""
    return expires if holder.startswith(EXPORT_HOLDER) and expires > now else None


def _unlease(_row: Row) -> dict[str, Any]:
    return {"lease_holder": None, "lease_expires": None}


def _first_finding_item(item: Item) -> str:
    return item.findings[0].message if item.findings else "invalid"
