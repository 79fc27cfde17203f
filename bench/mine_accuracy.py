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

The logs carry no tool specifications. The logs are mined twice: without specs, and with the
airline agent's tool specs (`--tools`, default `bench/data/tau_bench_airline_tools.json`, the
OpenAI function specs of the 14 airline tools' `get_info()` in tau_bench/envs/airline/tools/ of
the public tau-bench repository, github.com/sierra-research/tau-bench, MIT licence, copyright
(c) 2024 Sierra; see bench/data/tau_bench_airline_tools.LICENSE), which drop the arguments the
tools do not take from the expected calls. The targets apply to the mining with specs; the
figures without them are printed beside, for reference.

Then mines the logs again with tool specs and redaction on (`--keep-raw`), maps every
surrogate in the mined calls back to its raw value by the raw values the run kept, and scores
that too: redaction must replace personal data consistently (the same value, the same
surrogate, everywhere) and nothing else, so the figures must not move.

Also checks that every unresolved conversation reached review marked `needs_label`.

    uv run python bench/mine_accuracy.py [--data DIR] [--tools FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _report import description, figure  # noqa: E402

from casemill.mining import MineOptions, mine  # noqa: E402
from casemill.mining.derive.common import is_read  # noqa: E402
from casemill.mining.toolspec import load_tools_file  # noqa: E402

IGNORED = {"transfer_to_human_agents"}
TOOLS = ROOT / "bench" / "data" / "tau_bench_airline_tools.json"


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


def load_truth(truth_file: Path) -> dict[str, list[tuple[str, dict]]]:
    truth = {}
    for line in truth_file.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        truth[row["conversation_id"]] = [
            (a["name"], a["kwargs"])
            for a in row["expected_actions"]
            if not is_read(a["name"]) and a["name"] not in IGNORED
        ]
    return truth


def conversation_cases(result: Any) -> dict[str, Any]:
    return {
        c.provenance.source.conversation_id: c
        for c in result.cases
        if c.provenance.operators[-1].name == "conversation"
    }


def score(level: dict[str, Any], truth: dict, resolved: dict[str, bool]) -> Counter:
    """Write actions mined, in the ground truth, and matched (strict, state-equivalent) over
    the resolved conversations."""
    totals: Counter = Counter()
    for conv_id, is_resolved in resolved.items():
        if not is_resolved:
            continue
        case = level.get(conv_id)
        calls = case.expected.tool_calls if case else ()
        mined = [(c.tool, c.params) for c in calls if c.tool not in IGNORED]
        want = truth.get(conv_id, [])
        totals["mined"] += len(mined)
        totals["truth"] += len(want)
        totals["strict"] += match_count(want, mined, strict=True)
        totals["state"] += match_count(want, mined, strict=False)
        totals["resolved"] += 1
    return totals


def report(totals: Counter, specs: bool) -> None:
    """Precision and recall, strict and state-equivalent; the targets apply to the mining with
    tool specs (the figures without them are kept beside, for reference)."""
    print(f"{'with' if specs else 'without'} tool specs:")
    suffix = "" if specs else ", without tool specs"
    for kind in ("strict", "state"):
        precision = totals[kind] / totals["mined"] if totals["mined"] else 0.0
        recall = totals[kind] / totals["truth"] if totals["truth"] else 0.0
        name = "strict" if kind == "strict" else "state-equivalent"
        print(
            f"{name:>16}: precision {precision:.3f}  recall {recall:.3f}  ({totals[kind]} matched)"
        )
        p_target, r_target = (">= 0.95", ">= 0.90") if specs else ("", "")
        figure(
            f"mining precision ({name}{suffix})",
            round(precision, 3),
            p_target,
            "",
            precision >= 0.95 if specs else None,
        )
        figure(
            f"mining recall ({name}{suffix})",
            round(recall, 3),
            r_target,
            "",
            recall >= 0.90 if specs else None,
        )


def unredacted(value: Any, table: dict[str, str]) -> Any:
    """`value` with each surrogate in `table` (lowered surrogate -> raw) mapped back: whole
    strings and numbers, then word by word (a name in a longer string), in the surrogate's
    case."""
    if isinstance(value, dict):
        return {k: unredacted(v, table) for k, v in value.items()}
    if isinstance(value, list):
        return [unredacted(v, table) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and str(value) in table:
        return int(table[str(value)])
    if not isinstance(value, str):
        return value
    if value.lower() in table:
        return _cased(table[value.lower()], value)
    return re.sub(r"\w+", lambda m: _cased(table.get(m[0].lower(), m[0]), m[0]), value)


def _cased(raw: str, surrogate: str) -> str:
    if surrogate.isupper() and len(surrogate) > 1:
        return raw.upper()
    if surrogate[:1].isupper() and raw.islower():
        return raw[:1].upper() + raw[1:]
    return raw


def mapped_back(result: Any) -> dict[str, Any]:
    """The conversation-level cases of a redacted run, their expected calls mapped back to the
    raw values (`unredacted`)."""
    tables: dict[str, dict[str, str]] = {}
    for r in result.raw_values:
        tables.setdefault(r["conversation_id"], {})[r["surrogate"].lower()] = r["raw"]
    level = conversation_cases(result)
    for conv_id, case in level.items():
        table = tables.get(conv_id, {})
        calls = [
            c.model_copy(update={"params": unredacted(c.params, table)})
            for c in case.expected.tool_calls
        ]
        level[conv_id] = case.model_copy(
            update={"expected": case.expected.model_copy(update={"tool_calls": tuple(calls)})}
        )
    return level


def redacted_pass(logs: Path, truth: dict, resolved: dict[str, bool], specs: Any) -> None:
    """The logs mined with redaction on, mapped back by the raw values kept, and scored."""
    result = mine([logs], "openai-jsonl", options=MineOptions(tools=specs, keep_raw=True))
    totals = score(mapped_back(result), truth, resolved)
    print(
        f"redaction on ({sum(result.summary.redactions.values())} replacements "
        f"{result.summary.redactions}), mapped back with the raw values kept:"
    )
    for kind in ("strict", "state"):
        precision = totals[kind] / totals["mined"] if totals["mined"] else 0.0
        recall = totals[kind] / totals["truth"] if totals["truth"] else 0.0
        name = "strict" if kind == "strict" else "state-equivalent"
        print(f"{name:>16}: precision {precision:.3f}  recall {recall:.3f}")
        for what, measured in (("precision", precision), ("recall", recall)):
            figure(
                f"mining {what} ({name}, redaction on, mapped back)",
                round(measured, 3),
                "= 1.000",
                "",
                round(measured, 3) == 1.0,
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared" / "data" / "tau-bench-airline-logs"
    )
    parser.add_argument("--tools", type=Path, default=TOOLS, help="the agent's tool specs")
    args = parser.parse_args()
    logs = args.data / "support_logs.jsonl"
    truth = load_truth(args.data / "ground_truth.jsonl")
    rows = [json.loads(line) for line in logs.read_text(encoding="utf-8").splitlines()]
    resolved = {row["conversation_id"]: row["resolved"] for row in rows}
    specs = load_tools_file(args.tools)
    for options in (MineOptions(), MineOptions(tools=specs)):
        started = time.perf_counter()
        result = mine([logs], "openai-jsonl", redact=False, options=options)
        elapsed = time.perf_counter() - started
        level = conversation_cases(result)
        totals = score(level, truth, resolved)
        warm = "with tool specs" if options.tools else "without tool specs, start-up included"
        print(
            f"mined {result.summary.conversations_read} conversations in {elapsed:.2f} s "
            f"({warm}): "
            f"{result.summary.cases}; resolved conversations: {totals['resolved']}; write "
            f"actions mined {totals['mined']}, in ground truth {totals['truth']}"
        )
        report(totals, specs=options.tools is not None)
    redacted_pass(logs, truth, resolved, specs)
    unresolved = [
        c for c in level.values() if not resolved.get(c.provenance.source.conversation_id, False)
    ]
    marked = sum(
        1 for c in unresolved if "needs_label" in c.tags.labels and c.review.status == "pending"
    )
    print(
        f"unresolved conversations: {sum(1 for v in resolved.values() if not v)}; their "
        f"conversation cases pending review marked needs_label: {marked}/{len(unresolved)}"
    )
    figure(
        "unresolved conversations pending review marked needs_label",
        marked,
        f"= {len(unresolved)} (all)",
        "",
        marked == len(unresolved),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
