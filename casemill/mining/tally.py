"""What a mining run counts, and the parts of a run merged into one.

`Tally` counts as the pipeline goes (conversations, cases by kind and confidence, duplicates,
redactions, quarantined records) and gives the `MineSummary` every caller prints or returns.
`Merge` takes the parts of one run in order (the per-file results of a flow's tasks, or the
chunks of one streamed pass, `casemill.mining.stage`) and deduplicates their cases together and
against the corpus, so however a run was split its candidates and summary are those of one pass.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from casemill.case.model import Case
from casemill.mining.dedup import KeepAll, MinedDeduper
from casemill.mining.model import PackedCase, Quarantined
from casemill.mining.redact.entities import summary_note


class MineSummary(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    files: tuple[str, ...] = ()
    redacted: bool = True
    bytes_read: int = 0
    conversations_read: int = 0
    conversations_mined: int = 0
    model_calls_joined: int = 0  # lines of model calls joined into conversations (read)
    capped_conversations: int = 0
    capped_decision_points: int = 0
    cases: dict[str, int] = {}
    confidence: dict[str, int] = {}
    domains: dict[str, int] = {}
    duplicates: dict[str, int] = {}
    redactions: dict[str, int] = {}
    uncued_names: str = ""  # whether names in text that nothing announces were searched
    quarantined: dict[str, int] = {}

    @property
    def cases_total(self) -> int:
        return sum(self.cases.values())


class MineResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    cases: tuple[Case, ...] = ()
    quarantined: tuple[Quarantined, ...] = ()
    summary: MineSummary = MineSummary()
    raw_values: tuple[dict[str, str], ...] = ()  # only when asked for (keep_raw)


@dataclass
class MinedPart:
    """A `MineResult` whose cases may still be packed (`PackedCase`, from a worker process):
    a chunk of one streamed pass, handed to `Merge` without rebuilding each case's model."""

    cases: list[Case | PackedCase] = field(default_factory=list)
    quarantined: list[Quarantined] = field(default_factory=list)
    raw_values: list[dict[str, str]] = field(default_factory=list)
    summary: MineSummary = MineSummary()

    def __len__(self) -> int:
        return len(self.cases) + len(self.quarantined) + len(self.raw_values)


@dataclass
class Tally:
    files: list[str] = field(default_factory=list)
    bytes_read: int = 0
    conversations_read: int = 0
    conversations_mined: int = 0
    model_calls: int = 0
    capped: int = 0
    capped_decisions: int = 0
    cases: Counter = field(default_factory=Counter)
    confidence: Counter = field(default_factory=Counter)
    domains: Counter = field(default_factory=Counter)
    duplicates: Counter = field(default_factory=Counter)
    redactions: Counter = field(default_factory=Counter)
    quarantined: Counter = field(default_factory=Counter)

    def add_case(self, case: Case | PackedCase) -> None:
        if isinstance(case, PackedCase):
            kind, confidence = case.kind, case.confidence
        else:
            kind, confidence = counted_as(case)
        self.cases[kind] += 1
        self.confidence[confidence] += 1
        self.domains[case.domain] += 1

    def add_counts(self, s: MineSummary) -> None:
        """A part's counts, but not its cases': `Merge` counts the cases it keeps."""
        self.files += s.files
        self.bytes_read += s.bytes_read
        self.conversations_read += s.conversations_read
        self.conversations_mined += s.conversations_mined
        self.model_calls += s.model_calls_joined
        self.capped += s.capped_conversations
        self.capped_decisions += s.capped_decision_points
        self.duplicates.update(s.duplicates)
        self.redactions.update(s.redactions)
        self.quarantined.update(s.quarantined)

    def summary(self, redacted: bool, names_model: str | None = None) -> MineSummary:
        def d(c: Counter) -> dict[str, int]:
            return dict(sorted(c.items()))

        return MineSummary(
            files=tuple(self.files),
            redacted=redacted,
            bytes_read=self.bytes_read,
            conversations_read=self.conversations_read,
            conversations_mined=self.conversations_mined,
            model_calls_joined=self.model_calls,
            capped_conversations=self.capped,
            capped_decision_points=self.capped_decisions,
            cases=d(self.cases),
            confidence=d(self.confidence),
            domains=d(self.domains),
            duplicates=d(self.duplicates),
            redactions=d(self.redactions),
            uncued_names=summary_note(redacted, names_model),
            quarantined=d(self.quarantined),
        )


def counted_as(case: Case) -> tuple[str, str]:
    """The kind (the miner's last step) and the label confidence the summary counts a case by."""
    provenance = case.provenance
    operators = provenance.operators
    return operators[-1].name if operators else "case", provenance.label_confidence or "unknown"


class Merge:
    """The parts of one run as one, taken in order: their counts added up, each case checked
    against `deduper` (the corpus and the cases before it) and counted when kept. Parts mined
    with deduplication off (`MineOptions.dedup=False`) merge into what one pass gives: near
    duplicates are not transitive, so parts deduplicated apart could lose cases."""

    def __init__(self, deduper: MinedDeduper | KeepAll) -> None:
        self.deduper = deduper
        self.tally = Tally()
        self.redacted = True
        self.names_model: str | None = None

    def take(self, part: MineResult | MinedPart) -> Iterator[Case | PackedCase]:
        """Add `part`'s counts and yield its cases that are no duplicate."""
        self.tally.add_counts(part.summary)
        self.redacted = self.redacted and part.summary.redacted
        if part.summary.uncued_names.startswith("searched"):  # (the parts share the options)
            self.names_model = part.summary.uncued_names.split("(")[-1].rstrip(")")
        check, tally = self.deduper.check, self.tally
        for case in part.cases:
            where, _ = check(case)
            if where is not None:
                tally.duplicates[where] += 1
                continue
            tally.add_case(case)
            yield case

    def summary(self) -> MineSummary:
        return self.tally.summary(self.redacted, self.names_model)


def merge_results(results: Iterable[MineResult], existing: Iterable[Case] = ()) -> MineResult:
    """Several per-file results as one, deduplicated across files: each case against the
    corpus (`existing`) and the cases before it, the results taken in order."""
    cases: list[Any] = []
    quarantined: list[Quarantined] = []
    raw: list[dict[str, str]] = []
    with MinedDeduper(existing) as deduper:
        merge = Merge(deduper)
        for result in results:
            cases += merge.take(result)
            quarantined += result.quarantined
            raw += result.raw_values
    return MineResult(
        cases=tuple(cases),
        quarantined=tuple(quarantined),
        summary=merge.summary(),
        raw_values=tuple(raw),
    )
