"""Near-duplicate detection over cases (MinHash LSH on character shingles).

Two cases are near-duplicates when they test the same thing in nearly the same words: the same
*signature* (domain, outcome, expected and forbidden tools, faults, and the environment's state)
and customer text whose 3-character-shingle Jaccard similarity is at least `threshold`. A
counterfactual flip that changes the environment but keeps the words is therefore not a
duplicate; a typo variant of its parent usually is. Mining folds the text to lower case (two
logs that differ in casing are one); expansion does not (`fold_case=False`), or every casing
variant would be a duplicate of its seed.
"""

from __future__ import annotations

import functools
import hashlib
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # datasketch pulls in scipy (~1 s): imported where first used
    from datasketch import MinHash, MinHashLSH

from casemill.case.ids import IdentityMemo, canonical_member, canonical_object
from casemill.case.model import Case, Expected, canonical_dump, environment_parts

DEFAULT_THRESHOLD = 0.9
NUM_PERM = 128
# datasketch cannot band 128 permutations for a threshold above about 0.985 (it would need one
# band); the index is then queried at this threshold and every hit is checked against the
# asked one. With its 2 bands of 64, two MinHashes agreeing on at least 127 of 128 values share a
# band, so no pair at or above 0.99 is missed.
MAX_LSH_THRESHOLD = 0.98
SHINGLE = 3
TEXTS_REMEMBERED = 4096


def case_text(case: Case, *, fold_case: bool = True) -> str:
    """The words of a case: customer turns and the user scenario, white space collapsed and
    (unless `fold_case` is False) folded to lower case."""
    parts = [t.content for t in case.conversation if t.role in ("customer", "tool")]
    if case.user_scenario:
        parts.append(case.user_scenario)
    text = " ".join(" ".join(parts).split())
    return text.lower() if fold_case else text


def case_signature(case: Case) -> str:
    """A hash of what a case tests: domain, outcome, expected and forbidden calls, faults and the
    environment's state (the hash of their canonical JSON, composed from the canonical JSON of
    the environment's and `expected`'s parts, which is remembered per frozen part)."""
    env = case.environment
    faults, state, state_is_dump = environment_parts(env)
    calls, forbidden = _expected_parts(case.expected)
    sig = canonical_object(
        {
            "domain": canonical_member(case.domain),
            "outcome": canonical_member(case.expected.outcome),
            "calls": calls,
            "forbidden": forbidden,
            "faults": faults,
            "state": state if state_is_dump else canonical_member(env.state),
        }
    )
    return hashlib.sha256(sig).hexdigest()[:16]


def _dumped_expected(e: Expected) -> tuple[bytes | None, bytes | None]:
    # each call's canonical JSON text (remembered per call: variants share their parent's calls)
    calls = sorted(canonical_dump(c).decode() for c in e.tool_calls)
    forbidden = sorted(canonical_dump(c).decode() for c in e.forbidden_calls)
    return canonical_member(calls), canonical_member(forbidden)


_expected_parts = IdentityMemo(_dumped_expected)


def shingles(text: str, size: int = SHINGLE) -> set[bytes]:
    if len(text) <= size:
        return {text.encode()}
    if text.isascii():  # one byte a character: slices of the encoded text are the same
        data = text.encode()
        return {data[i : i + size] for i in range(len(data) - size + 1)}
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
    # False: the same words in other casing ("REFUND MY ORDER") are another text, as a
    # generated casing variant is another test input
    fold_case: bool = True
    _lsh: MinHashLSH = field(init=False)
    _ids: set[str] = field(default_factory=set, init=False)
    _sigs: dict[str, str] = field(default_factory=dict, init=False)
    _hashes: dict[str, MinHash] = field(default_factory=dict, init=False)
    _by_text: dict[str, MinHash] = field(default_factory=dict, init=False)
    # threshold 1 means the same text: its digest, as MinHash can estimate 1.0 for two texts
    _digests: dict[str, bytes] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")
        from datasketch import MinHashLSH

        lsh_threshold = min(self.threshold, MAX_LSH_THRESHOLD)
        self._lsh = MinHashLSH(threshold=lsh_threshold, num_perm=NUM_PERM)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, case_id: str) -> bool:
        return case_id in self._ids

    def _minhash(self, case: Case) -> MinHash:
        """The MinHash of the case's text; variants that change only the environment or
        `expected` share their parent's text, so recent texts are remembered (never updated)."""
        text = case_text(case, fold_case=self.fold_case)
        m = self._by_text.get(text)
        if m is None:
            if len(self._by_text) >= TEXTS_REMEMBERED:
                self._by_text.clear()
            m = self._by_text[text] = minhash(text)
        return m

    def duplicate_of(
        self, case: Case, *, _m: MinHash | None = None, _sig: str | None = None
    ) -> str | None:
        if case.id in self._ids:
            return case.id
        sig = _sig or case_signature(case)
        m = _m if _m is not None else self._minhash(case)
        digest = self._digest(case)
        for other in sorted(self._lsh.query(m)):
            if self._sigs[other] != sig:
                continue
            if digest is not None:
                if self._digests[other] == digest:
                    return other
            elif m.jaccard(self._hashes[other]) >= self.threshold:
                return other
        return None

    def _digest(self, case: Case) -> bytes | None:
        """The digest of the case's text when only the same text is a duplicate, else None."""
        if self.threshold < 1:
            return None
        text = case_text(case, fold_case=self.fold_case)
        return hashlib.blake2b(text.encode(), digest_size=16).digest()

    def add(self, case: Case, *, _m: MinHash | None = None, _sig: str | None = None) -> None:
        if case.id in self._ids:
            return
        m = _m if _m is not None else self._minhash(case)
        self._ids.add(case.id)
        self._sigs[case.id] = _sig or case_signature(case)
        self._hashes[case.id] = m
        digest = self._digest(case)
        if digest is not None:
            self._digests[case.id] = digest
        self._lsh.insert(case.id, m)

    def check_and_add(self, case: Case) -> str | None:
        if case.id in self._ids:
            return case.id
        m, sig = self._minhash(case), case_signature(case)
        dup = self.duplicate_of(case, _m=m, _sig=sig)
        if dup is None:
            self.add(case, _m=m, _sig=sig)
        return dup
