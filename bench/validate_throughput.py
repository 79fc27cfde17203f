"""Validation throughput: cases per second for each layer on generated support cases.

    uv run python bench/validate_throughput.py                # 100,000 cases
    uv run python bench/validate_throughput.py --cases 20000  # quicker

Generates N valid cases (seed variants and domain-built cases, seeded), writes them to a temporary
JSONL file, then times each layer on one core: JSON parse, JSON Schema, the pydantic model,
semantic (tool names, parameter schemas, references, replay), lints, the Great Expectations batch
suite, and model + semantic together (the target: at least 5,000 cases/s). CPU seconds of this
process are reported beside wall seconds (the machine may be shared), and the peak memory (this
process holds every case, to time each layer alone).

Then `casemill validate` itself, which streams its input, runs in a fresh process on the first
N/4 and on all N cases (`--memory-sizes` to choose), and its peak memory is printed for each: it
must not grow with the cases (the figure: bytes of peak memory per extra case, at most 1 KB; the
ids and a few scalars a case that the batch suite needs are all it keeps).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import generate_cases, peak_rss_mb  # noqa: E402
from _report import description, figure  # noqa: E402

from casemill.case.model import Case  # noqa: E402
from casemill.domains import get_domain  # noqa: E402
from casemill.gctune import bulk_allocation, checkpoint  # noqa: E402
from casemill.io.jsonl import read_jsonl  # noqa: E402
from casemill.validation import (  # noqa: E402
    BatchRules,
    Row,
    SchemaLayer,
    batch_findings,
    lint_findings,
    semantic_findings,
    validate_paths,
)

TARGET = 5_000
MAX_BYTES_PER_CASE = 1024  # peak memory of `casemill validate` per extra case (was ~43,000)


def timed(label: str, n: int, fn: Callable[[], object]) -> tuple[object, float]:
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rate = n / cpu if cpu else float("inf")
    print(
        f"{label:<34} {n:>8,} cases  {wall:7.2f} s wall  {cpu:7.2f} s cpu  {rate:>10,.0f} cases/s"
        f"  peak {peak_rss_mb():>6,.0f} MB"
    )
    return result, rate


def write_cases(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for case in generate_cases(rng, n):
            fh.write(case.model_dump_json() + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip-batch", action="store_true", help="skip the GX layer")
    parser.add_argument(
        "--memory-sizes",
        type=int,
        nargs=2,
        metavar=("SMALL", "LARGE"),
        help="case counts of the two `casemill validate` runs (default: N/4 and N)",
    )
    parser.add_argument(
        "--skip-memory", action="store_true", help="skip the `casemill validate` runs"
    )
    args = parser.parse_args(argv)
    n = args.cases
    sizes = sorted(args.memory_sizes or (max(1, n // 4), n))
    print(
        f"python {sys.version.split()[0]}, pid {os.getpid()}, one core, {n:,} cases, seed {args.seed}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cases.jsonl"
        start = time.perf_counter()
        write_cases(path, n, args.seed)
        size = path.stat().st_size
        print(f"generated in {time.perf_counter() - start:.1f} s: {size / 1e6:.1f} MB at {path}")
        rates = run_layers(path, n, skip_batch=args.skip_batch)
        print(f"peak memory (max RSS, every case held): {peak_rss_mb():,.0f} MB")
        if not args.skip_memory:
            streamed_memory(path, n, sizes, args.seed)
    verdict = "meets" if rates["model+semantic"] >= TARGET else "is below"
    print(
        f"model + semantic: {rates['model+semantic']:,.0f} cases/s {verdict} the {TARGET:,}/s target"
    )
    combined = rates["model+semantic"]
    figure(
        "validation: model + semantic (one core)",
        round(combined),
        f">= {TARGET:,}",
        "cases/s",
        combined >= TARGET,
    )
    for layer, rate in rates.items():
        if layer != "model+semantic":
            figure(f"validation layer: {layer}", round(rate), "—", "cases/s")
    figure("validation: peak memory", round(peak_rss_mb()), "—", "MB")
    return 0


def run_layers(path: Path, n: int, *, skip_batch: bool) -> dict[str, float]:
    with bulk_allocation():  # as validate_paths runs
        return _run_layers(path, n, skip_batch=skip_batch)


def _parse(path: Path) -> list[object]:
    out = []
    for count, line in enumerate(read_jsonl(path), 1):
        checkpoint(count)
        out.append(line.value)
    return out


def _models(records: list) -> list[Case]:
    out = []
    for count, record in enumerate(records, 1):
        checkpoint(count)
        out.append(Case.model_validate(record))
    return out


def _run_layers(path: Path, n: int, *, skip_batch: bool) -> dict[str, float]:
    rates: dict[str, float] = {}
    lines, rates["json"] = timed("json parse (read_jsonl)", n, lambda: _parse(path))
    records = [x for x in lines if x is not None]
    assert len(records) == n, f"expected {n} records, parsed {len(records)}"
    layer = SchemaLayer.default()
    found, rates["schema"] = timed(
        "json schema (Draft 2020-12)", n, lambda: sum(len(layer.findings(r)) for r in records)
    )
    assert found == 0, f"{found} schema findings on generated cases"
    cases, rates["model"] = timed("model (pydantic, content id)", n, lambda: _models(records))
    domain = get_domain("support")
    found, rates["semantic"] = timed(
        "semantic incl. replay",
        n,
        lambda: sum(len(semantic_findings(c, domain)) for c in cases),
    )
    assert found == 0, f"{found} semantic findings on generated cases"
    _, rates["lint"] = timed("lints", n, lambda: sum(len(lint_findings(c, domain)) for c in cases))

    def model_and_semantic() -> int:
        bad = 0
        for record in records:
            bad += len(semantic_findings(Case.model_validate(record), domain))
        return bad

    cases = []  # free the parsed cases before the combined run
    found, rates["model+semantic"] = timed("model + semantic (one core)", n, model_and_semantic)
    assert found == 0
    if not skip_batch:
        start = time.perf_counter()
        import great_expectations  # noqa: F401

        print(f"{'(great_expectations import)':<34} {time.perf_counter() - start:25.2f} s wall")
        rows = [Row(Case.model_validate(r), str(path), i) for i, r in enumerate(records, 1)]
        found, rates["batch"] = timed(
            "batch (GX suite)", n, lambda: batch_findings(rows, BatchRules())
        )
        print(f"{'':<34} batch findings: {len(found)} {[f.rule for f in found][:3]}")
        rows = []
    records = lines = []
    report, rates["end-to-end"] = timed(
        "validate_paths (all but batch)", n, lambda: validate_paths([path], batch=False)
    )
    assert report.ok and len(report.valid) == n, json.dumps(report.counts())
    return rates


# `casemill validate` in this child process, which reports its own peak memory when it exits
CHILD = """
import atexit, sys
sys.path.insert(0, {bench!r})
from _common import peak_rss_mb
atexit.register(lambda: print(f"PEAK_MB {{peak_rss_mb():.3f}}", file=sys.stderr, flush=True))
from casemill.cli import main
sys.argv = ["casemill", "validate", *sys.argv[1:]]
main()
"""


def validate_in_child(path: Path, quarantine: Path) -> tuple[dict, float, float]:
    """Run `casemill validate PATH --json` in a fresh process: its report, wall seconds and
    peak memory (MB, its own high-water mark)."""
    code = CHILD.format(bench=str(Path(__file__).resolve().parent))
    command = [sys.executable, "-c", code, str(path), "--json", "--quarantine", str(quarantine)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    peaks = [line.split()[1] for line in done.stderr.splitlines() if line.startswith("PEAK_MB ")]
    if done.returncode not in (0, 1) or not peaks:
        raise SystemExit(f"casemill validate failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout), wall, float(peaks[-1])


def first_cases(path: Path, n: int, size: int, seed: int, folder: Path) -> Path:
    """A file of the first `size` generated cases (the same seed makes the same first cases)."""
    part = folder / f"first-{size}.jsonl"
    if size > n:
        write_cases(part, size, seed)
        return part
    with path.open("rb") as source, part.open("wb") as out:
        for _ in range(size):
            out.write(source.readline())
    return part


def streamed_memory(path: Path, n: int, sizes: list[int], seed: int) -> None:
    """Peak memory of `casemill validate` on two sizes of input, and its growth per case."""
    peaks: list[tuple[int, float]] = []
    for size in sizes:
        part = first_cases(path, n, size, seed, path.parent)
        report, wall, peak = validate_in_child(part, path.parent / f"q-{size}.jsonl")
        assert report["records"] == size and report["ok"], json.dumps(report["counts"])
        print(
            f"{'casemill validate (own process)':<34} {size:>8,} cases  {wall:7.2f} s wall"
            f"  {size / wall:>10,.0f} cases/s  peak {peak:>6,.0f} MB"
        )
        figure(f"casemill validate: peak memory, {size:,} cases", round(peak), "—", "MB")
        peaks.append((size, peak))
        part.unlink()
    (small, low), (large, high) = peaks
    if large == small:
        return
    per_case = max(0.0, high - low) * 2**20 / (large - small)
    verdict = "within" if per_case <= MAX_BYTES_PER_CASE else "over"
    print(
        f"casemill validate: peak {low:,.0f} MB at {small:,} cases, {high:,.0f} MB at "
        f"{large:,}: {per_case:,.0f} bytes a case more, {verdict} {MAX_BYTES_PER_CASE:,}"
    )
    figure(
        "casemill validate: peak memory per extra case",
        round(per_case),
        f"<= {MAX_BYTES_PER_CASE:,}",
        "bytes",
        per_case <= MAX_BYTES_PER_CASE,
    )


if __name__ == "__main__":
    sys.exit(main())
