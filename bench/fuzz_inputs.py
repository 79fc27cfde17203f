"""Fuzz the commands that read records: good records mixed with seeded mutants of others
(`tests/fuzz_records.py`), through `validate`, `review enqueue`, `eval`, `import` and `mine`.

    uv run python bench/fuzz_inputs.py                    # 10,000 mutants, split among them
    uv run python bench/fuzz_inputs.py --mutants 1500     # a smoke run

Each command gets one file: its good records (20 seed cases; 6 companion samples; 10
conversations of the airline logs when ../shared/data is there, else synthetic ones) shuffled
with its share of the mutants. Counted per command: exceptions that escaped the command (a
traceback), good records lost, mutants refused with their file and line, mutants accepted (a
mutant may stay valid), and refusals that name no mutant line. For `mine`, a good record is a
conversation mined when its good records are mined alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT / "tests"))

from _report import description, figure  # noqa: E402
from fuzz_records import MUTATIONS, mixed_file  # noqa: E402


@dataclass
class Tally:
    command: str
    mutants: int = 0
    goods: int = 0
    good_lost: int = 0
    named: int = 0
    accepted: int = 0
    misnamed: int = 0
    tracebacks: int = 0
    seconds: float = 0.0


def jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_bytes().split(b"\n") if x.strip()]


def invoke(tally: Tally, *args: str) -> dict:
    """Run the command in process; an exception it lets out counts as a traceback."""
    from typer.testing import CliRunner

    from casemill.cli import app

    result = CliRunner().invoke(app, [*args, "--json"])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        tally.tracebacks += 1
        print(f"{tally.command}: {result.exception!r}", file=sys.stderr)
        return {}
    if result.exit_code not in (0, 1):
        tally.tracebacks += 1
        print(f"{tally.command}: exit {result.exit_code}: {result.output[-500:]}", file=sys.stderr)
        return {}
    return json.loads(result.stdout or "{}")


def refusals(tally: Tally, named: list[tuple[str, int]], path: Path, mutants: dict) -> None:
    """Count the refused records that name a mutant's line of `path`, and those that do not."""
    on_mutants = [(file, line) for file, line in named if file == str(path) and line in mutants]
    tally.named = len({line for _, line in on_mutants})
    tally.misnamed = len(named) - len(on_mutants)


def fuzz_validate(work: Path, rng: random.Random, n: int, seeds: list[bytes]) -> Tally:
    tally = Tally("validate", mutants=n, goods=20)
    path = work / "validate.jsonl"
    good_lines, mutants = mixed_file(path, seeds[:20], seeds[20:], n, rng, sorted(MUTATIONS))
    quarantine = work / "validate.quarantine.jsonl"
    report = invoke(tally, "validate", "--no-batch", "--quarantine", str(quarantine), str(path))
    bad = [(b["file"], b["line"]) for b in report.get("bad_records", [])]
    refusals(tally, bad, path, mutants)
    tally.good_lost = len({line for _, line in bad} & good_lines)
    tally.accepted = report.get("valid", 0) - (len(good_lines) - tally.good_lost)
    return tally


def fuzz_enqueue_eval(work: Path, rng: random.Random, n: int, seeds: list[bytes]) -> list[Tally]:
    enqueue, evaluate = (
        Tally("review enqueue", mutants=n // 2, goods=20),
        Tally("eval", mutants=n - n // 2, goods=20),
    )
    good_ids = {json.loads(s)["id"] for s in seeds[:20]}
    for tally in (enqueue, evaluate):
        started = time.perf_counter()
        path = work / f"{tally.command.replace(' ', '-')}.jsonl"
        good_lines, mutants = mixed_file(
            path, seeds[:20], seeds[20:], tally.mutants, rng, sorted(MUTATIONS)
        )
        if tally is enqueue:
            counts = invoke(tally, "review", "enqueue", str(path), "--db", f"sqlite:///{work}/q.db")
            named = jsonl(path.with_suffix(".quarantine.jsonl"))
            refusals(tally, [(q["file"], q["line"]) for q in named], path, mutants)
            tally.good_lost = max(0, len(good_lines) - counts.get("added", 0))
            tally.accepted = counts.get("added", 0) - (len(good_lines) - tally.good_lost)
        else:
            out = work / "run"
            invoke(tally, "eval", "--agent", "reference", "--cases", str(path), "-o", str(out))
            ran = {r["case_id"] for r in jsonl(out / "results.jsonl")}
            named = jsonl(out / "quarantine.jsonl")
            refusals(tally, [(q["file"], q["line"]) for q in named], path, mutants)
            tally.good_lost = len(good_ids - ran)
            tally.accepted = len(ran - good_ids)
        tally.seconds = time.perf_counter() - started
    return [enqueue, evaluate]


def fuzz_import(work: Path, rng: random.Random, n: int) -> Tally:
    samples = (ROOT / "tests/formats/fixtures/companion_mixed.jsonl").read_bytes().split(b"\n")
    samples = [s for s in samples if s.strip()]
    tally = Tally("import", mutants=n, goods=6)
    path, out = work / "import.jsonl", work / "imported.jsonl"
    good_lines, mutants = mixed_file(path, samples[:6], samples[6:], n, rng, sorted(MUTATIONS))
    invoke(tally, "import", str(path), "--from", "companion", "-o", str(out))
    lines = {c["provenance"]["source"]["line"] for c in jsonl(out)}
    named = jsonl(work / "imported.quarantine.jsonl")
    refusals(tally, [(q.get("file"), q.get("line")) for q in named], path, mutants)
    tally.good_lost = len(good_lines - lines)
    tally.accepted = len(lines & set(mutants))
    return tally


def log_lines() -> list[bytes]:
    logs = ROOT.parent / "shared" / "data" / "tau-bench-airline-logs" / "support_logs.jsonl"
    if logs.is_file():
        return [x for x in logs.read_bytes().split(b"\n") if x.strip()]
    from casemill.mining.synthetic import support_log

    return [json.dumps(r).encode() for r in support_log(seed=0, count=60)]


def fuzz_mine(work: Path, rng: random.Random, n: int) -> Tally:
    lines = log_lines()
    tally = Tally("mine", mutants=n, goods=10)

    def mined(path: Path, out: Path) -> set[str]:
        invoke(tally, "mine", str(path), "--format", "openai-jsonl", "-o", str(out))
        return {c["provenance"]["source"]["conversation_id"] for c in jsonl(out)}

    alone = work / "alone.jsonl"
    alone.write_bytes(b"\n".join(lines[:10]) + b"\n")
    expected = mined(alone, work / "alone-mined.jsonl")
    path, out = work / "logs.jsonl", work / "mined.jsonl"
    _, mutants = mixed_file(path, lines[:10], lines[10:], n, rng, sorted(MUTATIONS))
    got = mined(path, out)
    tally.good_lost = len(expected - got)
    named = jsonl(work / "mined.quarantine.jsonl")
    refusals(tally, [(q["file"], q["line"]) for q in named], path, mutants)
    tally.accepted = len({c["provenance"]["source"]["line"] for c in jsonl(out)} & set(mutants))
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--mutants", type=int, default=10_000, help="in all, split in five")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    seeds = [x for x in (ROOT / "seeds/support.jsonl").read_bytes().split(b"\n") if x.strip()]
    share = args.mutants // 5
    tallies: list[Tally] = []
    with tempfile.TemporaryDirectory(prefix="casemill-fuzz-") as folder:
        work = Path(folder)
        (work / "corpus").mkdir()
        os.environ["CASEMILL_CORPUS_DIR"] = str(work / "corpus")
        steps: list[Callable[[], Tally | list[Tally]]] = [
            lambda: fuzz_validate(work, rng, share, seeds),
            lambda: fuzz_enqueue_eval(work, rng, 2 * share, seeds),
            lambda: fuzz_import(work, rng, share),
            lambda: fuzz_mine(work, rng, args.mutants - 4 * share),
        ]
        for step in steps:
            started = time.perf_counter()
            done = step()
            for tally in done if isinstance(done, list) else [done]:
                tally.seconds = tally.seconds or time.perf_counter() - started
                tallies.append(tally)
    report(tallies)


def report(tallies: list[Tally]) -> None:
    head = ("command", "mutants", "named", "accepted", "neither", "misnamed", "goods", "lost")
    print(" | ".join(head) + " | tracebacks | seconds")
    for t in tallies:
        neither = t.mutants - t.named - t.accepted
        row = (t.command, t.mutants, t.named, t.accepted, neither, t.misnamed, t.goods)
        print(
            " | ".join(str(x) for x in row) + f" | {t.good_lost} | {t.tracebacks} | {t.seconds:.1f}"
        )
    print(
        "neither: mutants a command neither refused by line nor counted as accepted (blank lines;"
        " for enqueue, mine and eval, valid mutants queued before, deduplicated or joined)"
    )
    total = sum(t.mutants for t in tallies)
    tracebacks = sum(t.tracebacks for t in tallies)
    lost = sum(t.good_lost for t in tallies)
    misnamed = sum(t.misnamed for t in tallies)
    figure("mutated records", total, ">= 10,000", "records", total >= 10_000)
    figure("tracebacks", tracebacks, "0", "", tracebacks == 0)
    figure("good records lost", lost, "0", "records", lost == 0)
    figure("refusals naming no mutant line", misnamed, "0", "records", misnamed == 0)


if __name__ == "__main__":
    main()
