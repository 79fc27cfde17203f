"""The review stage as two typed calls: enqueue candidates, export approved cases.

`casemill review enqueue` / `casemill review export` and the `review-batch` flow each build a
request and call these functions, so both check the same inputs, look parents up in the same
places and write the same queue rows and corpus versions. The flow splits the enqueue in two
(`check_enqueue` before any task, `enqueue_part` as its task) and waits for reviewers between
the enqueue and the export; `run_enqueue` is those same two pieces in a row.

    >>> request = EnqueueRequest(db_url="sqlite:///q.db", cases_path=Path("candidates.jsonl"))
    >>> outcome = run_enqueue(request)  # doctest: +SKIP
    >>> outcome.summary()["added"]  # doctest: +SKIP
    12
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casemill.case.model import Case
from casemill.corpus import CorpusStore, writable_corpus
from casemill.errors import RecordError, UserError
from casemill.review.enqueue_ops import POLICIES
from casemill.review.errors import NotFound
from casemill.review.export import ExportResult, export_batch
from casemill.review.intake import enqueue_file, find_parents
from casemill.review.items import BatchStatus, BulkResult, EnqueueResult
from casemill.review.store import ReviewStore
from casemill.settings import Settings
from casemill.text import count

log = logging.getLogger(__name__)

Progress = Callable[[str], None]  # told what the stage is doing now, in a few words
Bar = Callable[[int, int], None]  # told how many of how many cases are done

# what `run_export` returns: the cases added, the version made, whether the batch closed
ExportOutcome = ExportResult

__all__ = [
    "POLICIES",
    "EnqueueOutcome",
    "EnqueueRequest",
    "ExportOutcome",
    "ExportRequest",
    "check_enqueue",
    "check_open",
    "enqueue_message",
    "enqueue_part",
    "export_message",
    "parent_lookup",
    "run_enqueue",
    "run_export",
    "summary_rows",
    "target_corpus",
]


@dataclass(frozen=True)
class EnqueueRequest:
    """What to enqueue, where from and how.

    Exactly one of `cases_path` (a JSONL file; bad lines go to a quarantine file beside it) and
    `cases` (case models or their JSON). `batch_id` None: the file's name and a hash of its
    case ids. Parents are looked up in the cases themselves, in `parents` (files or folders,
    which must exist) or else in `seeds_dir` (default: the settings' seeds folder) when it
    exists, and in the corpus. `corpus_dir` None: the settings' corpus_dir; with
    `require_corpus` it must be a corpus or an empty folder (it is where the cases will be
    exported), and errors name it as `corpus_option`; without, a missing one is not looked in.
    `refuse_closed` refuses a closed batch even when no case is new (a flow would otherwise
    wait on it)."""

    db_url: str
    cases_path: Path | None = None
    cases: tuple[Case | dict[str, Any], ...] | None = None
    batch_id: str | None = None
    parents: tuple[Path, ...] = ()
    seeds_dir: Path | None = None
    corpus_dir: Path | None = None
    corpus_option: str = "--corpus"
    require_corpus: bool = True
    refuse_closed: bool = False
    policy: str = "human"
    actor: str = "cli"

    def corpus_root(self) -> Path:
        """The corpus folder: `corpus_dir`, else the settings' one."""
        return self.corpus_dir if self.corpus_dir is not None else Settings().corpus_dir


@dataclass(frozen=True)
class EnqueueOutcome:
    """What an enqueue did: the queue's answer, the file's bad lines (quarantined), and the
    auto policy's decisions (None under the human policy)."""

    result: EnqueueResult
    bad_lines: tuple[RecordError, ...] = ()
    auto: BulkResult | None = None

    @property
    def batch_id(self) -> str:
        return self.result.batch_id

    def summary(self) -> dict[str, Any]:
        """The counts as `casemill review enqueue --json` prints them."""
        r = self.result
        return {
            "batch": r.batch_id,
            "added": len(r.added),
            "already_queued": len(r.already_queued),
            "failing_validation": len(r.invalid),
            "bad_lines": len(self.bad_lines),
            "auto_approved": len(self.auto.changed) if self.auto else 0,
            "batch_made": r.batch_exists,
            "queued_in": list(r.queued_in),
        }

    def counts(self) -> dict[str, Any]:
        """The counts as the review flow's enqueue task returns them."""
        s = self.summary()
        return {
            "added": s["added"],
            "already_queued": s["already_queued"],
            "invalid": s["failing_validation"],
            "quarantined": s["bad_lines"],
            "auto_approved": s["auto_approved"],
            "batch_made": s["batch_made"],
        }


@dataclass(frozen=True)
class ExportRequest:
    """Export the approved, not yet exported cases of `batch_id` (None: every batch) to the
    corpus at `corpus_dir` (None: the settings' corpus_dir), which must be a corpus or an empty
    folder; errors name it as `corpus_option`. `actor` is who the audit log says exported.
    `take_over` finishes the job of an export that died: it takes over the claims that export
    left (refused while its process still runs on this machine)."""

    db_url: str
    batch_id: str | None = None
    corpus_dir: Path | None = None
    corpus_option: str = "--corpus"
    actor: str = "export"
    take_over: bool = False
    new_domain: bool = False  # cases of a domain the corpus does not hold may join it


def target_corpus(corpus_dir: Path | None, option: str = "--corpus") -> CorpusStore:
    """The corpus cases are enqueued for and exported to: `corpus_dir`, else the settings'
    corpus_dir (CASEMILL_CORPUS_DIR, default ./corpus). It must exist and be a corpus, or an
    empty folder the user made to start one (`writable_corpus`). Checked before anything is
    enqueued or marked exported: an enqueue run from the wrong folder would otherwise find no
    parent (reviewers see no operator diff) and queue a batch that its export then refuses."""
    root = corpus_dir if corpus_dir is not None else Settings().corpus_dir
    if corpus_dir is None:
        option = "corpus_dir (settings)"
    start = f"to start a new corpus there, create the folder first (mkdir -p {root})"
    if not root.is_dir() and corpus_dir is None:
        raise UserError(
            f"{option} {root}: no such corpus folder (looked in {root.resolve()}); run from the "
            f"folder that holds the corpus, or name it with --corpus DIR or CASEMILL_CORPUS_DIR; "
            f"{start}"
        )
    if not root.is_dir() and option == "--corpus":
        raise UserError(f"--corpus {root}: no such corpus folder; {start}")
    return writable_corpus(root, option)


def parent_lookup(request: EnqueueRequest) -> tuple[list[Path], CorpusStore | None]:
    """Where the parents of the cases are looked up besides the cases themselves: the named
    parent files or folders, else the seeds when they exist; and the corpus when it exists.
    Without them a reviewer sees no parent and no operator diff for the cases an expansion
    made of the seeds."""
    if request.parents:
        sources = list(request.parents)
    else:
        seeds = request.seeds_dir if request.seeds_dir is not None else Settings().seeds_dir
        sources = [seeds] if seeds.exists() else []
    root = request.corpus_root()
    return sources, CorpusStore(root) if root.is_dir() else None


def check_open(store: ReviewStore, batch_id: str) -> None:
    """Refuse a batch that was closed (decided and exported; its decisions are final): the new
    cases would join it pending, no reviewer could decide them, and the flow would wait for
    them until its timeout."""
    try:
        closed = store.batch_status(batch_id).closed
    except NotFound:  # a new batch
        return
    if closed:
        raise UserError(
            f"review batch {batch_id!r} is closed (decided and exported): new cases cannot join "
            "it. Give each run a batch of its own: batch_id 'review-{datetime}' (or '{date}') "
            "is filled in with the run's scheduled start"
        )


def check_enqueue(request: EnqueueRequest, store: ReviewStore | None = None) -> None:
    """Refuse, before anything is enqueued, a request that cannot be done as asked: an unknown
    policy, no cases or two sources of them, a missing file, a mistyped parent path (parents
    would be looked up in nothing, silently), a corpus the cases cannot be exported to, and
    (with `refuse_closed`) a closed batch."""
    if request.policy not in POLICIES:
        raise UserError(f"policy must be one of {', '.join(POLICIES)}, not {request.policy!r}")
    if (request.cases_path is None) == (request.cases is None):
        raise UserError("give exactly one of cases_path or cases")
    if request.cases_path is not None and not request.cases_path.is_file():
        raise UserError(f"cases_path {request.cases_path}: no such file of candidate cases")
    if request.cases is not None and request.batch_id is None:
        raise UserError("cases given as a list need a batch id (batch_id)")
    missing = [str(p) for p in request.parents if not p.exists()]
    if missing:
        raise UserError(f"--parents {', '.join(missing)}: no such file or folder")
    if request.require_corpus:
        target_corpus(request.corpus_dir, request.corpus_option)
    if request.refuse_closed and request.batch_id is not None:
        check_open(store or ReviewStore.open(request.db_url), request.batch_id)


def enqueue_part(
    request: EnqueueRequest,
    store: ReviewStore | None = None,
    progress: Progress | None = None,
    bar: Bar | None = None,
) -> EnqueueOutcome:
    """Enqueue the request's cases with their parents, then apply the `auto` policy (approve
    every case passing every validator). The checks are `check_enqueue`'s; `bar(done, total)`
    is told how many cases are validated."""
    say = progress or (lambda _: None)
    store = store or ReviewStore.open(request.db_url)
    sources, corpus = parent_lookup(request)
    bad: tuple[RecordError, ...] = ()
    if request.cases_path is not None:
        say(f"enqueueing {request.cases_path}")
        result, loaded = enqueue_file(
            store,
            request.cases_path,
            request.batch_id,
            sources,
            corpus,
            policy=request.policy,
            actor=request.actor,
            tick=bar,
        )
        bad = loaded.errors
    else:
        models = [c if isinstance(c, Case) else Case.model_validate(c) for c in request.cases or ()]
        say(f"enqueueing {count(len(models), 'case')}")
        parents = find_parents(models, sources, corpus)
        result = store.enqueue(
            models,
            request.batch_id or "",
            parents=parents,
            policy=request.policy,
            actor=request.actor,
            tick=bar,
        )
    auto = None
    if request.policy == "auto":
        say(f"applying the auto policy to batch {result.batch_id}")
        auto = store.auto_decide(result.batch_id)
    return EnqueueOutcome(result, bad, auto)


def run_enqueue(
    request: EnqueueRequest,
    *,
    progress: Progress | None = None,
    store: ReviewStore | None = None,
    bar: Bar | None = None,
) -> EnqueueOutcome:
    """Check the request, then enqueue (`check_enqueue`, then `enqueue_part`). `store` is the
    queue to use instead of opening `request.db_url` (a test's, or a caller's open one)."""
    check_enqueue(request, store)
    return enqueue_part(request, store or ReviewStore.open(request.db_url), progress, bar)


def run_export(
    request: ExportRequest, *, progress: Progress | None = None, store: ReviewStore | None = None
) -> ExportOutcome:
    """Check the corpus, then write the approved, not yet exported cases as a new corpus
    version and mark them exported (`export_batch`)."""
    corpus = target_corpus(request.corpus_dir, request.corpus_option)
    store = store or ReviewStore.open(request.db_url)
    if progress:
        progress(f"exporting to {corpus.root}")
    return export_batch(
        store, corpus, request.batch_id, actor=request.actor, take_over=request.take_over,
        new_domain=request.new_domain,
    )  # fmt: skip


def enqueue_message(batch_id: str, counts: dict) -> str:
    """What the flow logs of its enqueue (`EnqueueOutcome.counts`), in words."""
    parts = [
        f"{counts['added']} queued",
        f"{counts['already_queued']} already queued",
        f"{counts['invalid']} failing validation",
        f"{counts['quarantined']} bad lines quarantined",
    ]
    if counts.get("auto_approved"):
        parts.append(f"{counts['auto_approved']} approved by the auto policy")
    return f"batch {batch_id}: " + ", ".join(parts)


def nothing_to_review_message(batch_id: str, counts: dict) -> str:
    """What the flow logs when its enqueue made no batch, so it has nothing to wait for."""
    return (
        f"batch {batch_id}: nothing to review, so no batch made ({counts['already_queued']} "
        "cases already queued in other batches, which export them, "
        f"{counts['quarantined']} bad lines); not waiting"
    )


def export_message(batch_id: str, exported: dict) -> str:
    """What the flow logs of its export: the cases added and the new version, or that the
    corpus is unchanged (not 'corpus version None')."""
    added, already = len(exported.get("added", ())), len(exported.get("already_in_corpus", ()))
    if added:
        version = exported["corpus_version"]
        return (
            f"batch {batch_id} exported: {count(added, 'case')} added to corpus version {version}"
        )
    return (
        f"batch {batch_id}: no approved case to add ({already} already in the corpus); "
        "the corpus is unchanged"
    )


def summary_rows(status: BatchStatus, exported: dict) -> list[dict[str, str]]:
    """The review flow's summary artifact: the batch's decisions and what the export added."""
    return [
        {"figure": "total", "value": str(status.total)},
        {"figure": "approved", "value": str(status.approved)},
        {"figure": "rejected", "value": str(status.rejected)},
        {"figure": "pending", "value": str(status.pending)},
        {"figure": "exported", "value": str(len(exported.get("added", ())))},
        {"figure": "corpus_version", "value": str(exported.get("corpus_version") or "unchanged")},
    ]
