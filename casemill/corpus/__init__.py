"""The versioned, content-addressed corpus store."""

from casemill.corpus.diff import VersionDiff, diff_versions, parse_version
from casemill.corpus.store import (
    CorpusStore,
    Manifest,
    approval_problem,
    existing_store,
    slice_counts,
    writable_corpus,
)
from casemill.corpus.verify import VerifyReport, verify_corpus

__all__ = [
    "CorpusStore",
    "Manifest",
    "VerifyReport",
    "VersionDiff",
    "approval_problem",
    "diff_versions",
    "existing_store",
    "parse_version",
    "slice_counts",
    "verify_corpus",
    "writable_corpus",
]
