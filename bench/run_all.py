"""Run every benchmark and print one table of their figures against the targets of the issues.

    uv run python bench/run_all.py                       # acceptance sizes (~15-20 min, 2 cores)
    uv run python bench/run_all.py --only validate,score # a subset, by short name
    uv run python bench/run_all.py --quick               # reduced sizes: a smoke check only

Each script runs as a subprocess from the project root, in the order below; its output (stdout
and stderr) is streamed to one log file in a temporary folder (the path is printed first), and its
`FIGURE {json}` lines (`bench/_report.py`) become the rows of the table: script, figure, target,
measured with its unit, and "pass", "falls short" or "—" (no target). A script that fails (or
prints no figure) is a row saying so with its exit code, and the others still run. The exit code
is 1 when any figure falls short or any script failed, else 0.

Acceptance sizes and what each costs (wall times on this 2-core machine, estimated from the
rates the scripts printed at smaller sizes; more when other work shares the CPU):

- validate: `validate_throughput.py --cases 100000`: 100,000 generated cases through every layer
  including the Great Expectations suite, ~2-3 min, ~1 GB of memory (the in-process timing of
  each layer holds the cases); then `casemill validate` itself, streaming, in fresh processes on
  25,000 and 100,000 cases, ~1 min more, ~250 MB peak each.
- expand: `expand_throughput.py --seeds 100 --per-seed 100`: 10,000 candidates, ~30 s.
- mine: `mine_throughput.py --sizes-mb 100 1024 --workers 2`: generates a 100 MB and a 1 GB log
  (~20 MB/s) and mines each in a fresh process (~11 MB/s: ~100 s for the 1 GB log), then again
  with 2 worker processes (~60 s on 2 cores), ~6 min in all, the longest step; needs ~2.5 GB
  free in the temporary folder.
- mine-stages: `mine_stages.py --size-mb 20`: mines a 20 MB log twice in one process and
  prints each stage's CPU time per conversation (parse, redact, derive, dedup, write), ~5-10 s.
- mine-accuracy: `mine_accuracy.py`: the 100 tau-bench airline conversations, ~10 s.
- recorded-agreement: `recorded_agreement.py`: the same conversations mined, then replayed as
  the agent under test (`recorded:LOG`) on their cases, ~10 s.
- eval: `eval_throughput.py --cases 1000 --concurrency 50`: 2,000 requests at 100 ms, plus 50
  cases one at a time, ~30 s.
- score: `score_throughput.py --cases 5000 --trials 4`: 20,000 trajectories, ~30 s.
- fault-detection: `fault_detection.py --generate`: expands the seeds (default config, ~3,300
  candidates), then runs the reference agent and each faulty variant on seeds and candidates,
  ~2-3 min.
- review: `review_concurrency.py --reviewers 10 --decisions 1000`: SQLite and PostgreSQL, ~30 s.
- overhead: `pipeline_overhead.py`: the full pipeline as plain calls and as flows, ~1-1.5 min.
- dask: `threads_vs_dask.py --repeats 3`: the evaluate flow on the bundled corpus with the
  reference agent, three times on 2 threads and three times on a local Dask cluster of 2 worker
  processes, and the ratio of the medians, ~3-5 min.
- demo: `demo_time.py`: `casemill demo --review auto` twice (cold and warm Prefect home), with
  its default agents (the reference and two faulty variants), ~2 min.
- cold-start: `cold_start.py --runs 7`: `casemill --help`, `casemill validate --no-batch seeds/`
  and `casemill validate seeds/` in fresh processes with a warm bytecode cache, ~1-2 min.
- viewer: `viewer_open.py --cases 5000`: the run viewer of a 5,000-case run opened in Chromium
  (best of 3) and the run folder's size, ~1 min.
- fuzz: `fuzz_inputs.py --mutants 10000`: good records mixed with 10,000 seeded mutants
  (truncated, deep, lone surrogates, huge numbers, 10,000-turn conversations...) through
  `validate`, `review enqueue`, `eval`, `import` and `mine`; counts tracebacks, good records lost
  and refusals naming no mutant line (each must be 0), ~2-3 min.

`--quick` runs every script on small inputs (hundreds of cases, logs of a few MB); its numbers
check that the scripts run and their figure lines parse, not the acceptance figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ConfigDict, ValidationError
from rich.console import Console
from rich.table import Table

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from _report import PREFIX, description  # noqa: E402

PASS, SHORT, NONE, FAILED = "pass", "falls short", "—", "failed"


class Bench(BaseModel):
    """One benchmark script: its short name, file, and arguments at full and quick sizes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    script: Path
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()


class Figure(BaseModel):
    """One `FIGURE` line of a bench script (see `bench/_report.py`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    measured: float | int | None
    target: str
    unit: str = ""
    ok: bool | None = None


class ScriptResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    bench: str
    returncode: int
    seconds: float
    figures: tuple[Figure, ...] = ()
    bad_lines: tuple[str, ...] = ()


class Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    script: str
    figure: str
    target: str
    measured: str
    verdict: str


def _b(name: str, script: str, full: Sequence[str], quick: Sequence[str]) -> Bench:
    return Bench(name=name, script=BENCH / script, full=tuple(full), quick=tuple(quick))


BENCHES: tuple[Bench, ...] = (
    _b("validate", "validate_throughput.py", ["--cases", "100000"], ["--cases", "2000"]),
    _b(
        "expand",
        "expand_throughput.py",
        ["--seeds", "100", "--per-seed", "100"],
        ["--seeds", "10", "--per-seed", "10"],
    ),
    _b(
        "mine",
        "mine_throughput.py",
        ["--sizes-mb", "100", "1024", "--workers", "2"],
        ["--sizes-mb", "2", "5", "--workers", "2"],
    ),
    _b("mine-stages", "mine_stages.py", ["--size-mb", "20"], ["--size-mb", "2"]),
    _b("mine-accuracy", "mine_accuracy.py", [], []),
    _b("recorded-agreement", "recorded_agreement.py", [], []),
    _b(
        "eval",
        "eval_throughput.py",
        ["--cases", "1000", "--concurrency", "50"],
        ["--cases", "100", "--concurrency", "20", "--serial-subset", "10"],
    ),
    _b(
        "score",
        "score_throughput.py",
        ["--cases", "5000", "--trials", "4"],
        ["--cases", "250", "--trials", "4"],
    ),
    _b("fault-detection", "fault_detection.py", ["--generate"], ["--generate"]),
    _b(
        "review",
        "review_concurrency.py",
        ["--reviewers", "10", "--decisions", "1000"],
        ["--reviewers", "4", "--decisions", "100"],
    ),
    _b("overhead", "pipeline_overhead.py", [], []),
    _b("dask", "threads_vs_dask.py", ["--repeats", "3"], []),
    _b("demo", "demo_time.py", [], ["--agents", "reference"]),
    _b("cold-start", "cold_start.py", ["--runs", "7"], ["--runs", "2"]),
    _b("fuzz", "fuzz_inputs.py", ["--mutants", "10000"], ["--mutants", "1000"]),
    _b("viewer", "viewer_open.py", ["--cases", "5000"], ["--cases", "300", "--opens", "1"]),
)


def parse_line(line: str) -> Figure | None:
    """The figure on a `FIGURE {json}` line; None for any other line. Raises ValueError when the
    line has the prefix but not a valid figure."""
    if not line.startswith(PREFIX):
        return None
    try:
        return Figure.model_validate(json.loads(line[len(PREFIX) :]))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ValueError(f"malformed figure line {line.strip()!r}: {exc}") from exc


def collect(bench: str, lines: Iterable[str], returncode: int, seconds: float) -> ScriptResult:
    """A script's result from its output lines: its figures, and the figure lines that did not
    parse."""
    figures, bad = [], []
    for line in lines:
        try:
            fig = parse_line(line)
        except ValueError:
            bad.append(line.rstrip("\n"))
            continue
        if fig is not None:
            figures.append(fig)
    return ScriptResult(
        bench=bench,
        returncode=returncode,
        seconds=seconds,
        figures=tuple(figures),
        bad_lines=tuple(bad),
    )


def run_script(bench: Bench, args: Sequence[str], log: IO[str]) -> ScriptResult:
    """Run one script from the project root, streaming its output (stdout and stderr) to `log`."""
    cmd = [sys.executable, str(bench.script), *args]
    log.write(f"\n===== {bench.name}: {' '.join(cmd)}\n")
    log.flush()
    started = time.perf_counter()
    lines: list[str] = []
    with subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        errors="replace",
        bufsize=1,
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            log.flush()
            if line.startswith(PREFIX):
                lines.append(line)
        returncode = proc.wait()
    seconds = time.perf_counter() - started
    log.write(f"===== {bench.name}: exit code {returncode} after {seconds:.1f} s\n")
    return collect(bench.name, lines, returncode, seconds)


def _with_unit(text: str, unit: str) -> str:
    if not unit:
        return text
    return f"{text}{unit}" if unit in ("%", "x") else f"{text} {unit}"


def format_measured(fig: Figure) -> str:
    """The value as the script rounded it, with thousands separators and its unit."""
    if fig.measured is None:
        return NONE
    return _with_unit(f"{fig.measured:,}", fig.unit)


def format_target(fig: Figure) -> str:
    """The target with the figure's unit, unless it names a unit of its own or there is none."""
    target = fig.target
    if target in ("", NONE) or not fig.unit or not target[-1].isdigit():
        return target
    return _with_unit(target, fig.unit)


def verdict(fig: Figure) -> str:
    return NONE if fig.ok is None else PASS if fig.ok else SHORT


def rows_for(result: ScriptResult) -> list[Row]:
    """The table rows of one script: a row a figure; a failed run, a malformed figure line or a
    run with no figure at all is a row of its own marked failed."""
    rows = [
        Row(
            script=result.bench,
            figure=f.name,
            target=format_target(f),
            measured=format_measured(f),
            verdict=verdict(f),
        )
        for f in result.figures
    ]
    failures = [f"malformed figure line: {line[:60]}" for line in result.bad_lines]
    if result.returncode != 0:
        failures.append(f"script failed (exit code {result.returncode})")
    elif not result.figures:
        failures.append("script printed no figure (exit code 0)")
    rows += [
        Row(script=result.bench, figure=why, target="", measured="", verdict=FAILED)
        for why in failures
    ]
    return rows


def exit_code(rows: Iterable[Row]) -> int:
    return 1 if any(r.verdict in (SHORT, FAILED) for r in rows) else 0


STYLES = {PASS: "green", SHORT: "bold red", FAILED: "bold red", NONE: "dim"}


def table(rows: Sequence[Row], title: str) -> Table:
    out = Table(title=title, show_lines=False)
    for column, justify in (
        ("script", "left"),
        ("figure", "left"),
        ("target", "right"),
        ("measured", "right"),
        ("result", "left"),
    ):
        out.add_column(column, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        style = STYLES.get(r.verdict, "")
        out.add_row(
            r.script,
            r.figure,
            r.target,
            r.measured,
            f"[{style}]{r.verdict}[/]" if style else r.verdict,
        )
    return out


def select(only: str | None) -> list[Bench]:
    if not only:
        return list(BENCHES)
    names = [n.strip() for n in only.split(",") if n.strip()]
    known = {b.name: b for b in BENCHES}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(
            f"--only: unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(known)}"
        )
    return [b for b in BENCHES if b.name in names]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument(
        "--only", help="comma-separated short names: " + ",".join(b.name for b in BENCHES)
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="reduced sizes: a smoke check, not the acceptance figures",
    )
    args = parser.parse_args(argv)
    benches = select(args.only)
    console = Console() if sys.stdout.isatty() else Console(width=160)
    log_path = Path(tempfile.mkdtemp(prefix="casemill-bench-")) / "run_all.log"
    mode = "QUICK (reduced sizes, not the acceptance sizes)" if args.quick else "acceptance sizes"
    console.print(f"bench run_all, {mode}; log: {log_path}", soft_wrap=True)
    rows: list[Row] = []
    with log_path.open("w", encoding="utf-8") as log:
        for bench in benches:
            bench_args = bench.quick if args.quick else bench.full
            console.print(f"  {bench.name}: {bench.script.name} {' '.join(bench_args)} ...")
            result = run_script(bench, bench_args, log)
            console.print(
                f"    exit code {result.returncode}, {len(result.figures)} figure(s), "
                f"{result.seconds:.0f} s"
            )
            rows.extend(rows_for(result))
    title = "Casemill benchmarks" + (" — QUICK run, not the acceptance sizes" if args.quick else "")
    console.print(table(rows, title))
    console.print(f"log: {log_path}", soft_wrap=True)
    return exit_code(rows)


if __name__ == "__main__":
    raise SystemExit(main())
