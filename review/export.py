"""Approved cases into the corpus, exactly once.

`export_batch` stamps each approved, not yet exported case with its review (status, reviewer,
time, notes, edits, auto-approved flag), writes them as a new corpus version and marks the items
exported. A mined case whose label was a guess (`needs_label`) and that a person approved is
labelled `labelled_in_review` instead (its provenance keeps the miner's confidence). A case already active in the corpus is not added again (the corpus store skips it), so
an export interrupted between the two steps is safe to run again. Rejected and pending cases
never reach the corpus.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from casemill.case.model import Case, Review
from casemill.corpus import CorpusStore
from review.items import NEEDS_LABEL, Item, ItemFilter
from review.store import AUTO_REVIEWER, ReviewStore

log = logging.getLogger(__name__)

LABELLED = "labelled_in_review"  # such a case once a person approved its label


@dataclass(frozen=True)
class ExportResult:
    batch_id: str | None
    corpus_version: int | None
    added: tuple[str, ...]
    already_in_corpus: tuple[str, ...]
    closed: bool

    def as_dict(self) -> dict:
        return {
            **self.__dict__,
            "added": list(self.added),
            "already_in_corpus": list(self.already_in_corpus),
        }


def reviewed_case(item: Item) -> Case:
    """The item's current case with its review stamped on (the id does not change: the review
    is not part of what a case means)."""
    decided = datetime.fromisoformat(item.decided_at) if item.decided_at else None
    review = Review(
        status="approved",
        reviewer=item.reviewer,
        decided_at=decided,
        notes=item.reason,
        edits=item.edits,
        auto_approved=item.auto_approved or item.reviewer == AUTO_REVIEWER,
    )
    data = item.case.model_dump(mode="json")
    data["review"] = review.model_dump(mode="json")
    labels = data["tags"]["labels"]
    if NEEDS_LABEL in labels and not review.auto_approved:  # a person gave the label
        data["tags"]["labels"] = [LABELLED if x == NEEDS_LABEL else x for x in labels]
    return Case.model_validate(data)


def export_batch(
    store: ReviewStore,
    corpus: CorpusStore,
    batch_id: str | None = None,
    actor: str = "export",
) -> ExportResult:
    """Write the approved, not yet exported cases of `batch_id` (all batches when None) as a new
    corpus version; mark them exported; close every batch that is then fully decided and
    exported."""
    if batch_id is not None:
        store.batch_status(batch_id)  # NotFound for a batch the queue does not have
    approved = [
        i for i in store.list(ItemFilter(batch_id=batch_id, status="approved")) if not i.exported_at
    ]
    active = corpus.active_ids()
    cases = [reviewed_case(i) for i in approved]
    fresh = [c for c in cases if c.id not in active]
    note = f"review batch {batch_id}" if batch_id else "review export"
    manifest = corpus.add_version(add=fresh, note=note) if fresh else None
    version = (
        manifest.version if manifest else (corpus.latest().version if corpus.latest() else None)
    )
    store.mark_exported([i.case_id for i in approved], version, actor)
    closed = False
    for status in store.batches():
        if batch_id not in (None, status.batch_id) or status.closed:
            continue
        if status.decided and status.exported == status.approved:
            store.close_batch(status.batch_id)
            closed = closed or status.batch_id == batch_id
    log.info("export %s: %d new cases in corpus version %s", note, len(fresh), version)
    return ExportResult(
        batch_id=batch_id,
        corpus_version=manifest.version if manifest else None,
        added=tuple(c.id for c in fresh),
        already_in_corpus=tuple(c.id for c in cases if c.id in active),
        closed=closed,
    )
