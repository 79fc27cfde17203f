"""Where one core's time goes when mining: CPU time per conversation of each stage of the
pipeline, against the budget a conversation has at the 20 MB/s target.

Generates a support log as `mine_throughput.py` does (`casemill.mining.synthetic.support_log`, the
agent's instructions opening each conversation; 20 MB by default) or reads `--log`, then mines
it in this process the way `casemill mine` does (redaction on, semantic checks on, dedup on,
the collector tuned by `fewer_collections`), one conversation at a time, timing each stage with
the process's CPU clock: parse (read the line, JSON, the conversation), redact, derive (cases,
their content ids and the semantic replay check), dedup (signature, text, the seen-table) and
write (each case's JSON to a file). The log is mined twice and the second pass is reported, so
caches filled once per process (surrogate pools, compiled patterns) do not count. Prints
microseconds per conversation and each stage's share, and what 20 MB/s leaves a conversation
of the log's mean size.

    uv run python bench/mine_stages.py [--size-mb 20] [--log FILE.jsonl]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _report import description, figure  # noqa: E402

TARGET_MB_S = 20
STAGES = ("parse", "redact", "derive", "dedup", "write")


def mine_timed(log: Path, out: Path) -> tuple[Counter, int]:
    """CPU nanoseconds per stage over one pass of `log`, and the conversations mined."""
    from casemill.gctune import fewer_collections
    from casemill.mining.dedup import MinedDeduper
    from casemill.mining.derive.cases import DeriveOptions
    from casemill.mining.derive.cases import derive_cases as derive
    from casemill.mining.model import Conversation
    from casemill.mining.parsers.openai_jsonl import parse
    from casemill.mining.pipeline import label_from_path
    from casemill.mining.redact.redactor import redact_conversation

    clock, spent, count = time.process_time_ns, Counter(), 0
    options = DeriveOptions(domain_label=label_from_path(log))
    with fewer_collections(), MinedDeduper() as deduper, out.open("wb") as fh:
        records = parse(log, max_turns=500)
        while True:
            t0 = clock()
            conv = next(records, None)
            t1 = clock()
            spent["parse"] += t1 - t0
            if conv is None:
                break
            if not isinstance(conv, Conversation):  # a quarantined line
                continue
            count += 1
            redacted = redact_conversation(conv, 0).conversation
            t2 = clock()
            cases = derive(redacted, options).cases
            t3 = clock()
            spent["redact"] += t2 - t1
            spent["derive"] += t3 - t2
            kept = [case for case in cases if deduper.check(case)[0] is None]
            t4 = clock()
            for case in kept:
                fh.write(case.__pydantic_serializer__.to_json(case) + b"\n")
            spent["dedup"] += t4 - t3
            spent["write"] += clock() - t4
    return spent, count


def main() -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--size-mb", type=int, default=20, help="size of the generated log")
    parser.add_argument("--log", type=Path, help="an OpenAI-format log to mine instead")
    args = parser.parse_args()
    from mine_throughput import generate

    with tempfile.TemporaryDirectory(prefix="casemill-bench-") as tmp:
        log = args.log
        if log is None:
            log = Path(tmp) / "support.jsonl"
            written, count, _ = generate(log, args.size_mb, "support")
            print(f"generated {written / 1e6:,.0f} MB, {count:,} conversations")
        mine_timed(log, Path(tmp) / "warm.jsonl")  # fills the per-process caches
        spent, count = mine_timed(log, Path(tmp) / "candidates.jsonl")
        size = log.stat().st_size
    total = sum(spent.values())
    per = {stage: spent[stage] / count / 1000 for stage in STAGES}
    budget = size / count / (TARGET_MB_S * 1e6) * 1e6
    print(f"{count:,} conversations, {size / count / 1024:.1f} KiB each; CPU per conversation:")
    for stage in STAGES:
        print(f"  {stage:7s} {per[stage]:7.1f} us  {spent[stage] / total:6.1%}")
        figure(f"mining CPU per conversation: {stage}", round(per[stage], 1), "—", "us")
    whole = total / count / 1000
    print(f"  {'total':7s} {whole:7.1f} us  ({size / 1e6 / (total / 1e9):.1f} MB/s on one core)")
    print(f"  {TARGET_MB_S} MB/s leaves {budget:.0f} us a conversation of this size")
    figure("mining CPU per conversation: all stages", round(whole, 1), "—", "us")
    figure(
        f"mining CPU a conversation of this size has at {TARGET_MB_S} MB/s",
        round(budget),
        "—",
        "us",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
