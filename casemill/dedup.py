"""Near-duplicate detection over cases (MinHash LSH on character shingles).

Two cases are near-duplicates when they test the same thing in nearly the same words: the same
*signature* (domain, outcome, expected and forbidden tools, faults, and the environment's state)
and customer text whose 3-character-shingle Jaccard similarity is at least `threshold`. A
counterfactual flip that changes the environment but keeps the words is therefore not a
duplicate; a typo variant of its parent usually is.
"""

from __future__ import annotations

import functools
import hashlib
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # datasketch pulls in scipy (~1 s): imported where first used
    from datasketch import MinHash, MinHashLSH

from casemill.case.ids import canonical_json
from casemill.case.model import Case

DEFAULT_THRESHOLD = 0.9
NUM_PERM = 128
SHINGLE = 3


def case_text(case: Case) -> str:
    """The words of a case: customer turns and the user scenario, folded to lower case."""
    parts = [t.content for t in case.conversation if t.role in ("customer", "tool")]
    if case.user_scenario:
        parts.append(case.user_scenario)
    return " ".join(" ".join(parts).lower().split())


def case_signature(case: Case) -> str:
    e = case.expected
    sig = {
        "domain": case.domain,
        "outcome": e.outcome,
        "calls": sorted(canonical_json(c.model_dump(mode="json")) for c in e.tool_calls),
        "forbidden": sorted(canonical_json(c.model_dump(mode="json")) for c in e.forbidden_calls),
        "faults": [f.model_dump(mode="json") for f in case.environment.faults],
        "state": case.environment.state,
    }
    return hashlib.sha256(canonical_json(sig).encode()).hexdigest()[:16]


def shingles(text: str, size: int = SHINGLE) -> set[bytes]:
    if len(text) <= size:
        return {text.encode()}
    return {text[i : i + size].encode() for i in range(len(text) - size + 1)}


@functools.lru_cache(maxsize=1)
def _permutations() -> tuple[Any, str]:
    """The permutations (and their scheme) of a seed-1 MinHash, computed once: building them
    costs more than hashing a short text."""
    from datasketch import MinHash

    template = MinHash(num_perm=NUM_PERM, seed=1)
    return template.permutations, template.scheme


def minhash(text: str) -> MinHash:
    """The MinHash of a text's shingles. Shingles are hashed with CRC-32 (C, deterministic on
    every machine), a few times cheaper than datasketch's default SHA-1 and as good for
    estimating Jaccard similarity of short texts."""
    permutations, scheme = _permutations()
    from datasketch import MinHash

    m = MinHash(
        num_perm=NUM_PERM, seed=1, permutations=permutations, scheme=scheme, hashfunc=zlib.crc32
    )
    m.update_batch(list(shingles(text)))
    return m


@dataclass
class NearDuplicateIndex:
    """Keeps the first of each group of near-duplicates.

    `check_and_add(case)` returns the id of an already indexed case that `case` duplicates
    (exactly, by id, or nearly), or adds it and returns None.
    """

    threshold: float = DEFAULT_THRESHOLD
    _lsh: MinHashLSH = field(init=False)
    _ids: set[str] = field(default_factory=set, init=False)
    _sigs: dict[str, str] = field(default_factory=dict, init=False)
    _hashes: dict[str, MinHash] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")
        from datasketch import MinHashLSH

        self._lsh = MinHashLSH(threshold=self.threshold, num_perm=NUM_PERM)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, case_id: str) -> bool:
        return case_id in self._ids

    def duplicate_of(
        self, case: Case, *, _m: MinHash | None = None, _sig: str | None = None
    ) -> str | None:
        if case.id in self._ids:
            return case.id
        sig = _sig or case_signature(case)
        m = _m if _m is not None else minhash(case_text(case))
        for other in sorted(self._lsh.query(m)):
            if self._sigs[other] == sig and m.jaccard(self._hashes[other]) >= self.threshold:
                return other
        return None

    def add(self, case: Case, *, _m: MinHash | None = None, _sig: str | None = None) -> None:
        if case.id in self._ids:
            return
        m = _m if _m is not None else minhash(case_text(case))
        self._ids.add(case.id)
        self._sigs[case.id] = _sig or case_signature(case)
        self._hashes[case.id] = m
        self._lsh.insert(case.id, m)

    def check_and_add(self, case: Case) -> str | None:
        if case.id in self._ids:
            return case.id
        m, sig = minhash(case_text(case)), case_signature(case)
        dup = self.duplicate_of(case, _m=m, _sig=sig)
        if dup is None:
            self.add(case, _m=m, _sig=sig)
        return dup
