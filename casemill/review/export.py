"""Approved cases into the corpus, exactly once.

`export_batch` stamps each approved, not yet exported case with its review (status, reviewer,
time, notes, edits, auto-approved flag), writes them as a new corpus version and marks the items
exported. A mined case whose label was a guess (`needs_label`) and that a person approved is
labelled `labelled_in_review` instead (its provenance keeps the miner's confidence). Rejected
and pending cases never reach the corpus.

Recoverable by design, in three steps each atomic: the items are claimed (one transaction, the
export's journal: see `export_claim`), the corpus version is written (atomic files), the items
are marked exported (one transaction). The claim does not lapse, so nobody can undo, reject or
edit a claimed case while the corpus may hold it. An export killed anywhere leaves either
nothing, or claims that a re-run with `take_over` rolls forward: a case the corpus already holds
is recognised (the corpus store never adds an active id twice) and marked exported, the others
are written.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from casemill.case.model import Case, Review
from casemill.corpus import CorpusStore
from casemill.review.errors import DecisionBlocked, NewDomainRefused
from casemill.review.items import NEEDS_LABEL, Item
from casemill.review.store import AUTO_REVIEWER, ReviewStore

log = logging.getLogger(__name__)

LABELLED = "labelled_in_review"  # such a case once a person approved its label


@dataclass(frozen=True)
class ExportResult:
    batch_id: str | None
    corpus_version: int | None
    added: tuple[str, ...]
    already_in_corpus: tuple[str, ...]
    closed: bool

    @classmethod
    def nothing(cls, batch_id: str | None) -> ExportResult:
        """The result of an export with nothing to export: no version made, no batch closed."""
        return cls(batch_id, None, (), (), False)

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
    take_over: bool = False,
    new_domain: bool = False,
) -> ExportResult:
    """Write the approved, not yet exported cases of `batch_id` (all batches when None) as a new
    corpus version; mark them exported; close every batch that is then fully decided and
    exported.

    The items are claimed first (`ReviewStore.claim_export`, one transaction): while the corpus
    is written nobody can undo, reject or edit them, so what the corpus gets is what the queue
    says was approved. They are marked exported in one transaction against the versions they were
    claimed at; when writing the corpus fails they are given back, decidable again. Items another
    export claimed are refused, naming it, unless `take_over`: that export died, and this one
    finishes its job (`ReviewStore.claim_export`). Cases of a domain a non-empty corpus does
    not hold are refused (`NewDomainRefused`, the claims given back) unless `new_domain`: a
    corpus of support cases does not silently become one of tau2-retail cases as well."""
    if batch_id is not None:
        store.batch_status(batch_id)  # NotFound for a batch the queue does not have
    claimed = store.claim_export(batch_id, actor, take_over=take_over)
    note = f"review batch {batch_id}" if batch_id else "review export"
    try:
        cases = [reviewed_case(i) for i in claimed]
        active = corpus.active_ids()
        fresh = [c for c in cases if c.id not in active]
        if not new_domain and active:
            _check_domains(corpus, fresh)
        manifest = corpus.add_version(add=fresh, note=note) if fresh else None
    except BaseException:
        _settle_failed(store, corpus, claimed, actor)
        raise
    latest = manifest or corpus.latest()
    version = latest.version if latest else None
    taken = store.mark_exported(claimed, version, actor)
    if taken:
        raise DecisionBlocked(
            f"{len(taken)} case(s) were taken over by another export (`--take-over`) while "
            f"this one wrote corpus version {version} (first: {', '.join(taken[:3])}); that "
            "export marks them; check with `casemill review status`"
        )
    closed = _close_done(store, batch_id)
    log.info("export %s: %d new cases in corpus version %s", note, len(fresh), version)
    return ExportResult(
        batch_id=batch_id,
        corpus_version=manifest.version if manifest else None,
        added=tuple(c.id for c in fresh),
        already_in_corpus=tuple(c.id for c in cases if c.id in active),
        closed=closed,
    )


def _check_domains(corpus: CorpusStore, fresh: list[Case]) -> None:
    held = {c.domain for c in corpus.cases()}
    new = Counter(c.domain for c in fresh if c.domain not in held)
    if new:
        raise NewDomainRefused(str(corpus.root), held, dict(new))


def _close_done(store: ReviewStore, batch_id: str | None) -> bool:
    """Close `batch_id` (every batch when None) if it is now fully decided and exported;
    whether `batch_id` itself was closed now."""
    closed = False
    for status in store.batches():
        if batch_id not in (None, status.batch_id) or status.closed:
            continue
        # checked again where it is closed: a reviewer may decide or undo meanwhile
        done = status.decided and status.exported == status.approved
        if done and store.close_if_done(status.batch_id):
            closed = closed or status.batch_id == batch_id
    return closed


def _settle_failed(
    store: ReviewStore, corpus: CorpusStore, claimed: tuple[Item, ...], actor: str
) -> None:
    """After a failed (or interrupted) corpus write, make the queue agree with the corpus: the
    claimed items whose case it holds are marked exported, the others are given back. When the
    corpus cannot even be read, the claim is kept: `casemill review export --take-over`, once
    the corpus can be read, finishes the job."""
    try:
        active = corpus.active_ids()
        latest = corpus.latest()
    except Exception:  # noqa: BLE001 - the write's own error is the one raised
        log.exception("export failed and the corpus cannot be read; the claim is kept")
        return
    held = [i for i in claimed if i.case.id in active]
    if held and latest is not None:
        store.mark_exported(held, latest.version, actor)
    else:
        held = []
    store.release_export([i for i in claimed if i not in held], actor)
    log.warning(
        "export failed: %d claimed case(s) given back, %d already in the corpus marked exported",
        len(claimed) - len(held),
        len(held),
    )
