"""Mining throughput and memory on a generated OpenAI-format support log.

Generates support conversations (`casemill.mining.synthetic.support_log`: played out on the support
simulator, opening with the agent's instructions as production logs do, fake people with
personal data of every kind) into a temporary folder with streaming writes, up to the size asked
(1 GB by default, and a 100 MB one to compare peaks), then mines each file in a fresh process
with the defaults of `casemill mine` (redaction on, semantic checks on, dedup on) and prints:
MB/s over the process's CPU time (one core: mining is single-threaded) and over wall time,
conversations per second, and the process's peak resident memory.

With `--source airline` the log is made of variants of the real tau-bench airline conversations
instead (real shapes and sizes, about 17 KiB a conversation, `generic:` cases).

With `--source calls` the support conversations are logged as a gateway logs model calls: a
line a call, each repeating the history (`casemill.mining.synthetic.model_calls`), 16 conversations in
flight at a time, their calls interleaved; mining joins them back into conversations.

With `--workers N ...` each log is also mined with N worker processes (`casemill mine --workers`):
MB/s over wall time, the speed-up over one process, whether the candidates are byte for byte
those of one process, and the peak memory of the whole process tree (sampled).

    uv run python bench/mine_throughput.py [--sizes-mb 100 1024] [--source support|airline]
                                           [--workers 2 4]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import python_speed  # noqa: E402
from _report import description, figure  # noqa: E402

PEAK_LIMIT_MB = 300
CALLS_AT_ONCE = 16  # `--source calls`: conversations in flight
PEAK_GROWTH = (
    0.20  # "independent of file size": the biggest log's peak within 20% of the smallest's
)

MINER = """
import json, sys, threading, time
from pathlib import Path
import psutil
sys.path.insert(0, "bench")
from _common import peak_rss_mb
from casemill.mining.output import mine_to_files
from casemill.mining.pipeline import MineOptions
log, out, workers = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
names_model = sys.argv[4] or None
me, tree_peak, done = psutil.Process(), [0], threading.Event()

def sample():  # resident memory of this process and every process it started
    while not done.wait(0.25):
        rss = 0
        for p in [me, *me.children(recursive=True)]:
            try:
                rss += p.memory_info().rss
            except psutil.Error:
                pass
        tree_peak[0] = max(tree_peak[0], rss)

if __name__ == "__main__":
    if workers > 1:  # not in the one-core run, whose CPU time the sampler would add to
        threading.Thread(target=sample, daemon=True).start()
    cpu, wall = time.process_time(), time.perf_counter()
    summary = mine_to_files([log], "openai-jsonl", out, options=MineOptions(workers=workers,
                                                                         names_model=names_model))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    done.set()
    print(json.dumps({"cpu_s": cpu, "wall_s": wall, "peak_rss_mb": peak_rss_mb(),
                      "tree_peak_mb": max(tree_peak[0] / 2**20, peak_rss_mb()),
                      "summary": summary.model_dump(mode="json")}))
"""


def airline_variants(data: Path):
    """Endless variants of the real tau-bench airline conversations: each pass re-draws every
    person in them (names, emails, user ids, addresses, dates of birth) with the redactor's
    surrogates under a new seed, so the shapes and sizes are the real ones and no two
    conversations are alike."""
    from casemill.mining.parsers.openai_jsonl import parse
    from casemill.mining.redact.redactor import redact_conversation

    convs = list(parse(data / "support_logs.jsonl", max_turns=10_000))
    round_ = 0
    while True:
        round_ += 1
        for conv in convs:
            c = redact_conversation(conv, seed=round_).conversation
            messages = []
            for m in c.messages:
                role = {"customer": "user"}.get(m.role, m.role)
                msg = {"role": role, "content": m.content or None}
                if m.calls:
                    msg["tool_calls"] = [
                        {
                            "id": k.id,
                            "type": "function",
                            "function": {"name": k.tool, "arguments": json.dumps(k.arguments)},
                        }
                        for k in m.calls
                    ]
                if m.call_id:
                    msg["tool_call_id"] = m.call_id
                messages.append(msg)
            yield {
                "conversation_id": f"{c.id}-v{round_}",
                "resolved": c.resolved,
                "messages": messages,
            }


def generate(path: Path, size_mb: int, source: str, seed: int = 0) -> tuple[int, int, float]:
    import orjson

    from casemill.mining.synthetic import support_log

    target = size_mb * 1024 * 1024
    written = count = 0
    started = time.perf_counter()
    if source == "airline":
        records = airline_variants(ROOT.parent / "shared" / "data" / "tau-bench-airline-logs")
    else:
        records = support_log(seed=seed, instructions=True)
    if source == "calls":
        from casemill.mining.synthetic import interleaved, model_calls

        records = interleaved(map(model_calls, records), random.Random(seed), CALLS_AT_ONCE)
    with path.open("wb", buffering=1024 * 1024) as fh:
        for record in records:
            line = orjson.dumps(record) + b"\n"
            fh.write(line)
            written += len(line)
            count += 1
            if written >= target:
                break
    return written, count, time.perf_counter() - started


def run(log: Path, out: Path, workers: int = 1, names_model: str = "") -> dict:
    done = subprocess.run(
        [sys.executable, "-c", MINER, str(log), str(out), str(workers), names_model],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def parallel(
    log: Path, folder: Path, source: str, size: int, workers: int, mb: float, one: dict
) -> None:
    """Mine `log` again with `workers` processes and compare with one process's run."""
    out = folder / f"candidates_{source}_{size}mb_w{workers}.jsonl"
    result = run(log, out, workers)
    same = out.read_bytes() == (folder / f"candidates_{source}_{size}mb.jsonl").read_bytes()
    rate, speedup = mb / result["wall_s"], one["wall_s"] / result["wall_s"]
    print(
        f"  {workers} workers: {rate:.1f} MB/s wall ({result['wall_s']:.0f} s), {speedup:.2f}x "
        f"one process's wall time on {os.cpu_count()} cores, candidates "
        f"{'byte for byte the same' if same else 'DIFFERENT'}; main process CPU "
        f"{result['cpu_s']:.0f} s, peak memory {result['tree_peak_mb']:.0f} MB in all "
        f"({result['peak_rss_mb']:.0f} MB the main process)"
    )
    figure(
        f"mining throughput, {size} MB log, {workers} workers (wall time)",
        round(rate, 1),
        "—",
        "MB/s",
    )
    figure(
        f"mining with {workers} workers: candidates the same as one process's, {size} MB log",
        float(same),
        "1 (the same)",
        "",
        same,
    )
    out.unlink() if out.exists() else None


def main() -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--sizes-mb", type=int, nargs="+", default=[100, 1024])
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep the files")
    parser.add_argument(
        "--source",
        choices=["support", "airline", "calls"],
        default="support",
        help="support: synthetic support-domain conversations; airline: variants "
        "of the real tau-bench airline logs (needs ../shared/data); calls: the support "
        "conversations as a gateway's per-call log",
    )
    parser.add_argument(
        "--workers",
        type=int,
        nargs="*",
        default=[],
        help="also mine each log with this many worker processes (wall-time MB/s)",
    )
    parser.add_argument(
        "--names-model",
        default="",
        help="also mine with the named-entity layer on, by this installed spaCy package "
        "(needs casemill[ner]); its MB/s is printed beside",
    )
    args = parser.parse_args()
    yardstick("before")
    with tempfile.TemporaryDirectory(prefix="casemill-bench-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        peaks = []
        for size in args.sizes_mb:
            log = folder / f"{args.source}_{size}mb.jsonl"
            written, count, gen_s = generate(log, size, args.source)
            unit = "model calls" if args.source == "calls" else "conversations"
            print(
                f"generated {written / 1e6:,.0f} MB, {count:,} {unit} "
                f"({written / count / 1024:.1f} KiB each) in {gen_s:.0f} s"
            )
            result = run(log, folder / f"candidates_{args.source}_{size}mb.jsonl")
            s = result["summary"]
            mb = written / 1e6
            print(
                f"  mined {s['conversations_read']:,} conversations -> "
                f"{sum(s['cases'].values()):,} "
                f"cases {s['cases']}, quarantined {sum(s['quarantined'].values())}, duplicates "
                f"{s['duplicates']}"
            )
            print(
                f"  throughput: {mb / result['cpu_s']:.1f} MB/s on one core (CPU time "
                f"{result['cpu_s']:.0f} s), {mb / result['wall_s']:.1f} MB/s wall "
                f"({result['wall_s']:.0f} s), {s['conversations_read'] / result['cpu_s']:,.0f} "
                f"conversations/s"
            )
            print(f"  peak memory: {result['peak_rss_mb']:.0f} MB")
            peaks.append((size, result["peak_rss_mb"]))
            rate, peak = mb / result["cpu_s"], result["peak_rss_mb"]
            figure(
                f"mining throughput, {size} MB log, one core (CPU time)",
                round(rate, 1),
                ">= 20",
                "MB/s",
                rate >= 20,
            )
            figure(
                f"mining peak memory, {size} MB log",
                round(peak),
                f"< {PEAK_LIMIT_MB}",
                "MB",
                peak < PEAK_LIMIT_MB,
            )
            if args.names_model:
                named = run(log, folder / f"named_{size}mb.jsonl", 1, args.names_model)
                s = named["summary"]
                rate = mb / named["cpu_s"]
                print(
                    f"  named-entity layer on ({args.names_model}): {rate:.2f} MB/s on one core "
                    f"(CPU time {named['cpu_s']:.0f} s), {s['redactions'].get('name', 0):,} name "
                    f"replacements (layer off: {result['summary']['redactions'].get('name', 0):,})"
                )
                figure(
                    f"mining throughput with the named-entity layer, {size} MB log",
                    round(rate, 2), "printed", "MB/s", None,
                )  # fmt: skip
            for workers in args.workers:
                parallel(log, folder, args.source, size, workers, mb, result)
            log.unlink() if not args.keep else None
        if len(peaks) > 1:
            print(
                "peak memory by log size: "
                + ", ".join(f"{s} MB log -> {p:.0f} MB" for s, p in peaks)
            )
            (small, small_peak), (big, big_peak) = min(peaks), max(peaks)
            growth = (big_peak - small_peak) / small_peak
            figure(
                f"mining peak memory growth, {small} MB -> {big} MB log",
                round(100 * growth, 1) + 0.0,
                f"<= {PEAK_GROWTH:.0%}",
                "%",
                growth <= PEAK_GROWTH,
            )
    yardstick("after")  # the machine's speed can change during a long run (shared hosts)
    return 0


def yardstick(when: str) -> None:
    loop = python_speed()
    print(f"this machine {when}: a 10M-step CPython loop takes {loop:.2f} s of CPU (best of 3)")
    figure(f"machine yardstick {when}: 10M-step CPython loop", round(loop, 2), "—", "s")


if __name__ == "__main__":
    raise SystemExit(main())
