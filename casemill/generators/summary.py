"""The run summary: candidates made, rejected by reason and operator, near-duplicates removed,
coverage of the operator-kind x intent grid, and distinct-n of customer text against the seeds."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from casemill.case.model import Case

_TOKEN = re.compile(r"\w+|[^\w\s]")


def distinct_n(texts: Iterable[str], n: int) -> float:
    """Distinct n-grams / all n-grams over `texts` (lower-cased word tokens); 0 when empty."""
    grams: Counter = Counter()
    for text in texts:
        tokens = _TOKEN.findall(text.lower())
        grams.update(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    total = sum(grams.values())
    return round(len(grams) / total, 4) if total else 0.0


def diversity(seeds: list[Case], candidates: list[Case]) -> dict[str, float]:
    seed_text = [c.customer_text or c.user_scenario or "" for c in seeds]
    cand_text = [c.customer_text or c.user_scenario or "" for c in candidates]
    return {
        "seeds_distinct_1": distinct_n(seed_text, 1),
        "seeds_distinct_2": distinct_n(seed_text, 2),
        "candidates_distinct_1": distinct_n(cand_text, 1),
        "candidates_distinct_2": distinct_n(cand_text, 2),
        "new_bigrams": _new_bigrams(seed_text, cand_text),
    }


def _new_bigrams(seed_text: list[str], cand_text: list[str]) -> int:
    def grams(texts: list[str]) -> set[tuple[str, ...]]:
        out: set[tuple[str, ...]] = set()
        for text in texts:
            tokens = _TOKEN.findall(text.lower())
            out.update(tuple(tokens[i : i + 2]) for i in range(len(tokens) - 1))
        return out

    return len(grams(cand_text) - grams(seed_text))


def cells(case: Case) -> list[tuple[str, str]]:
    """The (kind, intent) cells of the coverage grid `case` counts in: every kind of its chain
    times every intent of the case ('(none)' when it has none)."""
    kinds = dict.fromkeys(step.kind for step in case.provenance.operators)
    return [(kind, intent) for kind in kinds for intent in case.tags.intents or ("(none)",)]


def quota_keys(case: Case) -> set[str]:
    """The quota keys `case` counts under, as the coverage grid counts it: each kind of its
    chain ('noise') and each of those kinds with each intent ('noise:refund')."""
    return {key for kind, intent in cells(case) for key in (kind, f"{kind}:{intent}")}


def coverage(candidates: Iterable[Case]) -> dict[str, dict[str, int]]:
    """kind -> intent -> accepted candidates (a chain counts for every kind in it, a case for
    every intent it has)."""
    grid: dict[str, Counter] = {}
    for case in candidates:
        for kind, intent in cells(case):
            grid.setdefault(kind, Counter())[intent] += 1
    return {k: dict(sorted(v.items())) for k, v in sorted(grid.items())}


@dataclass
class Summary:
    seeds: int = 0
    seeds_skipped: int = 0
    attempts: int = 0
    not_applicable: int = 0
    generated: int = 0
    accepted: int = 0
    near_duplicates: int = 0
    quota_stopped: int = 0
    rejected_by_reason: dict[str, int] = field(default_factory=dict)
    rejected_by_operator: dict[str, dict[str, int]] = field(default_factory=dict)
    accepted_by_operator: dict[str, int] = field(default_factory=dict)
    coverage: dict[str, dict[str, int]] = field(default_factory=dict)
    diversity: dict[str, float] = field(default_factory=dict)
    lint_warnings: dict[str, int] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)

    def reject(self, chain: str, reason: str) -> None:
        self.rejected_by_reason[reason] = self.rejected_by_reason.get(reason, 0) + 1
        row = self.rejected_by_operator.setdefault(chain, {})
        row[reason] = row.get(reason, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        def tidy(value: Any) -> Any:
            if isinstance(value, dict):
                return {k: tidy(value[k]) for k in sorted(value)}
            return value

        return {k: tidy(v) for k, v in self.__dict__.items()}
