"""The versioned, content-addressed corpus store."""

from casemill.corpus.store import CorpusStore, Manifest, slice_counts

__all__ = ["CorpusStore", "Manifest", "slice_counts"]
