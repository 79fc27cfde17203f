"""The mine stage: support logs in, candidate cases, quarantine and (asked for) raw values out.

`run_mine(MineRequest(...))` is what `casemill mine` calls and the `mine-logs` flow is made of:

    outcome = run_mine(MineRequest(logs=(Path("logs.jsonl"),), fmt="openai-jsonl",
                                   out=Path("candidates.jsonl")))
    outcome.summary.cases_total   # candidates written to outcome.out
    outcome.quarantine            # where the records set aside went

It is built from three pieces, which the flow maps over instead: `plan` checks every input and
output before anything is mined; the parts mine the logs with deduplication off (the flow a
file a task, `mine_file_part`, or a stream's files one after the other, `mine_stream_part`;
`run_mine` one pass over all the files, cut into chunks, `stream_parts`); `finish` merges the
parts in order, deduplicating their cases together and against the corpus (`tally.Merge`), and
writes the outputs whole (nothing is left behind by a run that fails or is interrupted).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casemill.case.model import Case
from casemill.corpus import existing_store
from casemill.domains.registry import known_domains
from casemill.errors import UserError
from casemill.gctune import fewer_collections
from casemill.mining.dedup import KeepAll, MinedDeduper
from casemill.mining.derive.cases import PACKS
from casemill.mining.model import PackedCase, Quarantined
from casemill.mining.output import check_targets, pending_files, quarantine_path
from casemill.mining.parsers import FORMATS, get_parser, spans_files
from casemill.mining.pipeline import MineOptions, collect, iter_mine, raw_record
from casemill.mining.reading import file_size
from casemill.mining.streams import StreamState, mine_end, mine_part
from casemill.mining.tally import Merge, MinedPart, MineResult, MineSummary, Tally
from casemill.mining.toolspec import load_tools_file, parse_tools

log = logging.getLogger(__name__)

CHUNK = 64  # items (cases, quarantined records, raw values) a part: 1000 held 50 MB more


@dataclass(frozen=True)
class Names:
    """What the caller calls each input, for the errors: options on the command line,
    parameters in the flow. `fmt` None: an unknown format is said in the parser registry's
    words."""

    fmt: str | None = "--format"
    out: str = "--out"
    quarantine: str = "--quarantine"
    keep_raw: str = "--keep-raw"
    corpus: str = "--corpus"


CLI_NAMES = Names()
FLOW_NAMES = Names(
    fmt=None, out="out", quarantine="quarantine", keep_raw="keep_raw", corpus="corpus_dir"
)


@dataclass(frozen=True)
class MineRequest:
    """Every input, output and knob of one mining run. `quarantine` defaults to
    `<out>.quarantine.jsonl`; `keep_raw` (redaction on only) also writes the raw values
    redaction replaced, readable by the user alone; `corpus` is deduplicated against;
    `workers` is a count of processes (0 or 1: this one), or a function of the logs' total
    bytes giving it (the command line's default)."""

    logs: tuple[Path, ...]
    fmt: str
    out: Path
    quarantine: Path | None = None
    keep_raw: Path | None = None
    corpus: Path | None = None
    csv_mapping: Path | None = None  # JSON file mapping CSV columns (format csv)
    tools: Path | None = None  # JSON file of tool specs for logs that carry none
    redact: bool = True
    seed: int = 0
    names_model: str | None = None  # spaCy pipeline package of the named-entity layer
    max_turns: int = 500
    domain_label: str | None = None
    domain: str | None = None  # a pack to mine into (`mining_domain`), or generic:LABEL
    workers: int | Callable[[int], int] = 1
    names: Names = field(default=CLI_NAMES, compare=False)


@dataclass(frozen=True)
class MinePlan:
    """A request checked: its log files, the options every part mines with (deduplication
    off: `finish` deduplicates), where the quarantine goes and how many bytes will be read."""

    request: MineRequest
    files: tuple[Path, ...]
    options: MineOptions
    quarantine: Path
    total_bytes: int

    def is_stream(self) -> bool:
        """Whether the files' traces or conversations may go on from one file into the next,
        so the parts must be mined one after the other (`mine_stream_part`)."""
        return spans_files(list(self.files), self.request.fmt)

    def tool_specs(self) -> list[dict[str, Any]] | None:
        """The tool specs as a flow task takes them (a list it can hash for its cache)."""
        tools = self.options.tools
        return list(tools.by_name.values()) if tools else None


@dataclass(frozen=True)
class MineOutcome:
    """What a run wrote and counted."""

    summary: MineSummary
    fmt: str
    out: Path
    quarantine: Path
    keep_raw: Path | None
    workers: int

    @property
    def quarantined(self) -> int:
        return sum(self.summary.quarantined.values())

    @property
    def nothing_found(self) -> bool:
        """The logs held no record at all."""
        return not self.summary.conversations_read and not self.summary.quarantined

    def unread_problem(self) -> str | None:
        """Not one conversation could be read but records were quarantined (most often logs
        of another format): what to say, else None."""
        s = self.summary
        if s.conversations_read or not s.quarantined:
            return None
        reasons = ", ".join(f"{k} {v:,}" for k, v in s.quarantined.items())
        return (
            f"no conversation could be read: all {self.quarantined:,} record(s) were "
            f"quarantined ({reasons}; see {self.quarantine}); are the logs in --format "
            f"{self.fmt}?"
        )

    def as_json(self) -> dict[str, Any]:
        """The summary `casemill mine --json` prints."""
        return {
            **self.summary.model_dump(mode="json"),
            "out": str(self.out),
            "workers": self.workers,
        }

    def as_flow_result(self) -> dict[str, Any]:
        """What the `mine-logs` flow returns."""
        return {
            "candidates": str(self.out),
            "quarantine": str(self.quarantine),
            "count": self.summary.cases_total,
            "quarantined": self.quarantined,
            "summary": self.summary.model_dump(mode="json"),
        }


def _check_format(fmt: str, option: str | None) -> None:
    if option is None:
        get_parser(fmt)  # an unknown format: a UserError naming the known ones
    elif fmt not in FORMATS:
        raise UserError(f"{option} {fmt!r} is not one of {', '.join(FORMATS)}")


def _check_logs(logs: Iterable[Path]) -> tuple[Path, ...]:
    files = tuple(Path(p) for p in logs)
    folders = [str(p) for p in files if p.is_dir()]
    if folders:
        raise UserError(f"a folder, not a log file: {', '.join(folders)} (name its files)")
    missing = [str(p) for p in files if not p.is_file()]
    if missing:
        raise UserError(f"no such log file: {', '.join(missing)}")
    return files


def load_csv_mapping(path: Path) -> Any:
    from pydantic import ValidationError

    from casemill.mining.parsers.csv_tickets import CsvMapping

    try:
        return CsvMapping.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:  # the first problem, by field, without pydantic's links
        err = exc.errors(include_url=False)[0]
        at = f"field '{'.'.join(str(p) for p in err['loc'])}': " if err["loc"] else ""
        why = err["msg"].removeprefix("Value error, ")
        raise UserError(f"{path}: not a valid CSV column mapping: {at}{why}") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: not a valid CSV column mapping: {exc}") from exc


def plan(request: MineRequest) -> MinePlan:
    """Check every input and output of `request` before anything is mined (a `UserError`
    naming the option or file and what to do) and work out the options the parts mine with."""
    r, names = request, request.names
    _check_format(r.fmt, names.fmt)
    files = _check_logs(r.logs)
    if not r.redact and r.keep_raw:
        raise UserError("--keep-raw only makes sense with redaction on; drop --no-redact")
    if r.csv_mapping and r.fmt != "csv":  # it would be ignored, silently
        raise UserError(f"--csv-mapping applies to --format csv only, not --format {r.fmt}")
    mapping = load_csv_mapping(r.csv_mapping) if r.csv_mapping else None
    specs = load_tools_file(r.tools) if r.tools else None
    total = sum(file_size(p) for p in files)
    if r.corpus is not None:  # refused before any mining: read as empty, it would pass all
        existing_store(r.corpus, names.corpus)
    quarantine = r.quarantine or quarantine_path(r.out)
    targets = {names.out: r.out, names.quarantine: quarantine, names.keep_raw: r.keep_raw}
    check_targets(list(files), targets)
    pack, label = mining_domain(r.domain, r.domain_label)
    options = MineOptions(
        redact=r.redact,
        seed=r.seed,
        keep_raw=r.keep_raw is not None,
        names_model=r.names_model,
        max_turns=r.max_turns,
        domain_label=label,
        pack=pack,
        csv_mapping=mapping,
        tools=specs,
        workers=r.workers(total) if callable(r.workers) else r.workers,
        dedup=False,  # the parts keep every case: `finish` deduplicates them together
    )
    return MinePlan(r, files, options, quarantine, total)


def mining_domain(domain: str | None, label: str | None) -> tuple[str | None, str | None]:
    """(pack, generic label) that `--domain` and `--domain-label` ask for: a pack logs can be
    mined into (`PACKS`), or `generic:LABEL` (the same as `--domain-label LABEL`); a
    `UserError` listing the known packs for any other name."""
    if domain is None or domain in PACKS:
        return domain, label
    if domain.startswith("generic:") and domain[len("generic:") :]:
        asked = domain[len("generic:") :]
        if label not in (None, asked):
            raise UserError(f"--domain {domain} and --domain-label {label} disagree: give one")
        return None, asked
    into = ", ".join(PACKS)
    known = known_domains()
    if domain == "support":
        why = "support cases need no --domain: a log calling the support tools gives them"
    elif domain in known:
        why = f"logs cannot be mined into the {domain} pack (no miner rebuilds its state)"
    else:
        why = f"no such domain pack; known packs: {', '.join(known)}"
    raise UserError(
        f"--domain {domain}: {why}. Packs logs can be mined into: {into}; any other log gives "
        "generic:LABEL cases on its recorded tools (--domain generic:LABEL or --domain-label)"
    )


def part_options(
    *, redact: bool, seed: int, tools: list[dict[str, Any]] | None, workers: int
) -> MineOptions:
    """The options a flow task mines its part with, from its parameters (which its cache key
    is made of): those `plan` gives a flow's request."""
    specs = parse_tools(tools) if tools else None
    return MineOptions(redact=redact, seed=seed, tools=specs, workers=workers, dedup=False)


def mine_file_part(path: Path, fmt: str, options: MineOptions) -> MineResult:
    """One log file's part: every case it gives (deduplication is `finish`'s), in order."""
    return collect([Path(path)], fmt, options, ())


def mine_stream_part(
    path: Path | None, fmt: str, stream: StreamState | None, options: MineOptions
) -> tuple[MineResult, StreamState | None]:
    """A part of a stream, going on from the state the files before left: a file (its cases,
    the state for the next file), or with no `path` what is still open after the last file
    (those cases, None)."""
    if path is None:
        if stream is None:
            raise ValueError("what is still open is mined from the state a stream's files left")
        return mine_end(stream, options=options), None
    return mine_part(Path(path), fmt, stream, options=options)


def stream_parts(
    planned: MinePlan, progress: Callable[[int, int], None] | None = None
) -> Iterator[MinedPart]:
    """One pass over all the files (a parser's state goes on from file to file, so a stream
    needs no special care), cut into parts of `CHUNK` items so memory stays flat; the counts
    ride on the last part. `progress(n, total)`: n more bytes read of the logs' total (0 when
    mining starts)."""
    total = planned.total_bytes
    counted = None
    if progress is not None:
        progress(0, total)  # mining starts
        counted = lambda n: progress(n, total)  # noqa: E731
    tally, part = Tally(), MinedPart()
    fmt, options = planned.request.fmt, planned.options
    with KeepAll() as keep:
        for item in iter_mine(planned.files, fmt, options, tally, keep, counted):
            if isinstance(item, Case | PackedCase):
                part.cases.append(item)
            elif isinstance(item, Quarantined):
                part.quarantined.append(item)
            else:
                part.raw_values.append(raw_record(item))
            if len(part) >= CHUNK:
                yield part
                part = MinedPart()
    part.summary = tally.summary(options.redact, options.names_model)
    yield part


def finish(planned: MinePlan, parts: Iterable[MineResult | MinedPart]) -> MineOutcome:
    """Merge `parts` (in order) into the run's outputs: their cases deduplicated together and
    against the corpus, written to the candidates file; their quarantined records and (asked
    for) raw values to theirs. Every file is written whole or not at all."""
    r, names = planned.request, planned.request.names
    existing = existing_store(r.corpus, names.corpus).cases() if r.corpus is not None else ()
    targets = {
        "out": (names.out, r.out),
        "quarantine": (names.quarantine, planned.quarantine),
        "raw": (names.keep_raw, r.keep_raw),
    }
    threshold = planned.options.dedup_threshold
    with (
        pending_files(targets) as files,
        fewer_collections(),
        MinedDeduper(existing, threshold) as seen,
    ):
        merge = Merge(seen)
        for part in parts:
            _write_part(files, merge.take(part), part)
    summary = merge.summary()
    log.info("mined %d candidate(s) into %s", summary.cases_total, r.out)
    return MineOutcome(
        summary, r.fmt, r.out, planned.quarantine, r.keep_raw, planned.options.workers
    )


def _write_part(files: dict[str, Any], kept: Iterable[Case | PackedCase], part: Any) -> None:
    # pydantic's JSON is byte for byte orjson's of `model_dump(mode="json")`, without the
    # intermediate dicts; a worker's PackedCase carries those bytes already
    write_case = files["out"].write_json
    for case in kept:
        write_case(
            case.json
            if isinstance(case, PackedCase)
            else case.__pydantic_serializer__.to_json(case)
        )
    for item in part.quarantined:
        files["quarantine"].write(item.model_dump(mode="json"))
    if "raw" in files:
        for record in part.raw_values:
            files["raw"].write(record)


def run_mine(
    request: MineRequest, *, progress: Callable[[int, int], None] | None = None
) -> MineOutcome:
    """Mine `request.logs` into candidate cases (review pending), the quarantine and, asked
    for, the raw values: `plan`, one streamed pass (`stream_parts`), `finish`."""
    planned = plan(request)
    return finish(planned, stream_parts(planned, progress))
