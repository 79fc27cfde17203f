"""The versioned, content-addressed corpus store."""

from casemill.corpus.store import CorpusStore, Manifest, existing_store, slice_counts
from casemill.corpus.verify import VerifyReport, verify_corpus

__all__ = [
    "CorpusStore",
    "Manifest",
    "VerifyReport",
    "existing_store",
    "slice_counts",
    "verify_corpus",
]
