"""The `mine-logs` flow: support logs (paths or globs) into redacted candidate cases.

One task a log file (fan-out; each retried on I/O errors and cached on the file's size and
modification time, the options and the code), then one merge that deduplicates the files' cases
together, in order, and against the corpus (the tasks keep every case: near duplicates are not
transitive, so files deduplicated apart could lose cases `casemill mine` keeps), and writes the
candidates and the quarantine atomically. Files whose traces or conversations may go on in the
next file (OTel span exports, logs of model calls: a rotated file splits them) are one stream
(`casemill.mining.spans_files`): their tasks run one after the other, each going on from the state the one
before left (`casemill.mining.mine_part`), and a last task mines what is still open after the last file,
so what a rotated file split is mined whole, as `casemill mine` mines it; each task is cached on
the files up to its own, so a new file mines only itself and what went on into it.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import INPUTS, NO_CACHE, TASK_SOURCE
from prefect.utilities.annotations import quote

from casemill.errors import UserError
from casemill.flows import _artifacts as artifacts
from casemill.flows._logging import not_user_error
from casemill.flows._runtime import code_fingerprint, default_task_runner
from casemill.io.jsonl import atomic_write_jsonl
from casemill.text import count


def expand_paths(logs: list[str]) -> list[Path]:
    """Paths and globs to the sorted list of files; a pattern that matches nothing is an error
    naming the folder a relative one was looked for in (a worker's project folder)."""
    found: list[Path] = []
    for pattern in logs:
        matches = (
            sorted(glob.glob(pattern, recursive=True)) if glob.has_magic(pattern) else [pattern]
        )
        files = [Path(m) for m in matches if Path(m).is_file()]
        if not files:
            where = "" if Path(pattern).is_absolute() else f" (in {Path.cwd()})"
            raise UserError(
                f"no log file at {pattern!r}{where}: give a path or a glob that matches files"
            )
        found += files
    return sorted(dict.fromkeys(found))


def check_outputs(files: list[Path], out: str) -> None:
    """The checks `casemill mine` makes of its outputs: `out` and its quarantine are no folder,
    no log and not each other (before any file is mined)."""
    from casemill.mining.output import check_targets, quarantine_path

    check_targets(files, {"out": Path(out), "quarantine": quarantine_path(Path(out))})


def check_format(fmt: str) -> None:
    """An unknown log format fails the flow before the fan-out (inside a task it was retried for
    every file before the run failed)."""
    from casemill.mining.parsers import get_parser

    get_parser(fmt)


def file_fingerprint(path: Path) -> str:
    stat = path.stat()
    return f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


@task(
    name="mine-file",
    retries=2,
    retry_delay_seconds=2,
    retry_condition_fn=not_user_error,
    cache_policy=INPUTS + TASK_SOURCE,
    persist_result=True,
)
def mine_file_task(
    path: str,
    fingerprint: str,
    fmt: str,
    redact: bool,
    seed: int,
    code: str,
    tools: list[dict[str, Any]] | None = None,
    workers: int = 1,
) -> Any:
    from casemill.mining import mine_file

    options = _options(redact, seed, tools, workers)
    return mine_file(Path(path), fmt, redact=redact, seed=seed, options=options)


def _options(redact: bool, seed: int, tools: list[dict[str, Any]] | None, workers: int) -> Any:
    from casemill.mining import MineOptions
    from casemill.mining.toolspec import parse_tools

    tools_specs = parse_tools(tools) if tools else None
    # the parts are deduplicated together, in order, by the merge: as `casemill mine` does
    return MineOptions(redact=redact, seed=seed, tools=tools_specs, workers=workers, dedup=False)


def _part_name(parameters: dict[str, Any]) -> str:
    path = parameters["path"]
    return f"mine-{path}" if path is not None else "mine-what-is-still-open"


@task(
    name="mine-stream-part",
    task_run_name=_part_name,
    retries=2,
    retry_delay_seconds=2,
    retry_condition_fn=not_user_error,
    # the state carried in is what the files before gave: `fingerprints` (theirs, and this
    # file's) stand for it in the cache key
    cache_policy=(INPUTS - "stream") + TASK_SOURCE,
    persist_result=True,
)
def mine_stream_part_task(
    path: str | None,
    fingerprints: list[str],
    stream: Any,
    fmt: str,
    redact: bool,
    seed: int,
    code: str,
    tools: list[dict[str, Any]] | None = None,
    workers: int = 1,
) -> Any:
    """A part of a stream, going on from the state the files before left: a file (its
    candidates, the state for the next file), or with no `path` what is still open after the
    last file (those candidates, None)."""
    from casemill.mining import mine_end, mine_part

    options = _options(redact, seed, tools, workers)
    if path is None:
        return mine_end(stream, options=options), None
    return mine_part(Path(path), fmt, stream, options=options)


def _mine_stream(files: list[Path], fmt: str, *args: Any) -> list[Any]:
    """The results of a stream's tasks, run one after the other (each needs the state the one
    before left)."""
    results, state, prints = [], None, []
    for path in [*files, None]:
        if path is not None:
            prints.append(file_fingerprint(path))
        part = str(path) if path is not None else None
        result, state = mine_stream_part_task(part, list(prints), state, fmt, *args)
        results.append(result)
    return results


@task(name="merge-and-write", retries=1, retry_condition_fn=not_user_error, cache_policy=NO_CACHE)
def merge_and_write(results: list[Any], out: str, corpus_dir: str | None) -> dict[str, Any]:
    from casemill.corpus import existing_store
    from casemill.mining import merge_results
    from casemill.mining.output import quarantine_path

    existing = existing_store(corpus_dir, "corpus_dir").cases() if corpus_dir else ()
    merged = merge_results(results, existing=existing)
    out_path = Path(out)
    atomic_write_jsonl(out_path, (c.model_dump(mode="json") for c in merged.cases))
    quarantine = quarantine_path(out_path)
    atomic_write_jsonl(quarantine, (q.model_dump(mode="json") for q in merged.quarantined))
    return {
        "candidates": str(out_path),
        "quarantine": str(quarantine),
        "count": len(merged.cases),
        "quarantined": len(merged.quarantined),
        "summary": merged.summary.model_dump(mode="json"),
    }


@flow(name="mine-logs", task_runner=default_task_runner())
def mine_logs(
    logs: list[str],
    fmt: str = "openai-jsonl",
    out: str = "candidates/mined.jsonl",
    corpus_dir: str | None = "corpus",
    redact: bool = True,
    seed: int = 0,
    tools: str | None = None,
    workers: int = 1,
) -> dict[str, Any]:
    """Mine every file matched by `logs` and write the candidates (review pending) to `out`;
    `tools` is a JSON file of the agent's tool specs for logs that carry none; `workers`
    processes mine each task's files (the same candidates as one; on the Dask runner, whose
    worker processes cannot start their own, they are mined in the task's process). A task a
    file; the files of a stream (`casemill.mining.spans_files`) one after the other."""
    from casemill.corpus import existing_store
    from casemill.mining import spans_files
    from casemill.mining.toolspec import load_tools_file

    files = expand_paths(logs)
    check_outputs(files, out)
    check_format(fmt)
    if corpus_dir:  # refused before any mining, as `casemill mine --corpus` refuses it
        existing_store(corpus_dir, "corpus_dir")
    logger = get_run_logger()
    specs = list(load_tools_file(Path(tools)).by_name.values()) if tools else None
    redaction = "on" if redact else "OFF"
    stream = spans_files(files, fmt)
    logger.info(
        "mining %s (%s, redaction %s) %s",
        count(len(files), "log file"),
        fmt,
        redaction,
        "as one stream, file after file" if stream else "a task a file",
    )
    args = (redact, seed, code_fingerprint("casemill.mining"), specs, workers)
    if stream:
        results = _mine_stream(files, fmt, *args)
    else:
        futures = [mine_file_task.submit(str(p), file_fingerprint(p), fmt, *args) for p in files]
        results = [f.result() for f in futures]
    summary = merge_and_write(quote(results), out, corpus_dir)
    artifacts.table(
        "mine-summary",
        [{"figure": k, "value": str(v)} for k, v in summary["summary"].items() if k != "files"],
        f"mined {count(summary['count'], 'candidate')} from {count(len(files), 'file')}",
    )
    logger.info(
        "mined %s into %s (%s quarantined)",
        count(summary["count"], "candidate"),
        out,
        count(summary["quarantined"], "record"),
    )
    return summary
