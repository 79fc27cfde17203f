"""Typed views of the queue: an item, a filter, the results of enqueue and bulk decisions."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from casemill.case.model import Case, ReviewEdit
from casemill.validation.findings import Finding

Status = Literal["pending", "approved", "rejected"]
STATUSES: tuple[str, ...] = ("pending", "approved", "rejected")
DECISIONS: tuple[str, ...] = ("approved", "rejected")
NEEDS_LABEL = "needs_label"


def needs_label(case: Case) -> bool:
    """A mined case whose expected behaviour is a guess (what the logged agent did, or an
    outcome inferred from a reply): passing the validators says the label is consistent, not
    that it is right, so a person must look at the label itself."""
    return NEEDS_LABEL in case.tags.labels or case.provenance.label_confidence == "low"


@dataclass(frozen=True)
class Item:
    """One case in the queue. `case_id` is the id the case had when it was enqueued and stays the
    item's key; `case.id` is the id of the current (possibly edited) case."""

    case_id: str
    batch_id: str
    position: int
    status: str
    case_json: str
    parent_json: str | None
    findings_json: str
    valid: bool
    origin: str
    operator: str
    intents: tuple[str, ...]
    category: str
    version: int
    lease_holder: str | None = None
    lease_expires: str | None = None
    reviewer: str | None = None
    decided_at: str | None = None
    reason: str | None = None
    edits: tuple[ReviewEdit, ...] = ()
    auto_approved: bool = False
    double_review: bool = False
    changed_by: str | None = None
    exported_at: str | None = None
    corpus_version: int | None = None

    # The case and its parent are parsed on first use: a decision does not pay for it.
    @functools.cached_property
    def case(self) -> Case:
        return Case.model_validate_json(self.case_json)

    @functools.cached_property
    def parent(self) -> Case | None:
        return Case.model_validate_json(self.parent_json) if self.parent_json else None

    @functools.cached_property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(Finding(**f) for f in json.loads(self.findings_json))

    @property
    def edited(self) -> bool:
        return bool(self.edits)

    @classmethod
    def from_row(cls, row: Any) -> Item:
        return cls.from_mapping(row._mapping)

    @classmethod
    def from_mapping(cls, m: Any) -> Item:
        return cls(
            case_id=m["case_id"],
            batch_id=m["batch_id"],
            position=m["position"],
            status=m["status"],
            case_json=m["case_json"],
            parent_json=m["parent_json"],
            findings_json=m["findings_json"],
            valid=bool(m["valid"]),
            origin=m["origin"],
            operator=m["operator"],
            intents=tuple(i for i in m["intents"].split(",") if i),
            category=m["category"],
            version=m["version"],
            lease_holder=m["lease_holder"],
            lease_expires=m["lease_expires"],
            reviewer=m["reviewer"],
            decided_at=m["decided_at"],
            reason=m["reason"],
            edits=tuple(ReviewEdit(**e) for e in json.loads(m["edits_json"])),
            auto_approved=bool(m["auto_approved"]),
            double_review=bool(m["double_review"]),
            changed_by=m["changed_by"],
            exported_at=m["exported_at"],
            corpus_version=m["corpus_version"],
        )


@dataclass(frozen=True)
class ItemFilter:
    """Which items a listing or a bulk decision concerns; None means any."""

    status: str | None = None
    batch_id: str | None = None
    origin: str | None = None
    operator: str | None = None
    intent: str | None = None
    valid: bool | None = None

    @classmethod
    def parse(cls, pairs: list[str] | tuple[str, ...]) -> ItemFilter:
        """From `key=value` strings (`status=pending`, `batch=b1`, `origin=generated`,
        `operator=typos`, `intent=refund`, `valid=true`)."""
        from casemill.errors import UserError

        values: dict[str, Any] = {}
        keys = {"status", "batch", "batch_id", "origin", "operator", "intent", "valid"}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            key = key.strip()
            if not sep or key not in keys or not value.strip():
                raise UserError(
                    f"filter {pair!r}: expected KEY=VALUE with KEY one of "
                    "status, batch, origin, operator, intent, valid"
                )
            value = value.strip()
            if key == "valid":
                if value.lower() not in ("1", "true", "yes", "0", "false", "no"):
                    raise UserError(f"filter {pair!r}: valid is true or false")
                values["valid"] = value.lower() in ("1", "true", "yes")
            elif key == "status" and value not in STATUSES:
                raise UserError(f"filter {pair!r}: status is one of {', '.join(STATUSES)}")
            else:
                values["batch_id" if key == "batch" else key] = value
        return cls(**values)

    @property
    def empty(self) -> bool:
        """True when the filter names nothing (it matches every item)."""
        return all(v is None for v in self.__dict__.values())

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in self.__dict__.items() if v is not None]
        return " ".join(parts) or "(all)"


def checked_filter(store: Any, pairs: list[str] | tuple[str, ...] | None) -> ItemFilter:
    """`ItemFilter.parse(pairs)`, checked against the queue of `store` (a `ReviewStore`): a
    batch the queue does not have is an error (`NotFound`), and so is an origin, operator or
    intent no case in the queue has (a typo such as `operator=typos` for `keyboard_typo`), not a
    filter that quietly matches nothing."""
    from casemill.errors import UserError

    flt = ItemFilter.parse(pairs or [])
    if flt.batch_id is not None:
        store.batch_status(flt.batch_id)
    named = {k: getattr(flt, k) for k in ("origin", "operator", "intent")}
    if any(v is not None for v in named.values()):
        facets = store.facets()
        for key, value in named.items():
            if value is not None and value not in facets[key]:
                raise UserError(_unknown_value(key, value, facets[key]))
    return flt


def _unknown_value(key: str, value: str, known: list[str]) -> str:
    shown = ", ".join(known[:20]) + (f" and {len(known) - 20} more" if len(known) > 20 else "")
    has = f"the queue has {shown}" if known else "the queue is empty"
    return f"filter {key}={value}: no case in the queue has {key} {value!r}; {has}"


@dataclass(frozen=True)
class EnqueueResult:
    batch_id: str
    added: tuple[str, ...] = ()
    already_queued: tuple[str, ...] = ()
    invalid: tuple[str, ...] = field(default=(), metadata={"doc": "added, but with error findings"})
    queued_in: tuple[str, ...] = field(
        default=(), metadata={"doc": "the other batches holding the already queued cases"}
    )
    batch_exists: bool = field(
        default=True, metadata={"doc": "False when nothing was added to a batch not made before"}
    )


@dataclass(frozen=True)
class BulkResult:
    changed: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()  # (case id, why)


@dataclass(frozen=True)
class BatchStatus:
    batch_id: str
    policy: str
    total: int
    pending: int
    approved: int
    rejected: int
    exported: int
    closed: bool

    @property
    def decided(self) -> bool:
        return self.total > 0 and self.pending == 0

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "decided": self.decided}
