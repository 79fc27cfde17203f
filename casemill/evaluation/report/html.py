"""report.html: one self-contained page (inline CSS and SVG, no scripts, no external assets).

Every piece of case text goes through Jinja2's autoescaping: adversarial cases carry HTML and
script on purpose, and the report must show them, not run them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from casemill.case.model import Case
from casemill.evaluation.report import charts
from casemill.evaluation.report.diff import DiffRow, state_diff
from casemill.evaluation.report.markdown import HEADLINE
from casemill.evaluation.scoring.caseset import describe
from casemill.evaluation.scoring.context import context_for
from casemill.evaluation.scoring.errors import not_covered_line, unmeasured
from casemill.evaluation.scoring.model import CaseScore, RunSummary
from casemill.evaluation.scoring.registry import pass_k_of, spec
from casemill.evaluation.trajectory import Trajectory
from casemill.text import count

REPORT_FORMAT = 1
MAX_FAILING = 300
# characters of one turn, call or reply shown in a failing case: a runaway agent's megabyte
# replies, up to MAX_FAILING of them, would make a page no browser or mail opens
MAX_TEXT = 4000


@dataclass
class FailingCase:
    anchor: str
    score: CaseScore
    case: Case | None
    conversation: list[dict[str, str]]
    expected_calls: list[str]
    actual_calls: list[str]
    reply: str
    diff: list[DiffRow] = field(default_factory=list)
    diff_note: str = ""


def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("casemill.evaluation.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = lambda v, d=3: "n/a" if v is None else f"{v:.{d}f}"
    env.filters["count"] = count
    return env


def _clip(text: str) -> str:
    """`text` cut to MAX_TEXT characters, saying how much was left out and where it is."""
    if len(text) <= MAX_TEXT:
        return text
    left = len(text) - MAX_TEXT
    return f"{text[:MAX_TEXT]} ... ({left:,} more characters; all of it in trajectories.jsonl)"


def _call_text(tool: str, params: dict[str, Any], suffix: str = "") -> str:
    return _clip(f"{tool}({json.dumps(params, ensure_ascii=False, sort_keys=True)})") + suffix


def _conversation(case: Case | None, trajectory: Trajectory | None) -> list[dict[str, str]]:
    turns = []
    if case is not None:
        turns += [{"role": t.role, "content": _clip(t.content or "")} for t in case.conversation]
    if trajectory is not None:
        for call in trajectory.calls:
            status = "" if call.ok else f" -> error {call.error or ''}"
            turns.append(
                {"role": "agent tool call", "content": _call_text(call.tool, call.params, status)}
            )
        if trajectory.final_reply:
            turns.append({"role": "agent reply", "content": _clip(trajectory.final_reply)})
    return turns


def _failing(
    scores: Sequence[CaseScore],
    cases: dict[str, Case],
    trajectories: dict[tuple[str, int], Trajectory],
) -> list[FailingCase]:
    out = []
    for s in sorted(
        (s for s in scores if s.covered and not s.task_success), key=lambda s: (s.case_id, s.trial)
    ):
        case = cases.get(s.case_id)
        t = trajectories.get((s.case_id, s.trial))
        expected = [_call_text(c.tool, c.params) for c in case.expected.tool_calls] if case else []
        expected += [
            f"never: {f.tool or 'any write'}"
            + (f"({json.dumps(f.params, sort_keys=True)})" if f.params else "")
            for f in (case.expected.forbidden_calls if case else ())
        ]
        actual = (
            [_call_text(c.tool, c.params, "" if c.ok else f"  [{c.error}]") for c in t.calls]
            if t
            else []
        )
        want = _expected_state(case)
        got = t.final_state if t else None
        diff = state_diff(want, got)
        note = (
            ""
            if diff
            else (
                "states are equal"
                if want is not None and got is not None
                else "no state to compare"
            )
        )
        out.append(
            FailingCase(
                anchor=f"case-{s.case_id}-{s.trial}",
                score=s,
                case=case,
                conversation=_conversation(case, t),
                expected_calls=expected,
                actual_calls=actual,
                reply=_clip(t.final_reply or "") if t else "",
                diff=diff,
                diff_note=note,
            )
        )
        if len(out) >= MAX_FAILING:
            break
    return out


def _expected_state(case: Case | None) -> dict | None:
    if case is None:
        return None
    try:
        return context_for(case).expected_state
    except Exception:  # a case that cannot be prepared was already scored as an error
        return None


def _first_anchors(failing: list[FailingCase]) -> dict[str, str]:
    """Case id -> the anchor of its first failing trial shown in the report."""
    anchors: dict[str, str] = {}
    for f in failing:
        anchors.setdefault(f.score.case_id, f.anchor)
    return anchors


def _charts(summary: RunSummary, trajectories: Sequence[Trajectory]) -> dict[str, Any]:
    def bars(dimension: str) -> list[charts.Bar]:
        rows = [
            r
            for r in summary.slices
            if r.dimension == dimension and r.task_success.mean is not None
        ]
        return [
            charts.Bar(
                r.value,
                r.task_success.mean or 0.0,
                r.task_success.ci_low,
                r.task_success.ci_high,
                f"n={r.cases}",
            )
            for r in rows
        ]

    out = {
        "operator": charts.bar_chart(bars("operator"), "Task success by operator (95% CI)"),
        "category": charts.bar_chart(bars("category"), "Task success by category (95% CI)"),
        "latency": charts.histogram([t.latency_s for t in trajectories], "Latency"),
        "deltas": None,
    }
    if summary.comparison is not None:
        rows = []
        for d in summary.comparison.deltas:
            shown = d.metric in HEADLINE or pass_k_of(d.metric) is not None
            if d.delta is None or not shown or not _charted_delta(d.metric):
                continue
            lo, hi = d.ci_low, d.ci_high
            note = "regression" if d.significant_regression else ""
            if (
                lo is not None
                and hi is not None
                and not note
                and ((d.higher_is_better and lo > 0) or (not d.higher_is_better and hi < 0))
            ):
                note = "improvement"
            rows.append(charts.Bar(d.metric, d.delta, lo, hi, note))
        out["deltas"] = charts.delta_chart(
            rows, "Current minus baseline (paired 95% CI; latency and tokens in the table)"
        )
    return out


def _charted_delta(metric: str) -> bool:
    """Whether `metric`'s delta goes in the deltas chart: rates and counts only. The chart draws
    every delta on one scale, so a delta in seconds or tokens (+39 tokens) would shrink a rate's
    (-0.40 task success) to nothing; those stay in the table under the chart."""
    found = spec(metric)
    return found is not None and found.unit in ("ratio", "count")


def render_html(
    summary: RunSummary,
    cases: Sequence[Case],
    scores: Sequence[CaseScore],
    trajectories: Sequence[Trajectory],
) -> str:
    """The report page as a string."""
    case_map = {c.id: c for c in cases}
    by_key = {(t.case_id, t.trial): t for t in trajectories}
    failing = _failing(scores, case_map, by_key)
    total_failing = sum(1 for s in scores if s.covered and not s.task_success)
    template = _env().get_template("report.html.j2")
    return template.render(
        format=REPORT_FORMAT,
        summary=summary,
        headline=[n for n in HEADLINE if n in summary.metrics],
        cases_line=describe(summary.case_set),
        unmeasured=unmeasured(summary),
        not_covered=not_covered_line(summary) if summary.not_covered else "",
        charts=_charts(summary, trajectories),
        failing=failing,
        anchors=_first_anchors(failing),
        total_failing=total_failing,
        max_failing=MAX_FAILING,
    )
