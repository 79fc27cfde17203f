"""Deduplication of mined candidates, within the logs and against an existing corpus.

The rule is `casemill.dedup`'s: two cases are duplicates when they have the same content id, or
the same signature (domain, outcome, expected and forbidden calls, faults, environment) and
customer text whose MinHash Jaccard similarity reaches the threshold. Against the corpus the
shared `NearDuplicateIndex` is used as is. Within the logs, where a long log yields far more
cases than fit in memory, the cases seen so far are kept on disk (SQLite in a temporary file)
by case kind and signature, and the similarity of texts is only computed (exactly, on the same
3-character shingles MinHash estimates from) when two cases share both, so memory does not grow
with the size of the log (a Bloom filter of fixed size tells a new signature, the common case,
without asking the table). A decision-point case and a conversation-level case never duplicate
each other: they test different things.
"""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import orjson

from casemill.case.model import Case
from casemill.dedup import (
    DEFAULT_THRESHOLD,
    NearDuplicateIndex,
    case_text,
    shingles,
)
from casemill.mining.model import PackedCase

Verdict = Literal["corpus", "within_logs"] | None

_BLOOM_BITS = 1 << 23  # 1 MB: about 0.2% false positives at 350,000 cases (a 1 GB log)
_BLOOM_HEX = 8  # hex digits of the signature per bit position
_QUEUE = 1000  # new cases remembered per statement
_SHINGLES_KEPT = 200_000  # shingles of recently compared texts kept (about 10 MB), by text


def _sorted_json(values) -> list[str]:
    return sorted(
        orjson.dumps(v.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS).decode()
        for v in values
    )


def signature(case: Case) -> str:
    """`casemill.dedup.case_signature`'s fields (hashed with orjson, which is several times
    faster on large environments) and the case kind."""
    e = case.expected
    ops = case.provenance.operators
    blob = orjson.dumps(
        [
            ops[-1].name if ops else "",
            case.domain,
            e.outcome,
            _sorted_json(e.tool_calls),
            _sorted_json(e.forbidden_calls),
            [f.model_dump(mode="json") for f in case.environment.faults],
            case.environment.state,
        ],
        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
        default=str,
    )
    return hashlib.sha256(blob).hexdigest()[:32]


class MinedDeduper:
    def __init__(
        self,
        existing: Iterable[Case] = (),
        threshold: float = DEFAULT_THRESHOLD,
        workdir: str | Path | None = None,
    ):
        self.threshold = threshold
        # the MinHash index only when there is a corpus to compare with: building one imports
        # datasketch and scipy (about a second), which mining a log alone never needs
        self.corpus: NearDuplicateIndex | None = None
        for case in existing:
            if self.corpus is None:
                self.corpus = NearDuplicateIndex(threshold=threshold)
            self.corpus.add(case)
        self._dir = tempfile.TemporaryDirectory(prefix="casemill-dedup-", dir=workdir)
        self._db = sqlite3.connect(Path(self._dir.name) / "seen.sqlite", isolation_level=None)
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("PRAGMA cache_size=-8000")  # 8 MB page cache
        self._db.execute("CREATE TABLE seen (sig TEXT, id TEXT, text TEXT)")
        self._db.execute("CREATE INDEX seen_sig ON seen (sig)")
        self._db.execute("BEGIN")
        self._pending = 0
        # the signatures seen, as bits of a Bloom filter of fixed size: a signature it has not
        # seen (the common case) is new for certain, and its case is queued to be remembered
        # with others in one statement; the queue is written before any look-up, so the table
        # always holds every case seen so far, in order, when it is asked
        self._seen = bytearray(_BLOOM_BITS // 8)
        self._queue: list[tuple[str, str, str]] = []
        # the shingles of texts compared lately: a group of cases sharing a signature compares
        # each newcomer with the same earlier texts; bounded, least recently used out first
        self._shingles: dict[str, set[bytes]] = {}
        self._shingles_kept = 0

    def check(self, case: Case | PackedCase) -> tuple[Verdict, str | None]:
        """(where the duplicate is, its id), or (None, None) after remembering `case`."""
        if self.corpus is not None:
            dup = self.corpus.duplicate_of(case.case() if isinstance(case, PackedCase) else case)
            if dup is not None:
                return "corpus", dup
        if isinstance(case, PackedCase):
            sig, text = case.signature, case.text
        else:
            sig, text = signature(case), case_text(case)
        if self._maybe_seen(sig):
            self._flush()
            # remembered at once when no case seen so far shares the signature (a false
            # positive of the filter); otherwise compared with those that do
            added = self._db.execute(
                "INSERT INTO seen SELECT ?, ?, ? "
                "WHERE NOT EXISTS (SELECT 1 FROM seen WHERE sig = ?)",
                (sig, case.id, text, sig),
            ).rowcount
            if not added:
                dup = self._within(sig, case.id, text)
                if dup is not None:
                    return "within_logs", dup
                self._db.execute("INSERT INTO seen VALUES (?, ?, ?)", (sig, case.id, text))
        else:
            self._queue.append((sig, case.id, text))
            if len(self._queue) >= _QUEUE:
                self._flush()
        self._pending += 1
        if self._pending >= 5000:
            self._flush()
            self._db.execute("COMMIT")
            self._db.execute("BEGIN")
            self._pending = 0
        return None, None

    def _maybe_seen(self, sig: str) -> bool:
        """Whether `sig` may have been seen (no: certainly not); marks it seen."""
        seen, maybe = self._seen, True
        for i in range(0, 3 * _BLOOM_HEX, _BLOOM_HEX):  # 3 bit positions from the hash's hex
            bit = int(sig[i : i + _BLOOM_HEX], 16) % _BLOOM_BITS
            byte, mask = bit >> 3, 1 << (bit & 7)
            if not seen[byte] & mask:
                maybe = False
                seen[byte] |= mask
        return maybe

    def _flush(self) -> None:
        if self._queue:
            self._db.executemany("INSERT INTO seen VALUES (?, ?, ?)", self._queue)
            self._queue.clear()

    def _within(self, sig: str, case_id: str, text: str) -> str | None:
        """The id of a case seen with the same signature that `case_id` duplicates."""
        rows = self._db.execute("SELECT id, text FROM seen WHERE sig = ?", (sig,)).fetchall()
        for other_id, other_text in rows:
            if other_id == case_id or other_text == text:
                return other_id
        mine = self._shingles_of(text)
        for other_id, other_text in rows:
            theirs = self._shingles_of(other_text)
            common = len(mine & theirs)  # the union's size follows, without building it
            if common >= self.threshold * (len(mine) + len(theirs) - common):
                return other_id
        return None

    def _shingles_of(self, text: str) -> set[bytes]:
        """`shingles(text)`, remembered for the texts compared lately."""
        kept = self._shingles
        found = kept.pop(text, None)
        if found is None:
            found = shingles(text)
            self._shingles_kept += len(found)
            while self._shingles_kept > _SHINGLES_KEPT and kept:
                self._shingles_kept -= len(kept.pop(next(iter(kept))))
        kept[text] = found  # the most recently used last
        return found

    def close(self) -> None:
        try:
            self._db.close()
        finally:
            self._dir.cleanup()

    def __enter__(self) -> MinedDeduper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class KeepAll:
    """In place of a `MinedDeduper`: keeps every case, for the parts of a run that are
    deduplicated together after (`merge_results`, in their order, as one run would be; near
    duplicates are not transitive, so parts deduplicated apart could drop other cases)."""

    def check(self, case: Case | PackedCase) -> tuple[Verdict, str | None]:
        return None, None

    def __enter__(self) -> KeepAll:
        return self

    def __exit__(self, *exc: object) -> None:
        pass
