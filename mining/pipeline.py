"""Mining as a pipeline over log files: parse -> redact -> derive cases -> deduplicate.

`iter_mine` streams (constant memory: nothing is held but the conversation at hand and the
on-disk dedup index); `mine` and `mine_file` collect the results for callers that want them in
memory (flows fan out with `mine_file`, one file per task, and merge with `merge_results`);
`mine_to_files` streams straight to the candidates, quarantine and raw-values files.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from casemill.case.model import Case
from casemill.dedup import DEFAULT_THRESHOLD
from casemill.gctune import fewer_collections
from mining.dedup import MinedDeduper
from mining.derive.cases import DeriveOptions, derive_cases
from mining.model import Conversation, Quarantined
from mining.parsers import get_parser
from mining.redact.redactor import RawValue, redact_conversation, scrub_text
from mining.toolspec import ToolSpecs

log = logging.getLogger(__name__)

GENERIC_WORDS = frozenset(
    [
        "tau",
        "bench",
        "tau2",
        "logs",
        "log",
        "support",
        "conversations",
        "conversation",
        "chat",
        "chats",
        "data",
        "export",
        "exports",
        "traces",
        "trace",
        "spans",
        "tickets",
        "ticket",
        "transcripts",
        "transcript",
        "sample",
        "samples",
        "jsonl",
        "csv",
        "json",
        "otel",
        "mined",
        "production",
        "prod",
    ]
)


@dataclass(frozen=True)
class MineOptions:
    redact: bool = True
    seed: int = 0
    keep_raw: bool = False
    max_turns: int = 500
    max_decision_points: int = 20
    domain_label: str | None = None  # `generic:<label>` for non-support logs; default: file name
    csv_mapping: Any = None  # mining.parsers.csv_tickets.CsvMapping
    validate: bool = True
    dedup_threshold: float = DEFAULT_THRESHOLD
    tools: ToolSpecs | None = None  # for logs that carry no tool specs (a line's own win)


class MineSummary(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    files: tuple[str, ...] = ()
    redacted: bool = True
    bytes_read: int = 0
    conversations_read: int = 0
    conversations_mined: int = 0
    capped_conversations: int = 0
    capped_decision_points: int = 0
    cases: dict[str, int] = {}
    confidence: dict[str, int] = {}
    domains: dict[str, int] = {}
    duplicates: dict[str, int] = {}
    redactions: dict[str, int] = {}
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
class Tally:
    files: list[str] = field(default_factory=list)
    bytes_read: int = 0
    conversations_read: int = 0
    conversations_mined: int = 0
    capped: int = 0
    capped_decisions: int = 0
    cases: Counter = field(default_factory=Counter)
    confidence: Counter = field(default_factory=Counter)
    domains: Counter = field(default_factory=Counter)
    duplicates: Counter = field(default_factory=Counter)
    redactions: Counter = field(default_factory=Counter)
    quarantined: Counter = field(default_factory=Counter)

    def add_case(self, case: Case) -> None:
        provenance = case.provenance
        operators = provenance.operators
        self.cases[operators[-1].name if operators else "case"] += 1
        self.confidence[provenance.label_confidence or "unknown"] += 1
        self.domains[case.domain] += 1

    def summary(self, redacted: bool) -> MineSummary:
        def d(c: Counter) -> dict[str, int]:
            return dict(sorted(c.items()))

        return MineSummary(
            files=tuple(self.files),
            redacted=redacted,
            bytes_read=self.bytes_read,
            conversations_read=self.conversations_read,
            conversations_mined=self.conversations_mined,
            capped_conversations=self.capped,
            capped_decision_points=self.capped_decisions,
            cases=d(self.cases),
            confidence=d(self.confidence),
            domains=d(self.domains),
            duplicates=d(self.duplicates),
            redactions=d(self.redactions),
            quarantined=d(self.quarantined),
        )


def label_from_path(path: Path) -> str:
    """A `generic:<label>` name from the file's folder and name (`tau-bench-airline-logs/...`
    gives `airline`)."""
    for part in (path.parent.name, path.name.split(".")[0]):
        for word in re.split(r"[^a-z0-9]+", part.lower()):
            if word and word not in GENERIC_WORDS and not word.isdigit() and len(word) > 2:
                return word
    return "mined"


Item = Case | Quarantined | RawValue


def iter_mine(
    paths: Iterable[Path],
    fmt: str,
    options: MineOptions,
    tally: Tally,
    deduper: MinedDeduper,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Item]:
    """Stream the cases, quarantined records and (with keep_raw) raw values of `paths`."""
    parser = get_parser(fmt)

    def counted(n: int) -> None:
        tally.bytes_read += n
        if progress is not None:
            progress(n)

    for path in paths:
        path = Path(path)
        tally.files.append(str(path))
        derive = DeriveOptions(
            domain_label=options.domain_label or label_from_path(path),
            seed=options.seed,
            validate=options.validate,
            max_decision_points=options.max_decision_points,
            tools=options.tools,
        )
        items = parser(
            path, max_turns=options.max_turns, progress=counted, csv_mapping=options.csv_mapping
        )
        for item in items:
            if isinstance(item, Quarantined):
                yield _quarantine(item, options, tally)
            else:
                yield from _conversation(item, options, derive, tally, deduper)


def _quarantine(item: Quarantined, options: MineOptions, tally: Tally) -> Quarantined:
    tally.quarantined[item.reason] += 1
    if options.redact and item.conversation_id:
        item = item.model_copy(
            update={"conversation_id": scrub_text(item.conversation_id, options.seed)}
        )
    log.info("quarantined %s", item)
    return item


def _conversation(
    conv: Conversation,
    options: MineOptions,
    derive: DeriveOptions,
    tally: Tally,
    deduper: MinedDeduper,
) -> Iterator[Item]:
    tally.conversations_read += 1
    if options.redact:
        red = redact_conversation(conv, options.seed, options.keep_raw)
        conv = red.conversation
        if red.counts:
            tally.redactions.update(red.counts)
        if red.raw:
            yield from red.raw
    if conv.capped:
        tally.capped += 1
        yield _quarantine(
            Quarantined(
                file=conv.file,
                line=conv.line,
                reason="too_many_turns",
                conversation_id=conv.id,
                message=(
                    f"conversation has {conv.total_messages:,} messages; its cases keep the "
                    f"first {len(conv.messages):,} (the rest is not mined)"
                ),
            ),
            options,
            tally,
        )
    derived = derive_cases(conv, derive)
    tally.capped_decisions += derived.dropped_decision_points
    for problem in derived.problems:
        reason = "no_customer_turn" if problem == "no customer turn" else "invalid_case"
        yield _quarantine(
            Quarantined(
                file=conv.file,
                line=conv.line,
                reason=reason,
                message=problem,
                conversation_id=conv.id,
            ),
            options,
            tally,
        )
    if not derived.cases:
        return
    tally.conversations_mined += 1
    check, add_case = deduper.check, tally.add_case
    for case in derived.cases:
        where, _ = check(case)
        if where is not None:
            tally.duplicates[where] += 1
            continue
        add_case(case)
        yield case


def _collect(
    paths: Iterable[Path], fmt: str, options: MineOptions, existing: Iterable[Case]
) -> MineResult:
    tally = Tally()
    cases, quarantined, raw = [], [], []
    with fewer_collections(), MinedDeduper(existing, options.dedup_threshold) as deduper:
        for item in iter_mine(paths, fmt, options, tally, deduper):
            if isinstance(item, Case):
                cases.append(item)
            elif isinstance(item, Quarantined):
                quarantined.append(item)
            else:
                raw.append(raw_record(item))
    return MineResult(
        cases=tuple(cases),
        quarantined=tuple(quarantined),
        summary=tally.summary(options.redact),
        raw_values=tuple(raw),
    )


def raw_record(value: RawValue) -> dict[str, str]:
    return {
        "conversation_id": value.conversation_id,
        "kind": value.kind,
        "raw": value.raw,
        "surrogate": value.surrogate,
    }


def mine(
    paths: list[Path],
    fmt: str,
    *,
    redact: bool = True,
    seed: int = 0,
    existing: Iterable[Case] = (),
    csv_mapping: Any = None,
    options: MineOptions | None = None,
) -> MineResult:
    """Mine log files into candidate cases (all `pending` review), in memory.

    `existing` (e.g. `CorpusStore(dir).cases()`) is what candidates are deduplicated against,
    besides each other. Bad records are returned as `quarantined`, never raised."""
    base = options or MineOptions()
    opts = replace(
        base,
        redact=redact,
        seed=seed,
        csv_mapping=csv_mapping if csv_mapping is not None else base.csv_mapping,
    )
    return _collect([Path(p) for p in paths], fmt, opts, existing)


def mine_file(
    path: Path,
    fmt: str,
    *,
    redact: bool = True,
    seed: int = 0,
    existing: Iterable[Case] = (),
    csv_mapping: Any = None,
    options: MineOptions | None = None,
) -> MineResult:
    """One file's candidates (deduplicated within the file and against `existing`); merge the
    results of several files with `merge_results`."""
    return mine(
        [path],
        fmt,
        redact=redact,
        seed=seed,
        existing=existing,
        csv_mapping=csv_mapping,
        options=options,
    )


def merge_results(results: Iterable[MineResult], existing: Iterable[Case] = ()) -> MineResult:
    """Several per-file results as one, deduplicated across files."""
    cases, quarantined, raw = [], [], []
    tally = Tally()
    redacted = True
    with MinedDeduper(existing) as deduper:
        for result in results:
            s = result.summary
            redacted = redacted and s.redacted
            tally.files += s.files
            tally.bytes_read += s.bytes_read
            tally.conversations_read += s.conversations_read
            tally.conversations_mined += s.conversations_mined
            tally.capped += s.capped_conversations
            tally.capped_decisions += s.capped_decision_points
            for counter, values in (
                (tally.duplicates, s.duplicates),
                (tally.redactions, s.redactions),
                (tally.quarantined, s.quarantined),
            ):
                counter.update(values)
            for case in result.cases:
                where, _ = deduper.check(case)
                if where is not None:
                    tally.duplicates[where] += 1
                    continue
                tally.add_case(case)
                cases.append(case)
            quarantined += result.quarantined
            raw += result.raw_values
    return MineResult(
        cases=tuple(cases),
        quarantined=tuple(quarantined),
        summary=tally.summary(redacted),
        raw_values=tuple(raw),
    )
