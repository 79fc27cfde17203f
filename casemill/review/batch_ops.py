"""Batch-level operations of the review queue: bulk decisions by filter, the `auto` policy,
batch status, export claims and marks, and the audit log. Mixed into `ReviewStore`."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.engine import Connection, Row

from casemill.errors import UserError
from casemill.review.errors import DecisionBlocked, LeaseHeld, NotFound, StaleWrite
from casemill.review.export_claim import (
    ExportClaim,
    export_holder,
    new_holder,
    refuse_held,
    refuse_take_over,
)
from casemill.review.items import BatchStatus, BulkResult, Item, ItemFilter, needs_label
from casemill.review.schema import audit, batches, items

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
    """Needs `engine`, `clock`, `list`, `_where`, `_lock`, `_decide`, `_write` and
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
    def claim_export(
        self, batch_id: str | None, actor: str, take_over: bool = False
    ) -> tuple[Item, ...]:
        """Claim every approved, not yet exported item of `batch_id` (every batch when None) for
        an export, in one transaction, and return them as claimed: their versions are the ones
        `mark_exported` and `release_export` write against. Until then, undo, decisions, edits
        and leases on them are refused, so the corpus gets only cases still approved when it is
        written. The claim never lapses on its own (see `export_claim`): an item another export
        holds is refused (`DecisionBlocked`, naming that export) and nothing is claimed, unless
        `take_over`, which takes the claims of an export that died (refused while its process
        still runs on this machine)."""
        holder = new_holder()
        stmt = self._lock(
            select(items)
            .where(
                self._where(ItemFilter(batch_id=batch_id, status="approved")),
                items.c.exported_at.is_(None),
            )
            .order_by(items.c.batch_id, items.c.position)
        )

        def change(row: Row) -> dict[str, Any]:
            return {"lease_holder": holder, "lease_expires": None}

        claimed = []
        with self.engine.begin() as conn:
            rows = [r._mapping for r in conn.execute(stmt).all()]
            self._check_claims(conn, [m for m in rows if export_holder(m)], take_over)
            for m in rows:
                action = "take-over" if export_holder(m) else "claim"
                claimed.append(self._write(conn, m["case_id"], actor, m["version"], action, change))
        taken = sum(1 for m in rows if export_holder(m))
        if taken:
            log.warning("%s took over the claims of a dead export on %d case(s)", holder, taken)
        return tuple(claimed)

    def _check_claims(
        self, conn: Connection, held: list[Mapping[str, Any]], take_over: bool
    ) -> None:
        """Refuse the items other exports hold: without `take_over` always (naming the first
        holder and the command to take over); with it, when a holding process still runs on
        this machine."""
        now = self.clock()
        if held and not take_over:
            m = held[0]
            raise refuse_held(self._export_claim(conn, m), m["case_id"], m["batch_id"], now)
        seen: set[str] = set()
        for m in held:
            if m["lease_holder"] in seen:
                continue
            seen.add(m["lease_holder"])
            refusal = refuse_take_over(self._export_claim(conn, m), now)
            if refusal is not None:
                raise refusal

    def _export_claim(self, conn: Connection, m: Mapping[str, Any]) -> ExportClaim:
        """The claim an export holds on the item `m`, with who ran it and when (the audit
        row of its claim)."""
        row = conn.execute(
            select(audit.c.actor, audit.c.at)
            .where(audit.c.case_id == m["case_id"], audit.c.action.in_(("claim", "take-over")))
            .order_by(audit.c.id.desc())
            .limit(1)
        ).first()
        return ExportClaim.parse(m["lease_holder"], *(row or (None, None)))

    def release_export(self, claimed: Iterable[Item], actor: str) -> tuple[str, ...]:
        """Give claimed items back after a failed export (one transaction): they are approved
        and decidable again. Returns the ids given back; an item changed since its claim (taken
        over by another export) is left as it is."""
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
        is as it was claimed. Returns the ids that were not: items another export took over
        meanwhile (`claim_export(take_over=True)`), whose marking is that export's."""
        now = self._now()

        def change(row: Row) -> dict[str, Any]:
            return {**_unlease(row), "exported_at": now, "corpus_version": corpus_version}

        taken = []
        with self.engine.begin() as conn:
            for item in claimed:
                try:
                    self._write(conn, item.case_id, actor, item.version, "export", change)
                except StaleWrite:
                    taken.append(item.case_id)
        return tuple(taken)

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


def _unlease(_row: Row) -> dict[str, Any]:
    return {"lease_holder": None, "lease_expires": None}


def _first_finding_item(item: Item) -> str:
    return item.findings[0].message if item.findings else "invalid"
