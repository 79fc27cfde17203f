"""Wall time of `casemill demo --review auto`, cold and warm.

Runs `python -m casemill.cli demo --review auto --workdir <tmp>` from the project root twice as a
subprocess: first with a fresh, empty `PREFECT_HOME` (cold: Prefect's database is created and
its server started from nothing), then again with the same home (warm). Prints both wall times;
the target (< 120 s) is on the warm run.

    uv run python bench/demo_time.py [--agents reference,...] [--per-seed 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _report import description, figure  # noqa: E402

TARGET_S = 120.0


def run_demo(home: Path, workdir: Path, extra: list[str]) -> tuple[float, int]:
    """One demo run; returns its wall seconds and exit code (its output goes to ours)."""
    env = {**os.environ, "PREFECT_HOME": str(home)}
    env.pop("PREFECT_API_URL", None)
    cmd = [sys.executable, "-m", "casemill.cli", "demo", "--review", "auto"]
    cmd += ["--workdir", str(workdir), *extra]
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, check=False)
    return time.perf_counter() - started, done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--agents", help="passed to `casemill demo --agents` (default: its own)")
    parser.add_argument("--per-seed", type=int, help="passed to `casemill demo --per-seed`")
    args = parser.parse_args(argv)
    extra = []
    if args.agents:
        extra += ["--agents", args.agents]
    if args.per_seed:
        extra += ["--per-seed", str(args.per_seed)]
    with tempfile.TemporaryDirectory(prefix="casemill-demo-time-") as tmp:
        home = Path(tmp) / "prefect"
        home.mkdir()
        times = {}
        for label in ("cold", "warm"):
            secs, code = run_demo(home, Path(tmp) / f"demo-{label}", extra)
            print(f"demo ({label} Prefect home): {secs:.1f} s wall, exit code {code}", flush=True)
            if code != 0:
                print(f"demo failed on the {label} run (exit code {code})", file=sys.stderr)
                return code
            times[label] = secs
    figure("demo wall time, cold (fresh PREFECT_HOME)", round(times["cold"], 1), "—", "s")
    warm = times["warm"]
    figure(
        "demo wall time, warm (same PREFECT_HOME)",
        round(warm, 1),
        f"< {TARGET_S:.0f}",
        "s",
        warm < TARGET_S,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
