"""Which cases a run takes: `casemill eval --filter`, `--sample N --seed S` and `--limit N`, so
that a first run on a paid model costs a few cases, not the corpus.

Filters come first (`KEY=VALUE[,VALUE...]`, repeatable: values of one filter are alternatives,
filters all hold), then the stratified sample (by operator, the last one that made the case;
`(none)` for seeds and mined cases), then the limit (the first N left, in input order).

Example:
    >>> parse_filter("operator=typos,char_noise")
    CaseFilter(key='operator', values=('typos', 'char_noise'))
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.text import count

KEYS = ("tag", "operator", "intent", "id", "origin", "domain")


@dataclass(frozen=True)
class CaseFilter:
    key: str
    values: tuple[str, ...]

    def holds(self, case: Case) -> bool:
        return any(v in self.values for v in case_values(case, self.key)) or (
            self.key == "id" and any(case.id.startswith(v) for v in self.values)
        )


def case_values(case: Case, key: str) -> tuple[str, ...]:
    """The values of `key` a case has: its tags (category, difficulty, labels), the operator
    that made it, its intents, id, origin or domain."""
    if key == "tag":
        return (case.tags.category, case.tags.difficulty, *case.tags.labels)
    if key == "operator":
        return (operator_of(case),)
    if key == "intent":
        return case.tags.intents or ("(none)",)
    if key == "id":
        return (case.id,)
    if key == "origin":
        return (case.provenance.origin,)
    return (case.domain,)


def operator_of(case: Case) -> str:
    ops = case.provenance.operators
    return ops[-1].name if ops else "(none)"


def parse_filter(text: str) -> CaseFilter:
    key, sep, values = text.partition("=")
    key = key.strip().lower()
    parts = tuple(v.strip() for v in values.split(",") if v.strip())
    if not sep or key not in KEYS or not parts:
        raise UserError(
            f"--filter {text!r}: write KEY=VALUE[,VALUE...] with KEY one of {', '.join(KEYS)} "
            "(e.g. --filter tag=adversarial --filter operator=typos,char_noise)"
        )
    return CaseFilter(key, parts)


def stratified_sample(cases: Sequence[Case], n: int, seed: int) -> list[Case]:
    """`n` cases drawn with `random.Random(seed)`, each operator's share of them its share of
    `cases` (largest remainders; every operator at least one when `n` allows), in the input
    order. The same cases and seed give the same sample on every machine."""
    if n >= len(cases):
        return list(cases)
    strata: dict[str, list[Case]] = defaultdict(list)
    for case in sorted(cases, key=lambda c: c.id):
        strata[operator_of(case)].append(case)
    quota = _quotas({k: len(v) for k, v in strata.items()}, n)
    rng = random.Random(seed)
    chosen = set()
    for name in sorted(strata):
        chosen.update(c.id for c in rng.sample(strata[name], quota[name]))
    return [c for c in cases if c.id in chosen]


def _quotas(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Per stratum, how many to draw: `n` shared in proportion to size (largest remainders,
    ties to the larger stratum, then by name); when `n` allows, a stratum left with none takes
    one from the stratum with the most."""
    total = sum(sizes.values())
    exact = {k: n * size / total for k, size in sizes.items()}
    quota = {k: int(v) for k, v in exact.items()}
    order = sorted(sizes, key=lambda k: (-(exact[k] - quota[k]), -sizes[k], k))
    for k in order[: n - sum(quota.values())]:
        quota[k] += 1
    if n >= len(sizes):
        for k in sorted((k for k in sizes if quota[k] == 0), key=lambda k: (-sizes[k], k)):
            donor = max(quota, key=lambda d: (quota[d], d))
            quota[donor] -= 1
            quota[k] = 1
    return quota


def select_cases(
    cases: Sequence[Case],
    *,
    filters: Sequence[str] = (),
    sample: int | None = None,
    limit: int | None = None,
    seed: int = 0,
) -> tuple[list[Case], str]:
    """The cases to run, and a note of how they were chosen ('' when all are run)."""
    parsed = [parse_filter(f) for f in filters]
    kept = [c for c in cases if all(f.holds(c) for f in parsed)]
    said = []
    if parsed:
        said.append(f"{len(kept):,} of {count(len(cases), 'case')} match {' and '.join(filters)}")
        if not kept:
            raise UserError(f"no case matches {' and '.join(filters)}: nothing to run")
    if sample is not None and sample < len(kept):
        strata = len({operator_of(c) for c in kept})
        said.append(
            f"a sample of {sample:,} of {len(kept):,}, stratified by operator "
            f"({count(strata, 'operator')}), seed {seed}"
        )
        kept = stratified_sample(kept, sample, seed)
    if limit is not None and limit < len(kept):
        said.append(f"the first {limit:,} of {len(kept):,}")
        kept = kept[:limit]
    return kept, ("cases run: " + "; ".join(said)) if said else ""
