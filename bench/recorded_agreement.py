"""Agreement of Casemill's verdicts with a log's own: the logged agent, replayed as the agent
under test (`recorded:LOG`) on the cases mined from its log, should pass the cases of the
conversations the log marks resolved.

Mines the log (`casemill mine -f FORMAT`, redaction on, seed 0, into a temporary folder),
runs `casemill eval --agent recorded:LOG` on the cases, and prints: the cases, those not covered
(no conversation in the log), the error kinds, and the pass rate (task success) of the
conversation-level cases (tag label `conversation`) of resolved conversations (the log's
`resolved` field; target >= 0.98), of all conversation-level cases, and of all covered cases.

    uv run python bench/recorded_agreement.py [--log ../shared/data/tau-bench-airline-logs/support_logs.jsonl] [--format openai-jsonl]
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

from casemill.case.model import Case  # noqa: E402
from casemill.evaluation.runner import run  # noqa: E402
from casemill.evaluation.scoring import score  # noqa: E402
from casemill.evaluation.scoring.model import CaseScore  # noqa: E402
from casemill.mining import mine  # noqa: E402
from casemill.recorded import RecordedAgent, parse_spec  # noqa: E402

LOG = ROOT.parent / "shared" / "data" / "tau-bench-airline-logs" / "support_logs.jsonl"
TARGET = 0.98


def resolved_of(agent: RecordedAgent, case: Case) -> bool | None:
    """Whether the log marks the case's conversation resolved (None: not covered, or unsaid)."""
    source = case.provenance.source
    found = agent.log.find(source.conversation_id, source.line) if source else None
    return found.conversation.resolved if found is not None else None


def rate(scores: list[CaseScore]) -> float | None:
    return sum(s.task_success for s in scores) / len(scores) if scores else None


def shown(value: float | None, n: int) -> str:
    return f"{value:.3f} ({n} cases)" if value is not None else f"- ({n} cases)"


def main() -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--log", type=Path, default=LOG)
    parser.add_argument("--format", default="openai-jsonl")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    if not args.log.is_file():
        print(f"no log at {args.log} (the shared data is beside the checkout in ../shared)")
        return 2
    started = time.perf_counter()
    cases = list(mine([args.log], args.format).cases)
    agent = RecordedAgent(parse_spec(f"{args.log}?format={args.format}"))
    with tempfile.TemporaryDirectory() as work:
        trajectories = run(agent, cases, Path(work) / "run", concurrency=args.concurrency)
    by_id = {c.id: c for c in cases}
    scores = [score(by_id[t.case_id], t) for t in trajectories]
    covered = [s for s in scores if s.covered]
    kinds = Counter(s.error_kind for s in covered if s.error_kind)
    conversation = [s for s in covered if "conversation" in by_id[s.case_id].tags.labels]
    resolved = [s for s in conversation if resolved_of(agent, by_id[s.case_id])]
    took = time.perf_counter() - started
    print(f"log: {args.log} ({args.format}), mined and replayed in {took:.1f}s")
    print(f"cases: {len(cases)}; not covered: {len(scores) - len(covered)}")
    print("error kinds: " + (", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none"))
    print(f"pass rate, conversation-level cases of resolved conversations: "
          f"{shown(rate(resolved), len(resolved))}")  # fmt: skip
    print(f"pass rate, conversation-level cases: {shown(rate(conversation), len(conversation))}")
    print(f"pass rate, all covered cases: {shown(rate(covered), len(covered))}")
    for s in resolved:
        if not s.task_success:
            print(f"  failed: {s.case_id} ({by_id[s.case_id].provenance.source.conversation_id}):"
                  f" {s.labels.get('failure', '')}")  # fmt: skip
    value = rate(resolved)
    figure(
        "recorded_agreement_resolved",
        value,
        f">= {TARGET}",
        ok=value is not None and value >= TARGET,
    )
    figure(
        "recorded_not_covered",
        float(len(scores) - len(covered)),
        "== 0",
        ok=len(scores) == len(covered),
    )
    figure(
        "recorded_no_simulator",
        float(kinds.get("no_simulator", 0)),
        "== 0",
        ok=not kinds.get("no_simulator"),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
