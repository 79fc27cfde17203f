"""Build `seeds/support.jsonl`, the hand-written seed cases of the support domain.

The seeds are defined in `scripts/seedlib/` (refunds, orders, service, dialogues, scenarios).
Each is checked before anything is written: the case model, semantic validation (tool names,
parameter schemas, referenced ids) and the replay of its expected calls against the policy.
Output: one case a line, sorted by id; the same definitions always give the same bytes.

    uv run python scripts/build_seeds.py            # write seeds/support.jsonl
    uv run python scripts/build_seeds.py --check    # exit 1 if the committed file is stale
    uv run python scripts/build_seeds.py --out DIR/support.jsonl
    uv run python scripts/build_seeds.py --summary  # coverage: main intent x outcome, labels
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from seedlib import dialogues, orders, refunds, scenarios, service  # noqa: E402

from casemill.case.model import Case  # noqa: E402
from casemill.io.jsonl import atomic_write_text, dumps_line  # noqa: E402
from casemill.validation.semantic import semantic_findings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "seeds" / "support.jsonl"


def build_cases() -> list[Case]:
    """Every seed case, sorted by id."""
    cases = [
        *refunds.cases(),
        *orders.cases(),
        *service.cases(),
        *dialogues.multi_turn(),
        *scenarios.cases(),
    ]
    return sorted(cases, key=lambda c: c.id)


def problems(cases: list[Case]) -> list[str]:
    """Everything wrong with the seeds, in words: duplicate ids and validation findings."""
    counts = Counter(c.id for c in cases)
    out = [f"duplicate id {i} ({n} seeds)" for i, n in counts.items() if n > 1]
    for case in cases:
        out += [f"{case.provenance.notes}: {f}" for f in semantic_findings(case)]
    return out


def render(cases: list[Case]) -> str:
    return "".join(dumps_line(c.model_dump(mode="json")) for c in cases)


def write_seeds(path: Path = DEFAULT_OUT) -> Path:
    """Build, check and write the seeds to `path`; raises ValueError when a seed is invalid."""
    cases = build_cases()
    found = problems(cases)
    if found:
        raise ValueError("invalid seeds:\n" + "\n".join(found))
    return atomic_write_text(path, [render(cases)])


def coverage(cases: list[Case]) -> str:
    """A plain-text table of seeds per main intent (rows) and outcome (columns), and labels."""
    outcomes = ("resolve", "clarify", "refuse", "escalate")
    counts = Counter((c.tags.intents[0], c.expected.outcome) for c in cases)
    intents = sorted({intent for intent, _ in counts})
    lines = [f"{'intent':<16}" + "".join(f"{o:>10}" for o in outcomes) + f"{'total':>8}"]
    for intent in intents:
        row = [counts[(intent, o)] for o in outcomes]
        lines.append(f"{intent:<16}" + "".join(f"{n:>10}" for n in row) + f"{sum(row):>8}")
    labels = Counter(label for c in cases for label in c.tags.labels)
    listed = ", ".join(f"{k} {v}" for k, v in sorted(labels.items()))
    lines.append(f"{len(cases)} seeds; labels: {listed}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="file to write")
    parser.add_argument("--check", action="store_true", help="only compare with --out")
    parser.add_argument("--summary", action="store_true", help="print the coverage table")
    args = parser.parse_args(argv)
    if args.summary:
        print(coverage(build_cases()))
        return 0
    if args.check:
        cases = build_cases()
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != render(cases) or problems(cases):
            print(f"{args.out} is stale or invalid; run: uv run python scripts/build_seeds.py")
            return 1
        print(f"{args.out} is up to date ({len(cases)} seeds)")
        return 0
    try:
        path = write_seeds(args.out)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"wrote {len(build_cases())} seeds to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
