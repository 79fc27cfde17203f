"""The review queue: claim with a lease, approve, edit, reject, undo, with optimistic
concurrency (a version per item) and an audit log of every change. Enqueueing is mixed in from
`enqueue_ops`, bulk decisions, batch status and export claims from `batch_ops`.

Every write reads the item, checks the caller's version and the lease, and updates the row only
where the version is still the one read (`UPDATE ... WHERE version = :read`), so a stale write is
refused with `StaleWrite`, never lost. The audit row is written in the same transaction.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, and_, func, or_, select
from sqlalchemy.engine import Connection, Row
from sqlalchemy.exc import OperationalError

from casemill.case.model import Case, ReviewEdit
from casemill.errors import UserError
from casemill.review.batch_ops import AUTO_REVIEWER, AuditEntry, BatchOps
from casemill.review.diff import json_changes
from casemill.review.enqueue_ops import POLICIES, EnqueueOps
from casemill.review.errors import DecisionBlocked, EditRefused, LeaseHeld, NotFound, StaleWrite
from casemill.review.export_claim import EXPORT_HOLDER, TAKE_OVER, export_holder
from casemill.review.items import Item, ItemFilter
from casemill.review.schema import (
    NAME_MAX,
    audit,
    batches,
    check_name,
    items,
    make_engine,
    migrate,
    now_iso,
    unreachable,
)
from casemill.review.validate import case_findings, parse_edited_case
from casemill.validation.findings import Finding

__all__ = ["AUTO_REVIEWER", "POLICIES", "AuditEntry", "ReviewStore"]

log = logging.getLogger(__name__)

DEFAULT_LEASE_S = 15 * 60


def _snapshot(m: Mapping[str, Any], with_case: bool = False) -> dict[str, Any]:
    snap = {
        "status": m["status"],
        "reviewer": m["reviewer"],
        "decided_at": m["decided_at"],
        "reason": m["reason"],
        "current_id": m["current_id"],
        "auto_approved": bool(m["auto_approved"]),
        "version": m["version"],
    }
    if with_case:
        snap["case"] = json.loads(m["case_json"])
        snap["edits"] = json.loads(m["edits_json"])
    return snap


class ReviewStore(EnqueueOps, BatchOps):
    """The queue over one SQLAlchemy engine. Thread-safe: each operation uses its own
    connection and transaction."""

    def __init__(
        self,
        engine: Engine,
        clock: Callable[[], datetime] | None = None,
        lease_s: float = DEFAULT_LEASE_S,
        validator: Callable[[Case], list[Finding]] = case_findings,
    ):
        self.engine = engine
        self.clock = clock or (lambda: datetime.now(UTC))
        self.lease_s = lease_s
        self.validator = validator
        try:
            migrate(engine, self.clock)
        except OperationalError as exc:  # no server, no such database, a locked file
            raise UserError(unreachable(engine, exc)) from exc

    @classmethod
    def open(cls, url: str, **kwargs: Any) -> ReviewStore:
        return cls(make_engine(url), **kwargs)

    def _now(self) -> str:
        return now_iso(self.clock)

    def _lock(self, stmt):  # noqa: ANN001, ANN202
        return stmt.with_for_update() if self.engine.dialect.name == "postgresql" else stmt

    # -- reading -----------------------------------------------------------------------------
    def get(self, case_id: str) -> Item:
        with self.engine.connect() as conn:
            row = conn.execute(select(items).where(items.c.case_id == case_id)).first()
        if row is None:
            raise NotFound(f"no case {case_id} in the review queue; see `casemill review status`")
        return Item.from_row(row)

    def _where(self, flt: ItemFilter | None):  # noqa: ANN202
        flt = flt or ItemFilter()
        conds = []
        if flt.status:
            conds.append(items.c.status == flt.status)
        if flt.batch_id:
            conds.append(items.c.batch_id == flt.batch_id)
        if flt.origin:
            conds.append(items.c.origin == flt.origin)
        if flt.operator:
            conds.append(items.c.operator == flt.operator)
        if flt.intent:
            # autoescape: an intent with % or _ matches itself, not every case
            conds.append(items.c.intents.contains(f",{flt.intent},", autoescape=True))
        if flt.valid is not None:
            conds.append(items.c.valid.is_(flt.valid))
        return and_(True, *conds)

    def list(
        self, flt: ItemFilter | None = None, limit: int | None = None, offset: int = 0
    ) -> list[Item]:
        stmt = (
            select(items)
            .where(self._where(flt))
            .order_by(items.c.batch_id, items.c.position)
            .offset(max(offset, 0))  # a negative OFFSET is an error on PostgreSQL
        )
        if limit is not None:
            stmt = stmt.limit(limit)
        with self.engine.connect() as conn:
            return [Item.from_row(r) for r in conn.execute(stmt)]

    def count(self, flt: ItemFilter | None = None) -> int:
        with self.engine.connect() as conn:
            return conn.execute(
                select(func.count()).select_from(items).where(self._where(flt))
            ).scalar_one()

    def facets(self) -> dict[str, list[str]]:
        """Distinct values of the filterable columns, for filter menus."""
        out: dict[str, list[str]] = {}
        with self.engine.connect() as conn:
            for name in ("batch_id", "origin", "operator"):
                out[name] = sorted(conn.execute(select(items.c[name]).distinct()).scalars())
            intents = set()
            for value in conn.execute(select(items.c.intents).distinct()).scalars():
                intents |= {i for i in value.split(",") if i}
        out["intent"] = sorted(intents)
        return out

    def neighbours(
        self, case_id: str, flt: ItemFilter | None = None
    ) -> tuple[str | None, str | None]:
        """The previous and next item ids around `case_id` in queue order within `flt`."""
        ids = [i.case_id for i in self.list(flt)] if flt else []
        if case_id not in ids:
            ids = [i.case_id for i in self.list(ItemFilter(batch_id=self.get(case_id).batch_id))]
        index = ids.index(case_id)
        prev_id = ids[index - 1] if index > 0 else None
        next_id = ids[index + 1] if index + 1 < len(ids) else None
        return prev_id, next_id

    # -- the write path ----------------------------------------------------------------------
    def _write(
        self,
        conn: Connection,
        case_id: str,
        actor: str,
        version: int | None,
        action: str,
        change: Callable[[Row], dict[str, Any]],
        with_case: bool = False,
    ) -> Item:
        check_name("reviewer", actor, NAME_MAX)
        row = conn.execute(self._lock(select(items).where(items.c.case_id == case_id))).first()
        if row is None:
            raise NotFound(f"no case {case_id} in the review queue")
        m = row._mapping
        if version is not None and m["version"] != version:
            raise StaleWrite(case_id, version, m["version"], m["changed_by"])
        values = change(row)
        values.update(version=m["version"] + 1, changed_by=actor)
        result = conn.execute(
            items.update()
            .where(items.c.case_id == case_id, items.c.version == m["version"])
            .values(**values)
        )
        if result.rowcount != 1:
            raise StaleWrite(case_id, m["version"], m["version"] + 1, None)
        after = {**dict(m), **values}
        conn.execute(
            audit.insert().values(
                case_id=case_id,
                batch_id=m["batch_id"],
                actor=actor,
                at=self._now(),
                action=action,
                before_json=json.dumps(_snapshot(m, with_case)),
                after_json=json.dumps(_snapshot(after, with_case)),
            )
        )
        return Item.from_mapping(after)

    def _check_lease(self, m: Mapping[str, Any], actor: str) -> None:
        self._check_not_exporting(m)
        holder = m["lease_holder"]
        if holder and holder != actor and (m["lease_expires"] or "") > self._now():
            raise LeaseHeld(m["case_id"], holder, m["lease_expires"])

    def _check_not_exporting(self, m: Mapping[str, Any]) -> None:
        """An export claimed the item (`claim_export`): it is being written to the corpus as it
        is, and nothing may change it until the export marks it exported or gives it back. The
        claim does not lapse: the corpus may hold the case already, so an export that died is
        finished by another (`TAKE_OVER`), never undone behind the corpus's back."""
        if export_holder(m):
            raise DecisionBlocked(
                f"case {m['case_id']} is being exported to the corpus; try again after the "
                f"export (if it died, finish it with `{TAKE_OVER}`)"
            )

    def _check_open(self, conn: Connection, m: Mapping[str, Any]) -> None:
        self._check_not_exporting(m)
        if m["exported_at"]:
            raise DecisionBlocked(
                f"case {m['case_id']} was exported to corpus version {m['corpus_version']}; "
                "it can no longer change here. To take it out of the corpus, retire it in a new "
                f"version: `casemill corpus retire {m['current_id']}`"
            )
        closed = conn.execute(
            select(batches.c.closed_at).where(batches.c.batch_id == m["batch_id"])
        ).scalar()
        if closed:
            raise DecisionBlocked(
                f"batch {m['batch_id']} was closed at {closed}; its decisions are final"
            )

    def _decide(
        self,
        case_id: str,
        actor: str,
        version: int | None,
        status: str,
        reason: str | None,
        auto: bool = False,
        conn: Connection | None = None,
    ) -> Item:
        if status == "rejected" and not (reason or "").strip():
            raise UserError(f"rejecting case {case_id} needs a reason")

        def change(row: Row) -> dict[str, Any]:
            m = row._mapping
            self._check_lease(m, actor)
            self._check_open(conn_, m)
            if status == "approved" and not m["valid"]:
                raise DecisionBlocked(
                    f"case {case_id} fails validation ({_first_finding(m)}); edit it or reject it"
                )
            return {
                "status": status,
                "reviewer": actor,
                "decided_at": self._now(),
                "reason": (reason or None),
                "auto_approved": auto,
                "lease_holder": None,
                "lease_expires": None,
            }

        action = "approve" if status == "approved" else "reject"
        if conn is not None:
            conn_ = conn
            return self._write(conn, case_id, actor, version, action, change)
        with self.engine.begin() as conn_:
            return self._write(conn_, case_id, actor, version, action, change)

    def approve(
        self, case_id: str, reviewer: str, version: int | None, notes: str | None = None
    ) -> Item:
        """Approve a case. `version` is the version the reviewer saw (None: whatever is current,
        for scripted decisions)."""
        return self._decide(case_id, reviewer, version, "approved", notes)

    def reject(self, case_id: str, reviewer: str, version: int | None, reason: str) -> Item:
        return self._decide(case_id, reviewer, version, "rejected", reason)

    def undo(self, case_id: str, actor: str, version: int | None) -> Item:
        """Take back a decision while the batch is open: the item is pending again."""
        with self.engine.begin() as conn:

            def change(row: Row) -> dict[str, Any]:
                m = row._mapping
                self._check_open(conn, m)
                if m["status"] == "pending":
                    raise DecisionBlocked(f"case {case_id} has no decision to undo")
                return {
                    "status": "pending",
                    "reviewer": None,
                    "decided_at": None,
                    "reason": None,
                    "auto_approved": False,
                }

            return self._write(conn, case_id, actor, version, "undo", change)

    def edit(
        self,
        case_id: str,
        reviewer: str,
        version: int | None,
        edited: Case | dict | str,
        approve: bool = False,
        notes: str | None = None,
    ) -> Item:
        """Replace the case with an edited one after validating it (model, then semantic checks).
        An invalid edit raises `EditRefused` with the findings and keeps the original. A valid
        edit gets a new content id; the item keeps its key and records the edit paths. Only a
        pending case is edited: a decided one is `DecisionBlocked` until the decision is undone."""
        item = self.get(case_id)
        new_case, findings = parse_edited_case(edited, self.validator)
        if new_case is None or any(f.severity == "error" for f in findings):
            raise EditRefused(case_id, findings)
        edits = _edits(item.case, new_case)
        if not edits:
            raise UserError(f"the edit of case {case_id} changes nothing")
        with self.engine.begin() as conn:

            def change(row: Row) -> dict[str, Any]:
                m = row._mapping
                self._check_lease(m, reviewer)
                self._check_open(conn, m)
                if m["status"] != "pending":
                    raise DecisionBlocked(
                        f"case {case_id} was {m['status']} by {m['reviewer']}; undo that decision "
                        "before editing it (an edit must not slip under someone's decision)"
                    )
                old = [
                    json.loads(e) if isinstance(e, str) else e for e in json.loads(m["edits_json"])
                ]
                merged = old + [e.model_dump(mode="json") for e in edits]
                return {
                    "case_json": new_case.model_dump_json(),
                    "current_id": new_case.id,
                    "findings_json": json.dumps([f.as_dict() for f in findings]),
                    "valid": True,
                    "edits_json": json.dumps(merged),
                }

            result = self._write(conn, case_id, reviewer, version, "edit", change, with_case=True)
            if approve:
                result = self._decide(
                    case_id, reviewer, result.version, "approved", notes, conn=conn
                )
        return result

    # -- claims ------------------------------------------------------------------------------
    def claim(self, case_id: str, reviewer: str, version: int | None = None) -> Item:
        """Take the lease on one item for `lease_s` seconds (refused while another holds it)."""
        _check_reviewer_name(reviewer)
        expires = now_iso(lambda: self.clock() + timedelta(seconds=self.lease_s))
        with self.engine.begin() as conn:

            def change(row: Row) -> dict[str, Any]:
                self._check_lease(row._mapping, reviewer)
                return {"lease_holder": reviewer, "lease_expires": expires}

            return self._write(conn, case_id, reviewer, version, "claim", change)

    def release(self, case_id: str, reviewer: str) -> Item:
        with self.engine.begin() as conn:

            def change(row: Row) -> dict[str, Any]:
                if row._mapping["lease_holder"] != reviewer:
                    raise DecisionBlocked(f"{reviewer} does not hold the lease on case {case_id}")
                return {"lease_holder": None, "lease_expires": None}

            return self._write(conn, case_id, reviewer, None, "release", change)

    def claim_next(
        self, reviewer: str, flt: ItemFilter | None = None, skip: Iterable[str] = ()
    ) -> Item | None:
        """The next pending item (queue order) that nobody else holds, leased to `reviewer`; an
        item `reviewer` already holds comes first. None when nothing is left."""
        _check_reviewer_name(reviewer)
        flt = ItemFilter(**{**(flt or ItemFilter()).__dict__, "status": "pending"})
        skip = set(skip)
        now = self._now()
        expires = now_iso(lambda: self.clock() + timedelta(seconds=self.lease_s))
        free = or_(
            items.c.lease_holder.is_(None),
            items.c.lease_holder == reviewer,
            items.c.lease_expires <= now,
        )
        stmt = select(items.c.case_id).where(self._where(flt), free)
        if skip:
            stmt = stmt.where(items.c.case_id.not_in(skip))
        stmt = stmt.order_by(
            (items.c.lease_holder == reviewer).desc(), items.c.batch_id, items.c.position
        ).limit(1)
        if self.engine.dialect.name == "postgresql":
            stmt = stmt.with_for_update(skip_locked=True)
        with self.engine.begin() as conn:
            case_id = conn.execute(stmt).scalar()
            if case_id is None:
                return None

            def change(row: Row) -> dict[str, Any]:
                return {"lease_holder": reviewer, "lease_expires": expires}

            return self._write(conn, case_id, reviewer, None, "claim", change)


def _edits(before: Case, after: Case) -> list[ReviewEdit]:
    """What an edit changed, path by path (not the id, which follows, nor the review)."""
    changes = json_changes(before.model_dump(mode="json"), after.model_dump(mode="json"))
    return [
        ReviewEdit(path=c.path, before=c.before, after=c.after)
        for c in changes
        if c.path != "id" and not c.path.startswith("review")
    ]


def _check_reviewer_name(reviewer: str) -> None:
    """A lease holder named like an export's claim would read as one."""
    if reviewer.startswith(EXPORT_HOLDER):
        raise UserError(f"reviewer {reviewer!r}: names starting {EXPORT_HOLDER!r} are the export's")


def _first_finding(m: Mapping[str, Any]) -> str:
    found = json.loads(m["findings_json"])
    return found[0]["message"] if found else "no findings"
