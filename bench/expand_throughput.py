"""Throughput of the generators: 100 seeds x 100 candidates from the deterministic operators,
in one process and thread (one core), stage by stage (generation, validation, near-duplicate removal, writing), with
peak memory.

    uv run python bench/expand_throughput.py [--seeds 100] [--per-seed 100]

The 100 seeds are the project's seeds (`seeds/support.jsonl`), topped up with customer-swapped
copies of them when there are fewer. Prints candidates per second for each stage and overall.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import peak_rss_mb  # noqa: E402
from _report import description, figure  # noqa: E402

from casemill.case.model import Case  # noqa: E402
from casemill.dedup import NearDuplicateIndex  # noqa: E402
from casemill.generators import DETERMINISTIC_CHAINS, apply_operator, get_operator, parse_chain  # noqa: E402
from casemill.generators.framework import NotApplicable  # noqa: E402
from casemill.generators.quality import Gate  # noqa: E402
from casemill.generators.seeds import load_seeds  # noqa: E402
from casemill.io.jsonl import atomic_write_jsonl  # noqa: E402


def bench_seeds(count: int) -> list[Case]:
    seeds, _ = load_seeds(ROOT / "seeds")
    swap = get_operator("swap_customer")
    extra, index = [], 0
    while len(seeds) + len(extra) < count:
        base = seeds[index % len(seeds)]
        with contextlib.suppress(NotApplicable):
            extra.extend(apply_operator(swap, base, seed=99, index=index))
        index += 1
    return (seeds + extra)[:count]


def generate(seeds: list[Case], per_seed: int) -> tuple[list[Case], int]:
    chains = [parse_chain(c) for c in DETERMINISTIC_CHAINS]
    out, attempts = [], 0
    for seed_case in seeds:
        made: list[Case] = []
        for index in range(200):
            for specs in chains:
                attempts += 1
                current = seed_case
                try:
                    for spec in specs:
                        current = apply_operator(spec, current, seed=0, index=index)[0]
                except (NotApplicable, IndexError):
                    continue
                made.append(current)
                if len(made) >= per_seed:
                    break
            if len(made) >= per_seed:
                break
        out.extend(made)
    return out, attempts


def timed(label: str, n: int, fn):  # noqa: ANN001, ANN201
    """Run `fn`; print wall and CPU seconds and candidates/s (CPU time is what one core did,
    wall time includes waiting for a core on a busy machine)."""
    start, cpu = time.perf_counter(), time.process_time()
    value = fn()
    secs, cpu_secs = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"{label:<12} {n:>6} candidates  wall {secs:6.2f} s {n / secs:7.0f}/s   "
        f"cpu {cpu_secs:6.2f} s {n / cpu_secs:7.0f}/s"
    )
    return value, (secs, cpu_secs)


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--per-seed", type=int, default=100)
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="also trace Python allocations (slower; peak of traced memory)",
    )
    parser.add_argument("--pin", action="store_true", help="pin the process to one CPU")
    args = parser.parse_args()
    if args.pin and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
    if args.tracemalloc:
        tracemalloc.start()
    seeds = bench_seeds(args.seeds)
    # warm up: imports, nlpaug models, faker, regex caches (not counted)
    generate(seeds[:2], 20)
    print(
        f"{len(seeds)} seeds x {args.per_seed} candidates, {len(DETERMINISTIC_CHAINS)} "
        f"deterministic chains, one core"
    )
    (cands, attempts), t_gen = timed(
        "generation", args.seeds * args.per_seed, lambda: generate(seeds, args.per_seed)
    )
    n = len(cands)
    gate = Gate()
    _, t_val = timed("validation", n, lambda: [gate.problems(c) for c in cands])
    index = NearDuplicateIndex(threshold=0.9, fold_case=False)  # as the expansion gate
    for s in seeds:
        index.add(s)
    dups, t_dup = timed("dedup", n, lambda: sum(index.check_and_add(c) is not None for c in cands))
    with tempfile.TemporaryDirectory() as tmp:
        _, t_write = timed(
            "writing",
            n,
            lambda: atomic_write_jsonl(
                Path(tmp) / "out.jsonl", (c.model_dump(mode="json") for c in cands)
            ),
        )
    wall = sum(t[0] for t in (t_gen, t_val, t_dup, t_write))
    cpu = sum(t[1] for t in (t_gen, t_val, t_dup, t_write))
    print(
        f"{'overall':<12} {n:>6} candidates  wall {wall:6.2f} s {n / wall:7.0f}/s   "
        f"cpu {cpu:6.2f} s {n / cpu:7.0f}/s"
    )
    print(f"attempts {attempts}, candidates {n}, near-duplicates {dups}")
    peak = peak_rss_mb()
    print(f"peak RSS {peak:.0f} MB")
    if args.tracemalloc:
        print(f"peak traced Python memory {tracemalloc.get_traced_memory()[1] / 2**20:.0f} MB")
    rate = n / cpu
    figure(
        "expand: overall, one core (CPU time)",
        round(rate),
        ">= 1,000",
        "candidates/s",
        rate >= 1000,
    )
    figure("expand: overall (wall time)", round(n / wall), "—", "candidates/s")
    figure("expand: peak memory (max RSS)", round(peak), "—", "MB")


if __name__ == "__main__":
    main()
