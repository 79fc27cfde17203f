"""Cold start of the command line with a warm bytecode cache: the median wall time (and CPU time)
of `casemill --help`, `casemill validate --no-batch seeds/` and `casemill validate seeds/` over N
fresh processes, and whether each imported great_expectations or prefect.

    uv run python bench/cold_start.py [--runs 7]

Each command runs once first with PYTHONDONTWRITEBYTECODE unset, so Python writes the bytecode
cache of everything it imports; the timed runs keep it unset and read that cache (this machine's
environment sets PYTHONDONTWRITEBYTECODE=1, which would otherwise make every start a cold one).
Targets (issue 23): `--help` and `validate --no-batch` at most 1 s; `validate` with the batch
layer at most the great_expectations import (about 3 s there; timed here too, in a fresh process
of its own) more than without. Wall times grow with
the machine's load (printed): the CPU times say what the process itself spent.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _report import description, figure  # noqa: E402

CLI = ["-m", "casemill"]
COMMANDS = {
    "casemill --help": [*CLI, "--help"],
    "casemill validate --no-batch seeds/": [*CLI, "validate", "--no-batch", "seeds/"],
    "casemill validate seeds/": [*CLI, "validate", "seeds/"],
    "import great_expectations": ["-c", "import great_expectations.expectations"],
}
WATCHED = ("great_expectations", "prefect")
TARGET_S = 1.0


def warm_env() -> dict[str, str]:
    """The environment with the bytecode cache written and read."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "COLUMNS": "100"}


def run(argv: list[str], *extra: str) -> tuple[float, float, str]:
    """One `python [extra] ARGV` from the project root: wall and CPU seconds (its user + system
    time) and its stderr."""
    cmd = [sys.executable, *extra, *argv]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=warm_env(), capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):  # validate exits 1 when a case is invalid
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return wall, cpu, done.stderr


def imported_packages(argv: list[str]) -> set[str]:
    """The watched packages a run imports, from `-X importtime` (one line a module)."""
    _, _, stderr = run(argv, "-X", "importtime")
    names = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return names & set(WATCHED)


def measure(argv: list[str], runs: int) -> dict[str, float]:
    """Median and best wall time and median CPU time over `runs` timed runs, after one run that
    writes the bytecode cache."""
    run(argv)
    walls, cpus = zip(*(run(argv)[:2] for _ in range(runs)), strict=True)
    return {
        "wall": statistics.median(walls),
        "best": min(walls),
        "cpu": statistics.median(cpus),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each command")
    args = parser.parse_args(argv)
    print(
        f"warm bytecode cache (PYTHONDONTWRITEBYTECODE unset, one untimed run first); "
        f"{args.runs} runs each; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print(f"{'command':<38} {'median wall':>12} {'best wall':>10} {'median CPU':>11}  imports")
    results = {}
    for label, command in COMMANDS.items():
        got = measure(command, args.runs)
        found = imported_packages(command)
        results[label] = (got, found)
        shown = ", ".join(f"{p} {'yes' if p in found else 'no'}" for p in WATCHED)
        print(
            f"{label:<38} {got['wall']:>10.2f} s {got['best']:>8.2f} s {got['cpu']:>9.2f} s  "
            f"{shown}",
            flush=True,
        )
    for label in list(COMMANDS)[:2]:
        got, found = results[label]
        figure(f"{label}: median wall", round(got["wall"], 2), f"<= {TARGET_S}", "s",
               got["wall"] <= TARGET_S)  # fmt: skip
        figure(f"{label}: imports great_expectations", int("great_expectations" in found),
               "0", "", "great_expectations" not in found)  # fmt: skip
    plain = results["casemill validate --no-batch seeds/"][0]["wall"]
    extra = results["casemill validate seeds/"][0]["wall"] - plain
    gx = results["import great_expectations"][0]["wall"]
    print(
        f"the batch layer adds {extra:.2f} s; importing great_expectations alone takes {gx:.2f} s"
    )
    figure("validate seeds/: median wall more than --no-batch", round(extra, 2),
           f"<= {gx:.2f} (the great_expectations import, timed above)", "s",
           extra <= gx)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
