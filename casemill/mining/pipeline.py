"""Mining as a pipeline over log files: parse -> redact -> derive cases -> deduplicate.

`iter_mine` streams (constant memory: nothing is held but the conversation at hand and the
on-disk dedup index); `mine` and `mine_file` collect the results for callers that want them in
memory (flows fan out with `mine_file`, a task a file, or mine the files of a stream file after
file, `casemill.mining.streams`, and merge with `merge_results`);
`mine_to_files` streams straight to the candidates, quarantine and raw-values files.
"""

from __future__ import annotations

import logging
import multiprocessing
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from casemill.case.model import Case
from casemill.dedup import DEFAULT_THRESHOLD
from casemill.gctune import fewer_collections
from casemill.mining.dedup import KeepAll, MinedDeduper
from casemill.mining.derive.cases import DeriveOptions, derive_cases
from casemill.mining.model import Conversation, PackedCase, Quarantined
from casemill.mining.parsers import carried, finish_carried, get_parser
from casemill.mining.reading import file_size
from casemill.mining.redact.redactor import RawValue, redact_conversation, scrub_text
from casemill.mining.tally import (  # noqa: F401 - merge_results: imported from here too
    MineResult,
    MineSummary,
    Tally,
    counted_as,
    merge_results,
)
from casemill.mining.toolspec import ToolSpecs

if TYPE_CHECKING:
    from casemill.mining.streams import StreamState

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
    # a spaCy pipeline package for names in text nothing announces (`redact.entities`); None: off
    names_model: str | None = None
    max_turns: int = 500
    max_decision_points: int = 20
    domain_label: str | None = None  # `generic:<label>` for non-support logs; default: file name
    pack: str | None = None  # a pack to mine into (`derive.cases.PACKS`), else generic:<label>
    csv_mapping: Any = None  # mining.parsers.csv_tickets.CsvMapping
    validate: bool = True
    dedup_threshold: float = DEFAULT_THRESHOLD
    tools: ToolSpecs | None = None  # for logs that carry no tool specs (a line's own win)
    workers: int = 1  # processes that redact and derive (`casemill.mining.parallel`); 1: this one
    # False: every case kept (none checked against `existing` either), for `merge_results` to
    # deduplicate the parts of a run together, in order
    dedup: bool = True


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
    deduper: MinedDeduper | KeepAll,
    progress: Callable[[int], None] | None = None,
    stream: StreamState | None = None,
) -> Iterator[Item]:
    """Stream the cases, quarantined records and (with keep_raw) raw values of `paths`; with
    `options.workers` > 1 the records are mined in worker processes (`casemill.mining.parallel`), with
    the same output. With `stream`, the files go on from the files before (`mine_part`)."""
    records = parsed(paths, fmt, options, tally, progress, stream)
    if options.workers > 1 and _can_start_workers():
        from casemill.mining.parallel import mine_in_workers

        yield from mine_in_workers(records, options, tally, deduper)
        return
    for derive, item in records:
        yield from account(work(item, options, derive), tally, deduper)


def _can_start_workers() -> bool:
    """False in a daemonic process (a Dask worker's), which may not start processes: it mines
    in itself, and says so."""
    if multiprocessing.current_process().daemon:
        log.warning("a daemonic process cannot start mining workers: mining in this one")
        return False
    return True


def _derive_options(options: MineOptions, file: str) -> DeriveOptions:
    return DeriveOptions(
        domain_label=options.domain_label or label_from_path(Path(file)),
        pack=options.pack,
        seed=options.seed,
        validate=options.validate,
        max_decision_points=options.max_decision_points,
        tools=options.tools,
    )


def parsed(
    paths: Iterable[Path],
    fmt: str,
    options: MineOptions,
    tally: Tally,
    progress: Callable[[int], None] | None = None,
    stream: StreamState | None = None,
) -> Iterator[tuple[DeriveOptions, Conversation | Quarantined]]:
    """Each record the parser reads from `paths`, with the derivation options of its file. The
    parser carries its state from file to file (`carried`: a trace or a conversation split
    between two files, by a rotated file, is mined whole), and what is still open after the
    last file is mined then. With `stream` (not ended), the files go on from those it has read
    before, and what is still open after them stays in it."""
    parser = get_parser(fmt)
    shared = carried(fmt) if stream is None else stream.carried
    taken = shared["calls"].taken if "calls" in shared else 0
    derives: dict[str, DeriveOptions] = {}

    def derive_of(file: str) -> DeriveOptions:
        found = derives.get(file)
        if found is None:
            found = derives[file] = _derive_options(options, file)
        return found

    def counted(n: int) -> None:
        tally.bytes_read += n
        if progress is not None:
            progress(n)

    for path in paths:
        path = Path(path)
        tally.files.append(str(path))
        derive = derive_of(str(path))
        items = parser(
            path,
            max_turns=options.max_turns,
            progress=counted,
            csv_mapping=options.csv_mapping,
            **shared,
        )
        started = tally.bytes_read
        try:
            for item in items:  # a carried trace's options are those of the file it starts in
                yield derive_of(item.file), item
        except (EOFError, OSError, zlib.error) as exc:  # raised by the parser's reads only
            # the rest of the file is skipped: it counts as read (the summary, the progress bar)
            counted(file_size(path) - (tally.bytes_read - started))
            yield derive, unreadable(path, exc)
    if stream is None or stream.ended:
        for item in finish_carried(shared, options.max_turns):
            yield derive_of(item.file), item
    if "calls" in shared:
        tally.model_calls += shared["calls"].taken - taken


def unreadable(path: Path, exc: BaseException) -> Quarantined:
    """The record of a file whose reading broke off (a truncated or damaged gzip, a read
    error): what came before it is mined, the rest of the file is not."""
    if isinstance(exc, EOFError):
        why = "the compressed file ends early (truncated?)"
    elif str(exc).startswith("Not a gzipped file"):  # without the bytes it quotes
        why = "not a gzip file, though its name ends in .gz"
    else:
        why = str(exc) or type(exc).__name__
    return Quarantined(
        file=str(path),
        line=None,
        reason="unreadable",
        message=f"reading stopped: {why}; the records before this point were mined",
    )


@dataclass
class Worked:
    """What mining one parsed record gives before deduplication: worked out on its own (here or
    in a worker process, `casemill.mining.parallel`), then accounted for in input order by `account`."""

    quarantined: list[Quarantined] = field(default_factory=list)
    raw: list[RawValue] = field(default_factory=list)
    cases: list[Any] = field(default_factory=list)  # Case, or PackedCase from a worker
    redactions: Counter | None = None
    dropped_decision_points: int = 0
    conversation: bool = False  # a conversation was read (not a record the parser quarantined)
    capped: bool = False


def work(item: Conversation | Quarantined, options: MineOptions, derive: DeriveOptions) -> Worked:
    """Redact one parsed conversation and derive its cases (a quarantined record: its id
    scrubbed). Depends on nothing but its arguments, so it can run in any process."""
    if isinstance(item, Quarantined):
        return Worked(quarantined=[_scrubbed(item, options)])
    try:
        return _work(item, options, derive)
    except Exception as exc:  # a record of a shape not foreseen: set aside, the run goes on
        where = _raised_at(exc)
        log.warning("%s:%s: mining the conversation failed (%s)", item.file, item.line, where)
        message = (
            f"mining this conversation failed ({where}); it is set aside, the rest is mined: "
            "please report it with the record"
        )
        return Worked(
            conversation=True, quarantined=[_problem(item, "mining_error", message, options)]
        )


def _raised_at(exc: BaseException) -> str:
    """The exception's type and where it was raised (not its message: it may quote the record,
    personal data and all)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    at = f" at {Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}" if tb else ""
    return f"{type(exc).__name__}{at}"


def _work(conv: Conversation, options: MineOptions, derive: DeriveOptions) -> Worked:
    worked = Worked(conversation=True)
    if options.redact:
        red = redact_conversation(conv, options.seed, options.keep_raw, options.names_model)
        conv, worked.redactions, worked.raw = red.conversation, red.counts, red.raw
    if conv.capped:
        worked.capped = True
        worked.quarantined.append(
            _problem(
                conv,
                "too_many_turns",
                f"conversation has {conv.total_messages:,} messages; its cases keep the "
                f"first {len(conv.messages):,} (the rest is not mined)",
                options,
            )
        )
    derived = derive_cases(conv, derive)
    worked.dropped_decision_points = derived.dropped_decision_points
    for problem in derived.problems:
        reason = "no_customer_turn" if problem == "no customer turn" else "invalid_case"
        worked.quarantined.append(_problem(conv, reason, problem, options))
    worked.cases = derived.cases
    return worked


def _problem(conv: Conversation, reason: str, message: str, options: MineOptions) -> Quarantined:
    return _scrubbed(
        Quarantined(
            file=conv.file,
            line=conv.line,
            reason=reason,
            message=message,
            conversation_id=conv.id,
        ),
        options,
    )


def _scrubbed(item: Quarantined, options: MineOptions) -> Quarantined:
    if options.redact and item.conversation_id:
        item = item.model_copy(
            update={
                "conversation_id": scrub_text(
                    item.conversation_id, options.seed, context=item._record
                )
            }
        )
    return item


def account(worked: Worked, tally: Tally, deduper: MinedDeduper | KeepAll) -> Iterator[Item]:
    """Count what one record gave, deduplicate its cases against everything before it, and
    yield what is kept: raw values, quarantined records and cases."""
    if worked.conversation:
        tally.conversations_read += 1
    if worked.redactions:
        tally.redactions.update(worked.redactions)
    yield from worked.raw
    tally.capped += worked.capped
    tally.capped_decisions += worked.dropped_decision_points
    for item in worked.quarantined:
        tally.quarantined[item.reason] += 1
        log.info("quarantined %s", item)
        yield item
    if not worked.cases:
        return
    tally.conversations_mined += 1
    check, add_case = deduper.check, tally.add_case
    for case in worked.cases:
        where, _ = check(case)
        if where is not None:
            tally.duplicates[where] += 1
            continue
        add_case(case)
        yield case


def collect(
    paths: Iterable[Path],
    fmt: str,
    options: MineOptions,
    existing: Iterable[Case],
    stream: StreamState | None = None,
) -> MineResult:
    tally = Tally()
    cases, quarantined, raw = [], [], []
    deduper = MinedDeduper(existing, options.dedup_threshold) if options.dedup else KeepAll()
    with fewer_collections(), deduper:
        for item in iter_mine(paths, fmt, options, tally, deduper, stream=stream):
            if isinstance(item, Case):
                cases.append(item)
            elif isinstance(item, PackedCase):  # from a worker process
                cases.append(item.case())
            elif isinstance(item, Quarantined):
                quarantined.append(item)
            else:
                raw.append(raw_record(item))
    return MineResult(
        cases=tuple(cases),
        quarantined=tuple(quarantined),
        summary=tally.summary(options.redact, options.names_model),
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
    return collect([Path(p) for p in paths], fmt, opts, existing)


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
    results of several files with `merge_results` (mined with `options.dedup` off, the files'
    cases are deduplicated there only, together and in order, as `mine` would)."""
    return mine(
        [path],
        fmt,
        redact=redact,
        seed=seed,
        existing=existing,
        csv_mapping=csv_mapping,
        options=options,
    )
