"""Mining accuracy on the tau-bench airline logs.

Mines `../shared/data/tau-bench-airline-logs/support_logs.jsonl` with redaction off (surrogates
would replace the ids the ground truth names), takes the conversation-level cases of resolved
conversations, and compares their expected write actions with the benchmark's expected actions
in `ground_truth.jsonl` (write actions only, by the shared naming rule, and without
`transfer_to_human_agents`, which the benchmark's own reward ignores). A mined call matches a
ground-truth call with the same tool name and arguments, compared two ways:

- strict: arguments equal as JSON;
- state-equivalent: arguments equal except that keys a ground-truth object does not have are
  ignored inside nested objects (`{"flight_number", "date", "origin"}` matches
  `{"flight_number", "date"}`): the airline tools read only the keys they know, so both calls
  leave the same database state, which is what the benchmark's reward checks.

Also checks that every unresolved conversation reached review marked `needs_label`.

    uv run python bench/mine_accuracy.py [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _report import figure  # noqa: E402

from mining import mine  # noqa: E402
from mining.derive.common import is_read  # noqa: E402

IGNORED = {"transfer_to_human_agents"}


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def subsumes(truth: Any, mined: Any, top: bool = True) -> bool:
    """`mined` equals `truth`, ignoring extra keys in nested objects (not at the top level)."""
    if isinstance(truth, dict) and isinstance(mined, dict):
        if top and set(truth) != set(mined):
            return False
        return all(k in mined and subsumes(v, mined[k], False) for k, v in truth.items())
    if isinstance(truth, list) and isinstance(mined, list):
        return len(truth) == len(mined) and all(
            subsumes(t, m, False) for t, m in zip(truth, mined, strict=True)
        )
    return canonical(truth) == canonical(mined)


def match_count(truth: list[tuple[str, dict]], mined: list[tuple[str, dict]], strict: bool) -> int:
    left = list(mined)
    hits = 0
    for tool, args in truth:
        for i, (m_tool, m_args) in enumerate(left):
            same = canonical(args) == canonical(m_args) if strict else subsumes(args, m_args)
            if tool == m_tool and same:
                hits += 1
                del left[i]
                break
    return hits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared" / "data" / "tau-bench-airline-logs"
    )
    args = parser.parse_args()
    logs, truth_file = args.data / "support_logs.jsonl", args.data / "ground_truth.jsonl"
    started = time.perf_counter()
    result = mine([logs], "openai-jsonl", redact=False)
    elapsed = time.perf_counter() - started
    truth = {}
    for line in truth_file.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        truth[row["conversation_id"]] = [
            (a["name"], a["kwargs"])
            for a in row["expected_actions"]
            if not is_read(a["name"]) and a["name"] not in IGNORED
        ]
    resolved = {
        json.loads(line)["conversation_id"]: json.loads(line)["resolved"]
        for line in logs.read_text(encoding="utf-8").splitlines()
    }
    level = {
        c.provenance.source.conversation_id: c
        for c in result.cases
        if c.provenance.operators[-1].name == "conversation"
    }
    totals: Counter = Counter()
    for conv_id, is_resolved in resolved.items():
        if not is_resolved:
            continue
        case = level.get(conv_id)
        mined = (
            [(c.tool, c.params) for c in case.expected.tool_calls if c.tool not in IGNORED]
            if case
            else []
        )
        want = truth.get(conv_id, [])
        totals["mined"] += len(mined)
        totals["truth"] += len(want)
        totals["strict"] += match_count(want, mined, strict=True)
        totals["state"] += match_count(want, mined, strict=False)
        totals["resolved"] += 1
    unresolved = [
        c for c in level.values() if not resolved.get(c.provenance.source.conversation_id, False)
    ]
    marked = sum(
        1 for c in unresolved if "needs_label" in c.tags.labels and c.review.status == "pending"
    )
    print(
        f"mined {result.summary.conversations_read} conversations in {elapsed:.2f} s: "
        f"{result.summary.cases}"
    )
    print(
        f"resolved conversations: {totals['resolved']}; write actions mined {totals['mined']}, "
        f"in ground truth {totals['truth']}"
    )
    for kind in ("strict", "state"):
        precision = totals[kind] / totals["mined"] if totals["mined"] else 0.0
        recall = totals[kind] / totals["truth"] if totals["truth"] else 0.0
        name = "strict" if kind == "strict" else "state-equivalent"
        print(
            f"{name:>16}: precision {precision:.3f}  recall {recall:.3f}  ({totals[kind]} matched)"
        )
        figure(f"mining precision ({name})", round(precision, 3), ">= 0.95", "",
               precision >= 0.95)
        figure(f"mining recall ({name})", round(recall, 3), ">= 0.90", "", recall >= 0.90)
    print(
        f"unresolved conversations: {sum(1 for v in resolved.values() if not v)}; their "
        f"conversation cases pending review marked needs_label: {marked}/{len(unresolved)}"
    )
    figure("unresolved conversations pending review marked needs_label", marked,
           f"= {len(unresolved)} (all)", "", marked == len(unresolved))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
