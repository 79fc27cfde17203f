"""Deduplication of mined candidates, within the logs and against an existing corpus.

The rule is `casemill.dedup`'s: two cases are duplicates when they have the same content id, or
the same signature (domain, outcome, expected and forbidden calls, faults, environment) and
customer text whose MinHash Jaccard similarity reaches the threshold. Against the corpus the
shared `NearDuplicateIndex` is used as is. Within the logs, where a long log yields far more
cases than fit in memory, the cases seen so far are kept on disk (SQLite in a temporary file)
by case kind and signature, and the similarity of texts is only computed (exactly, on the same
3-character shingles MinHash estimates from) when two cases share both, so memory does not grow
with the size of the log. A decision-point case and a conversation-level case never duplicate
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

Verdict = Literal["corpus", "within_logs"] | None


def signature(case: Case) -> str:
    """`casemill.dedup.case_signature`'s fields (hashed with orjson, which is several times
    faster on large environments) and the case kind."""
    e = case.expected
    ops = case.provenance.operators
    data = {
        "kind": ops[-1].name if ops else "",
        "domain": case.domain,
        "outcome": e.outcome,
        "calls": sorted(
            orjson.dumps(c.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
            for c in e.tool_calls
        ),
        "forbidden": sorted(
            orjson.dumps(c.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
            for c in e.forbidden_calls
        ),
        "faults": [f.model_dump(mode="json") for f in case.environment.faults],
        "state": case.environment.state,
    }
    blob = orjson.dumps(
        data,
        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
        default=lambda b: b.decode() if isinstance(b, bytes) else str(b),
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
        self.corpus = NearDuplicateIndex(threshold=threshold)
        for case in existing:
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

    def check(self, case: Case) -> tuple[Verdict, str | None]:
        """(where the duplicate is, its id), or (None, None) after remembering `case`."""
        if len(self.corpus):
            dup = self.corpus.duplicate_of(case)
            if dup is not None:
                return "corpus", dup
        sig = signature(case)
        text = case_text(case)
        rows = self._db.execute("SELECT id, text FROM seen WHERE sig = ?", (sig,)).fetchall()
        for other_id, other_text in rows:
            if other_id == case.id or other_text == text:
                return "within_logs", other_id
        if rows:
            mine = shingles(text)
            for other_id, other_text in rows:
                theirs = shingles(other_text)
                if len(mine & theirs) >= self.threshold * len(mine | theirs):
                    return "within_logs", other_id
        self._db.execute("INSERT INTO seen VALUES (?, ?, ?)", (sig, case.id, text))
        self._pending += 1
        if self._pending >= 5000:
            self._db.execute("COMMIT")
            self._db.execute("BEGIN")
            self._pending = 0
        return None, None

    def close(self) -> None:
        try:
            self._db.close()
        finally:
            self._dir.cleanup()

    def __enter__(self) -> MinedDeduper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
