"""What the plugin registry costs: the one scan of the installed distributions' entry points a
process makes, a lookup after it, and the per-trial check for plugin metrics in `score`.

    uv run python bench/plugin_lookup.py

Prints figures only (no assertion): each is the median of several runs in fresh processes
where the first lookup is measured, in-process otherwise."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import description, figure  # noqa: E402

FIRST = """
import time
t = time.perf_counter()
from casemill import plugins
u = time.perf_counter()
plugins.names("metric")
print(u - t, time.perf_counter() - u)
"""


def first_scan_s(runs: int = 5) -> tuple[float, float]:
    """In a fresh process: importing `casemill.plugins`, then its first `names` (the one scan
    of the entry points of every installed distribution), medians of `runs`."""
    imports, scans = [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", FIRST], capture_output=True, text=True)
        imported, scanned = map(float, out.stdout.split())
        imports.append(imported)
        scans.append(scanned)
    return statistics.median(imports), statistics.median(scans)


def per_call_us(fn, n: int = 20_000) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--runs", type=int, default=5, help="fresh processes to time")
    args = parser.parse_args()

    from casemill import plugins
    from casemill.evaluation.scoring.plugins import plugin_metrics

    imported, scanned = first_scan_s(args.runs)
    print(f"fresh process: import casemill.plugins {imported:.3f} s, first scan {scanned:.3f} s")
    figure("first entry-point scan", round(scanned, 4), "—", "s")
    print(
        f"find('operator', 'casing') once loaded: {per_call_us(lambda: plugins.find('operator', 'casing')):.2f} us"
    )
    print(f"names('metric'): {per_call_us(lambda: plugins.names('metric')):.2f} us")
    per_trial = per_call_us(plugin_metrics)
    print(f"plugin_metrics() per trial (none installed): {per_trial:.2f} us")
    figure("plugin-metric check per trial", round(per_trial, 3), "—", "us")


if __name__ == "__main__":
    main()
