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

The checks, the parts and the merge are those of `casemill.mining.stage` (`plan`,
`mine_file_part` and `mine_stream_part`, `finish`), which `casemill mine` is made of too: the
flow only turns its parameters into a `MineRequest`, maps tasks over the parts and reports.
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
from casemill.mining import stage
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
    """One log file's part (every case it gives: the merge deduplicates)."""
    options = stage.part_options(redact=redact, seed=seed, tools=tools, workers=workers)
    return stage.mine_file_part(Path(path), fmt, options)


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
    options = stage.part_options(redact=redact, seed=seed, tools=tools, workers=workers)
    return stage.mine_stream_part(None if path is None else Path(path), fmt, stream, options)


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
def merge_and_write(results: list[Any], planned: stage.MinePlan) -> stage.MineOutcome:
    """The parts merged, in order, deduplicated together and against the corpus, and written
    (`casemill.mining.stage.finish`, as `casemill mine` writes them)."""
    return stage.finish(planned, results)


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
    planned = stage.plan(
        stage.MineRequest(
            logs=tuple(expand_paths(logs)),
            fmt=fmt,
            out=Path(out),
            corpus=Path(corpus_dir) if corpus_dir else None,
            tools=Path(tools) if tools else None,
            redact=redact,
            seed=seed,
            workers=workers,
            names=stage.FLOW_NAMES,
        )
    )
    files, is_stream = list(planned.files), planned.is_stream()
    logger = get_run_logger()
    logger.info(
        "mining %s (%s, redaction %s) %s",
        count(len(files), "log file"),
        fmt,
        "on" if redact else "OFF",
        "as one stream, file after file" if is_stream else "a task a file",
    )
    args = (redact, seed, code_fingerprint("casemill.mining"), planned.tool_specs(), workers)
    if is_stream:
        results = _mine_stream(files, fmt, *args)
    else:
        futures = [mine_file_task.submit(str(p), file_fingerprint(p), fmt, *args) for p in files]
        results = [f.result() for f in futures]
    outcome = merge_and_write(quote(results), planned)
    _report(outcome, out, len(files))
    return outcome.as_flow_result()


def _report(outcome: stage.MineOutcome, out: str, files: int) -> None:
    """The run's summary as an artifact, and its counts in the run's log."""
    summary = outcome.summary.model_dump(mode="json")
    artifacts.table(
        "mine-summary",
        [{"figure": k, "value": str(v)} for k, v in summary.items() if k != "files"],
        f"mined {count(outcome.summary.cases_total, 'candidate')} from {count(files, 'file')}",
    )
    get_run_logger().info(
        "mined %s into %s (%s quarantined)",
        count(outcome.summary.cases_total, "candidate"),
        out,
        count(outcome.quarantined, "record"),
    )
