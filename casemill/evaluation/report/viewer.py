"""The run viewer's data: every case of one run (report.html) or of several (`casemill runs
compare A B C -o compare.html`), as the page's script reads it.

Two blocks go into the page. The index (one row a case: id, operator, intents, tags, the gate
rules it failed, and per run its status) is plain JSON, read when the page opens. The details
(per case: the conversation and what was expected; per run and trial: the transcript, the
calls, the reply, metrics, checks, the state diff) are JSON compressed with gzip and written in
base64: the browser inflates them (`DecompressionStream`) the first time a case is opened, so a
run of thousands of cases opens at once and its folder stays small. Both are read back from a
report.html by `read_viewer_data`, which is what a comparison of runs is built from.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from casemill.case.model import Case
from casemill.evaluation.report.diff import state_diff
from casemill.evaluation.scoring.context import context_for
from casemill.evaluation.scoring.errors import ended_in_error
from casemill.evaluation.scoring.model import CaseScore, RunSummary
from casemill.evaluation.trajectory import Trajectory

VIEWER_FORMAT = 1
# characters of one message, call or reply kept for the viewer; the whole is in trajectories.jsonl
MAX_TEXT = 4000
INDEX_ID, DETAILS_ID = "cm-index", "cm-details"


@dataclass(frozen=True)
class RunData:
    """One run as the viewer shows it: its name (the folder), the summary, each case (None for
    a case the run scored but whose record is not at hand), scores and trajectories."""

    name: str
    summary: RunSummary
    cases: Sequence[Case]
    scores: Sequence[CaseScore]
    trajectories: Sequence[Trajectory]


def clip(text: str) -> str:
    """`text` cut to MAX_TEXT characters, saying how much was left out and where it is."""
    if len(text) <= MAX_TEXT:
        return text
    left = len(text) - MAX_TEXT
    return f"{text[:MAX_TEXT]} ... ({left:,} more characters; all of it in trajectories.jsonl)"


def call_text(tool: str, params: dict[str, Any], suffix: str = "") -> str:
    return clip(f"{tool}({json.dumps(params, ensure_ascii=False, sort_keys=True)})") + suffix


def _status(trials: Sequence[CaseScore]) -> str:
    if not any(s.covered for s in trials):
        return "not covered"  # neither passed nor failed (a recorded agent without its log)
    if all(ended_in_error(s) for s in trials):
        return "error"
    passes = sum(s.task_success for s in trials)
    return "pass" if passes == len(trials) else "fail" if passes == 0 else "flaky"


def _cell(trials: Sequence[CaseScore]) -> dict[str, Any]:
    """A run's cell of the index: status, passes of trials, the error kind, the failed check."""
    kinds = sorted({s.error_kind for s in trials if s.error_kind})
    failures = sorted({s.labels.get("failure", "") for s in trials if not s.task_success} - {""})
    return {
        "s": _status(trials),
        "p": sum(s.task_success for s in trials),
        "t": len(trials),
        "k": kinds,
        "f": failures,
    }


def _case_meta(case_id: str, case: Case | None) -> dict[str, Any]:
    if case is None:
        return {"id": case_id, "op": "(unknown)", "in": [], "tags": [], "dom": ""}
    ops = case.provenance.operators
    tags = [
        case.tags.category,
        case.tags.difficulty,
        f"origin:{case.provenance.origin}",
        f"outcome:{case.expected.outcome}",
        *case.tags.labels,
    ]
    return {
        "id": case_id,
        "op": ops[-1].name if ops else "(none)",
        "in": list(case.tags.intents) or ["(none)"],
        "tags": tags,
        "dom": case.domain,
    }


def rebuilt_messages(case: Case | None, t: Trajectory) -> list[dict[str, Any]]:
    """The messages of a trajectory that keeps none (an agent that returns no message list, in
    one turn): the case's conversation, then the calls and the reply."""
    from casemill.evaluation.agents.episode import case_messages
    from casemill.evaluation.conversation import call_messages

    opening = case_messages(case) if case is not None else []
    return opening + call_messages(t.calls, t.final_reply)


def _initial_state(case: Case | None) -> dict | None:
    """The case's state before the run, to which a trajectory's changes apply."""
    if case is None:
        return None
    try:
        return context_for(case).initial_state
    except Exception:  # as `_expected_state`
        return None


def _expected_state(case: Case | None) -> dict | None:
    if case is None:
        return None
    try:
        return context_for(case).expected_state
    except Exception:  # a case that cannot be prepared was already scored as an error
        return None


def case_detail(case: Case | None) -> dict[str, Any]:
    """What the case asks for: the conversation, expected and forbidden calls, phrases."""
    if case is None:
        return {"missing": True}
    forbidden = [
        f"never: {f.tool or 'any write'}"
        + (f"({json.dumps(f.params, sort_keys=True)})" if f.params else "")
        + (f" ({f.reason})" if f.reason else "")
        for f in case.expected.forbidden_calls
    ]
    return {
        "conversation": [_turn(t.role, t.content, t.tool_calls) for t in case.conversation],
        "expected": [call_text(c.tool, c.params) for c in case.expected.tool_calls],
        "forbidden": forbidden,
        "outcome": case.expected.outcome,
        "contains": list(case.expected.reply_contains),
        "excludes": list(case.expected.reply_excludes),
        "domain": case.domain,
        "operators": [f"{o.name} {o.version}" for o in case.provenance.operators],
        "parents": list(case.provenance.parents),
    }


def _turn(role: str, content: str, calls: Sequence[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role, "content": clip(content or "")}
    if calls:
        out["tool_calls"] = [call_text(c.tool, c.params) for c in calls]
    return out


def message_view(message: dict[str, Any]) -> dict[str, Any]:
    """Any chat message (OpenAI's shape, or another a trajectory holds) as the viewer shows it:
    its role, text, tool calls, the call it answers, and whether it was simulated; other keys
    kept as `extra`, so nothing a message carries is hidden."""
    content = message.get("content")
    if not isinstance(content, str):
        content = "" if content is None else json.dumps(content, ensure_ascii=False)
    out: dict[str, Any] = {"role": str(message.get("role", "?")), "content": clip(content)}
    calls = []
    for call in message.get("tool_calls") or ():
        fn = call.get("function", call) if isinstance(call, dict) else {}
        args = fn.get("arguments", "")
        args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        calls.append(clip(f"{fn.get('name', '?')}({args})"))
    if calls:
        out["tool_calls"] = calls
    if message.get("tool_call_id"):
        out["tool_call_id"] = str(message["tool_call_id"])
    if message.get("simulated"):
        out["simulated"] = True
    known = {"role", "content", "tool_calls", "tool_call_id", "simulated"}
    extra = {k: v for k, v in message.items() if k not in known and v is not None}
    if extra:
        out["extra"] = clip(json.dumps(extra, ensure_ascii=False, sort_keys=True, default=str))
    return out


def trial_detail(score: CaseScore, case: Case | None, t: Trajectory | None) -> dict[str, Any]:
    """One trial: its verdict, metric values, checks, transcript, calls, reply, state diff."""
    out: dict[str, Any] = {
        "trial": score.trial,
        "ok": score.task_success,
        "failure": score.labels.get("failure", ""),
        "error": clip(score.error or ""),
        "kind": score.error_kind or "",
        "metrics": {k: v for k, v in sorted(score.metrics.items()) if v is not None},
        "checks": dict(sorted(score.assertions.items())),
        "violations": list(score.violations),
        "notes": list(score.notes),
    }
    if t is None:
        return out | {"messages": [], "calls": [], "reply": "", "diff": [], "diffNote": "no run"}
    out["messages"] = [message_view(m) for m in t.messages or rebuilt_messages(case, t)]
    out["calls"] = [call_text(c.tool, c.params, "" if c.ok else f"  [{c.error}]") for c in t.calls]
    out["reply"] = clip(t.final_reply or "")
    out["steps"], out["latency"] = t.steps, round(t.latency_s, 3)
    out["diff"], out["diffNote"] = _diff(score, case, t)
    return out


def _diff(score: CaseScore, case: Case | None, t: Trajectory) -> tuple[list[list[str]], str]:
    if score.metrics.get("state_success") == 1.0:
        return [], "the final state is the expected one"
    want = _expected_state(case)
    got = t.final(_initial_state(case))
    rows = state_diff(want, got)
    if rows:
        return [[r.path, r.expected, r.actual] for r in rows], ""
    if want is not None and got is not None:
        return [], "states are equal"
    return [], "no state to compare"


def _failed_rules(summary: RunSummary) -> dict[str, list[str]]:
    """Case id -> the gate rules that named it failing."""
    out: dict[str, list[str]] = {}
    for f in summary.gate.failures if summary.gate else ():
        for case_id in f.case_ids:
            out.setdefault(case_id, []).append(f.rule)
    return out


def _grouped(scores: Sequence[CaseScore]) -> dict[str, list[CaseScore]]:
    out: dict[str, list[CaseScore]] = {}
    for s in sorted(scores, key=lambda s: (s.case_id, s.trial)):
        out.setdefault(s.case_id, []).append(s)
    return out


def run_viewer_data(run: RunData) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The index and the details of one run (case order: failing first, then by id)."""
    cases = {c.id: c for c in run.cases}
    by_key = {(t.case_id, t.trial): t for t in run.trajectories}
    rules = _failed_rules(run.summary)
    rows, details = [], []
    for case_id, trials in _grouped(run.scores).items():
        case = cases.get(case_id)
        row = _case_meta(case_id, case) | {"rules": rules.get(case_id, []), "r": [_cell(trials)]}
        trial_views = [trial_detail(s, case, by_key.get((case_id, s.trial))) for s in trials]
        rows.append(row)
        details.append({"case": case_detail(case), "runs": [trial_views]})
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["r"][0]["s"] == "pass", rows[i]["id"]))
    index = {
        "format": VIEWER_FORMAT,
        "runs": [_run_head(run.name, run.summary)],
        "rules": sorted({r for rs in rules.values() for r in rs}),
        "cases": [rows[i] for i in order],
    }
    return index, [details[i] for i in order]


def _run_head(name: str, summary: RunSummary) -> dict[str, Any]:
    return {
        "name": name,
        "agent": summary.agent,
        "settings": summary.settings_line or "",
        "task_success": summary.task_success.mean,
        "cases": summary.cases,
    }


def compare_viewer_data(
    runs: Sequence[tuple[str, dict[str, Any], list[dict[str, Any]]]],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The index and details over several runs' own (`read_viewer_data`), one row a case any of
    them ran, a cell a run (None where a run did not have the case); `flip` marks a case
    whose status is not the same in every run that has it. Flips come first."""
    meta: dict[str, dict[str, Any]] = {}
    cells: dict[str, list[Any]] = {}
    details: dict[str, dict[str, Any]] = {}
    for i, (_, index, run_details) in enumerate(runs):
        for row, detail in zip(index["cases"], run_details, strict=True):
            case_id = row["id"]
            if case_id not in meta or meta[case_id]["op"] == "(unknown)":
                meta[case_id] = {k: v for k, v in row.items() if k not in ("r", "rules")}
                meta[case_id]["rules"] = []
                details.setdefault(case_id, {"runs": [[] for _ in runs]})["case"] = detail["case"]
            meta[case_id]["rules"] = sorted(set(meta[case_id]["rules"]) | set(row["rules"]))
            cells.setdefault(case_id, [None] * len(runs))[i] = row["r"][0]
            details.setdefault(case_id, {"runs": [[] for _ in runs]})["runs"][i] = detail["runs"][0]
    rows = []
    for case_id, row in meta.items():
        present = [c["s"] for c in cells[case_id] if c is not None]
        rows.append(row | {"r": cells[case_id], "flip": len(set(present)) > 1})
    rows.sort(key=lambda r: (not r["flip"], all(c and c["s"] == "pass" for c in r["r"]), r["id"]))
    index = {
        "format": VIEWER_FORMAT,
        "runs": [index["runs"][0] | {"name": name} for name, index, _ in runs],
        "rules": sorted({rule for _, index, _ in runs for rule in index["rules"]}),
        "cases": rows,
    }
    return index, [details[r["id"]] for r in rows]


def _script_json(value: Any) -> str:
    """JSON safe inside a <script type="application/json"> element: no `<`, so no `</script>`
    (or comment) in case text can end the element early."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def encode_details(details: list[dict[str, Any]]) -> str:
    raw = json.dumps(details, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return base64.b64encode(gzip.compress(raw.encode("utf-8"), compresslevel=6, mtime=0)).decode()


def viewer_blocks(index: dict[str, Any], details: list[dict[str, Any]]) -> dict[str, str]:
    """The two blocks' texts, ready for the template (index JSON, details base64)."""
    return {"index": _script_json(index), "details": encode_details(details)}


_BLOCK = r'<script type="application/(?:json|gzip\+base64)" id="{}">(.*?)</script>'


def read_viewer_data(html: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The index and details a report.html carries, or None for a report without them (one
    written before the viewer)."""
    index = re.search(_BLOCK.format(INDEX_ID), html, re.S)
    details = re.search(_BLOCK.format(DETAILS_ID), html, re.S)
    if index is None or details is None:
        return None
    raw = gzip.decompress(base64.b64decode(details.group(1).strip()))
    return json.loads(index.group(1)), json.loads(raw)


def load_viewer_data(run_dir: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run folder's viewer data: from its report.html, or, for a report written before the
    viewer, rebuilt from results.jsonl and trajectories.jsonl (the cases' own records are not
    in the folder: their conversations and expectations are then not shown)."""
    from pathlib import Path

    from casemill.evaluation.report.results import REPORT, TRAJECTORIES, load_run
    from casemill.evaluation.report.results import read_trajectories as read_t

    run_dir = Path(run_dir)
    loaded = load_run(run_dir)  # says what is wrong with a folder that is not a run
    if (run_dir / REPORT).is_file():
        found = read_viewer_data((run_dir / REPORT).read_text(encoding="utf-8"))
        if found is not None:
            return found[0] | {"runs": [found[0]["runs"][0] | {"name": str(run_dir)}]}, found[1]
    trajectories = read_t(run_dir / TRAJECTORIES) if (run_dir / TRAJECTORIES).is_file() else []
    run = RunData(str(run_dir), loaded.summary, [], loaded.scores, trajectories)
    return run_viewer_data(run)
