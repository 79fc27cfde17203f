"""Streaming the results of mining to files: candidates, quarantined records and, only when
asked, the raw values redaction replaced. Each file is written beside its target under a
temporary name and renamed into place when mining finishes, so a crash never leaves a partial
file behind."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import IO

import orjson

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.gctune import fewer_collections
from casemill.io.targets import check_targets  # re-exported: mining's callers import it here
from casemill.io.tempfiles import temp_beside
from casemill.mining.dedup import MinedDeduper
from casemill.mining.model import PackedCase, Quarantined
from casemill.mining.pipeline import MineOptions, MineSummary, Tally, iter_mine, raw_record


class _Pending:
    def __init__(self, path: Path, private: bool = False):
        self.path = path
        self.private = private  # readable by its owner alone (raw personal data)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, self.tmp = temp_beside(path)  # after removing the ones a killed run left
        self.fh: IO[bytes] = os.fdopen(fd, "wb", buffering=1024 * 1024)

    def write(self, record: dict) -> None:
        self.fh.write(orjson.dumps(record) + b"\n")

    def write_json(self, line: bytes) -> None:
        self.fh.write(line)
        self.fh.write(b"\n")

    def commit(self) -> None:
        self.fh.flush()
        os.fsync(self.fh.fileno())
        self.fh.close()
        if not self.private:  # mkstemp's 0600 kept for a private file
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self.tmp, 0o666 & ~umask)
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        self.fh.close()
        self.tmp.unlink(missing_ok=True)


def quarantine_path(out: Path) -> Path:
    """Where the quarantined records of `out` go unless told: `<out>.quarantine.jsonl`."""
    return out.with_name(out.name.removesuffix(".jsonl") + ".quarantine.jsonl")


def _open(targets: dict[str, tuple[str, Path | None]]) -> dict[str, _Pending]:
    """A pending file for each target given (by name: `out`, ...), or a `UserError` naming
    the option whose path cannot be written (and none left behind)."""
    files: dict[str, _Pending] = {}
    for name, (option, target) in targets.items():
        if target is None:
            continue
        try:
            files[name] = _Pending(target, private=name == "raw")
        except OSError as exc:
            for f in files.values():
                f.abort()
            why = exc.strerror or str(exc)
            blocker = next((p for p in Path(target).parents if p.exists()), None)
            if blocker is not None and not blocker.is_dir():
                why = f"{blocker} is a file, not a folder"
            raise UserError(f"{option} {target}: cannot write there ({why})") from exc
    return files


@contextmanager
def pending_files(targets: dict[str, tuple[str, Path | None]]) -> Iterator[dict[str, _Pending]]:
    """A pending file for each target given (`_open`), each renamed into place when the block
    ends, or all removed when it raises (an error, a Ctrl-C): a file is written whole or not
    at all."""
    files = _open(targets)
    try:
        yield files
    except BaseException:
        for f in files.values():
            f.abort()
        raise
    for f in files.values():
        f.commit()


def mine_to_files(
    paths: Iterable[Path],
    fmt: str,
    out: Path,
    *,
    quarantine: Path | None = None,
    keep_raw: Path | None = None,
    options: MineOptions = MineOptions(),
    existing: Iterable[Case] = (),
    progress: Callable[[int], None] | None = None,
) -> MineSummary:
    """Mine `paths` straight to `out` (candidates JSONL), `quarantine` (JSONL of bad records,
    default `<out>.quarantine.jsonl`) and, only if given, `keep_raw` (raw values with their
    surrogates, readable by the user alone: mode 0600). Returns the summary."""
    quarantine = quarantine or quarantine_path(out)
    paths = list(paths)
    targets = {"--out": out, "--quarantine": quarantine, "--keep-raw": keep_raw}
    check_targets(paths, targets)
    if keep_raw is not None:
        options = replace(options, keep_raw=True)
    tally = Tally()
    # pydantic's JSON is byte for byte orjson's of `model_dump(mode="json")`, without the
    # intermediate dicts; taken as the serialiser's bytes (what model_dump_json decodes)
    with (
        pending_files(
            dict(zip(("out", "quarantine", "raw"), targets.items(), strict=True))
        ) as files,
        fewer_collections(),
        MinedDeduper(existing, options.dedup_threshold) as deduper,
    ):
        write_case = files["out"].write_json
        for item in iter_mine(paths, fmt, options, tally, deduper, progress):
            if isinstance(item, Case):
                write_case(item.__pydantic_serializer__.to_json(item))
            elif isinstance(item, PackedCase):  # from a worker process
                write_case(item.json)
            elif isinstance(item, Quarantined):
                files["quarantine"].write(item.model_dump(mode="json"))
            elif "raw" in files:
                files["raw"].write(raw_record(item))
    return tally.summary(options.redact, options.names_model)
