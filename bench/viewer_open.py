"""The run viewer of a large run: how long report.html takes to open in Chromium, how long the
first case takes to open, and how big the run folder is.

Generates support cases (`bench/_common.py`), evaluates a faulty variant of the reference agent
on them with `casemill eval`'s own stage (so the transcripts, calls and states are the runner's,
and a share of cases fail), then opens the report from the folder in Debian's Chromium with
Playwright (`file://`, no server), best of `--opens`:

    uv run python bench/viewer_open.py [--cases 5000] [--opens 3] [--keep DIR]

Targets: the viewer open (its script has listed the cases) in under 2 s; the folder under 20 MB.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import generate_cases  # noqa: E402
from _report import description, figure  # noqa: E402

from casemill.evaluation.stage import EvaluateRequest, run_evaluate  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
AGENT = "reference:obeys_injection"


def build_run(folder: Path, n_cases: int, seed: int) -> Path:
    cases = list(generate_cases(random.Random(seed), n_cases))
    source = folder / "cases.jsonl"
    source.write_text("".join(c.model_dump_json() + "\n" for c in cases), encoding="utf-8")
    run_dir = folder / "run"
    start = time.perf_counter()
    outcome = run_evaluate(EvaluateRequest(agent=AGENT, cases=source, output=run_dir))
    took = time.perf_counter() - start
    summary = outcome.summary
    print(
        f"evaluated {AGENT} on {summary.cases:,} cases in {took:.1f} s: task success "
        f"{summary.task_success_rate:.3f}"
    )
    return run_dir


def folder_size(run_dir: Path) -> float:
    """The folder's size in MB, each file printed."""
    total = 0
    for path in sorted(run_dir.rglob("*")):
        if path.is_file():
            size = path.stat().st_size
            total += size
            print(f"  {path.relative_to(run_dir)}: {size / 1e6:.2f} MB")
    print(f"run folder: {total / 1e6:.2f} MB")
    return total / 1e6


def open_times(report: Path, opens: int) -> tuple[float, float]:
    """Best seconds from navigation to the viewer listing the cases, and to the first case
    shown (its details inflated), over `opens` fresh pages."""
    from playwright.sync_api import sync_playwright

    best_open = best_case = float("inf")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        for _ in range(opens):
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            start = time.perf_counter()
            page.goto(report.as_uri())
            page.wait_for_selector("html[data-viewer=ready]", timeout=60_000)
            opened = time.perf_counter() - start
            page.locator("tr[data-case]").first.click()
            page.wait_for_selector(".cm-trial", timeout=60_000)
            shown = time.perf_counter() - start - opened
            print(f"  opened in {opened:.3f} s, first case shown {shown:.3f} s later")
            best_open, best_case = min(best_open, opened), min(best_case, shown)
            page.close()
        browser.close()
    return best_open, best_case


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--opens", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="build the run here and keep it")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        sys.exit(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        run_dir = build_run(folder, args.cases, args.seed)
        size = folder_size(run_dir)
        opened, shown = open_times(run_dir / "report.html", args.opens)
    print(f"viewer of {args.cases:,} cases: opens in {opened:.3f} s, first case {shown:.3f} s")
    n = f"{args.cases:,} cases"
    figure(f"viewer open, {n} (best of {args.opens})", round(opened, 3), "< 2", "s", opened < 2)
    figure(f"viewer first case shown, {n}", round(shown, 3), "—", "s")
    figure(f"run folder size, {n}", round(size, 2), "< 20", "MB", size < 20)


if __name__ == "__main__":
    main()
