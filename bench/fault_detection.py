"""Fault-detection score of a case set: the share of the reference agent's faulty variants it
catches. A variant is caught by a case set when at least one case there is passed by the
reference agent and failed by the variant (task success as `casemill.evaluation.scoring.score` says).

    uv run python bench/fault_detection.py [--seeds seeds/support.jsonl] [--cases generated.jsonl]
    uv run python bench/fault_detection.py --generate   # expand the seeds first (default config)

Prints the reference agent's success rate, then per variant whether the seeds catch it and
(with `--cases`) whether the generated cases do, and the scores of the seeds alone and of the
seeds plus the generated cases. Lines of `--cases` that are not valid cases are reported and
skipped.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _report import description, figure  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from casemill.case.model import Case  # noqa: E402
from casemill.evaluation.reference import VARIANTS  # noqa: E402
from casemill.evaluation.runner import run  # noqa: E402
from casemill.evaluation.scoring import score  # noqa: E402
from casemill.io.jsonl import read_jsonl  # noqa: E402


def load_cases(path: Path) -> list[Case]:
    cases, bad = [], 0
    for line in read_jsonl(path):
        if line.error:
            bad += 1
            print(f"  skipped {line.file}:{line.number}: {line.error}", file=sys.stderr)
            continue
        try:
            case = Case.model_validate(line.value)
        except ValidationError as exc:
            bad += 1
            print(f"  skipped {line.file}:{line.number}: {exc.errors()[0]['msg']}", file=sys.stderr)
            continue
        if case.domain == "support":
            cases.append(case)
    if bad:
        print(f"{path}: {bad} unreadable line(s) skipped", file=sys.stderr)
    return cases


def generated(seeds: list[Case]) -> list[Case]:
    """The candidates `casemill.generators.expand` makes from `seeds` with the default config."""
    from casemill.generators import ExpandConfig, expand

    started = time.perf_counter()
    result = expand(seeds, ExpandConfig(), 0, existing=seeds)
    cands = [c for c in result.candidates if c.domain == "support"]
    print(
        f"generated {len(cands)} candidates from {len(seeds)} seeds "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return cands


def successes(spec: str, cases: list[Case], run_dir: Path) -> list[bool]:
    trajectories = run(spec, cases, run_dir, concurrency=8, timeout_s=30)
    return [score(case, t).task_success for case, t in zip(cases, trajectories, strict=True)]


def caught(reference: list[bool], variant: list[bool]) -> list[int]:
    return [i for i, (r, v) in enumerate(zip(reference, variant, strict=True)) if r and not v]


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--seeds", type=Path, default=ROOT / "seeds" / "support.jsonl")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--cases", type=Path, default=None, help="generated candidates (JSONL)")
    group.add_argument(
        "--generate",
        action="store_true",
        help="generate the candidates: `casemill.generators.expand` on the seeds, default config, seed 0",
    )
    args = parser.parse_args()

    sets = {"seeds": load_cases(args.seeds)}
    if args.cases:
        sets["generated"] = load_cases(args.cases)
    elif args.generate:
        sets["generated"] = generated(sets["seeds"])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        reference = {
            k: successes("reference", v, Path(tmp) / f"reference-{k}") for k, v in sets.items()
        }
        for name, ok in reference.items():
            print(
                f"reference on {name}: {sum(ok)}/{len(ok)} cases succeed ({sum(ok) / max(1, len(ok)):.1%})"
            )
        rows = []
        for variant in VARIANTS:
            hits = {}
            for name, cases in sets.items():
                ok = successes(f"reference:{variant}", cases, Path(tmp) / f"{variant}-{name}")
                hits[name] = caught(reference[name], ok)
            rows.append((variant, hits))

    print()
    print(f"{'variant':<26} " + " ".join(f"{name:>22}" for name in sets))
    for variant, hits in rows:
        cells = [f"{'caught' if hits[n] else 'missed'} ({len(hits[n])} cases)" for n in sets]
        only = (
            " <- caught only by generated cases" if not hits["seeds"] and any(hits.values()) else ""
        )
        print(f"{variant:<26} " + " ".join(f"{c:>22}" for c in cells) + only)
    total = len(rows)
    seeds_score = sum(1 for _, h in rows if h["seeds"]) / total
    print()
    print(
        f"fault-detection score, seeds alone: {seeds_score:.2f} ({sum(1 for _, h in rows if h['seeds'])}/{total} variants)"
    )
    n_seeds = len(sets["seeds"])
    figure(f"fault-detection score, {n_seeds} seeds alone", round(seeds_score, 2), "—")
    if "generated" in sets:
        both = sum(1 for _, h in rows if any(h.values()))
        print(
            f"fault-detection score, seeds + generated: {both / total:.2f} ({both}/{total} variants)"
        )
        figure(
            f"fault-detection score, seeds + {len(sets['generated'])} generated",
            round(both / total, 2),
            "—",
        )
    print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
