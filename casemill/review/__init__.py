"""Human review: the queue store, terminal and web review, export into the corpus, and the flow
that waits for a batch to be decided. The stage API (`run_enqueue`, `run_export` with their
typed requests and outcomes) is what `casemill review` and the review flow call.

The web app (`casemill.review.web.create_app`) and the Prefect flow (`casemill.flows.review.review_batch`) are
imported from their modules, so that using the store does not import FastAPI or Prefect.
"""

from casemill.review.errors import (
    DecisionBlocked,
    EditRefused,
    LeaseHeld,
    NotFound,
    ReviewError,
    StaleWrite,
)
from casemill.review.export import ExportResult, export_batch, reviewed_case
from casemill.review.items import BatchStatus, BulkResult, EnqueueResult, Item, ItemFilter
from casemill.review.stage import (
    EnqueueOutcome,
    EnqueueRequest,
    ExportOutcome,
    ExportRequest,
    run_enqueue,
    run_export,
)
from casemill.review.store import AUTO_REVIEWER, AuditEntry, ReviewStore

__all__ = [
    "AUTO_REVIEWER",
    "AuditEntry",
    "BatchStatus",
    "BulkResult",
    "DecisionBlocked",
    "EditRefused",
    "EnqueueOutcome",
    "EnqueueRequest",
    "EnqueueResult",
    "ExportOutcome",
    "ExportRequest",
    "ExportResult",
    "Item",
    "ItemFilter",
    "LeaseHeld",
    "NotFound",
    "ReviewError",
    "ReviewStore",
    "StaleWrite",
    "export_batch",
    "reviewed_case",
    "run_enqueue",
    "run_export",
]
