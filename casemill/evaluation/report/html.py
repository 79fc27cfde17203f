"""report.html: the run viewer, one page that works offline from the run folder (inline CSS,
SVG and one script of our own, `static/viewer.js`; no external asset, no network).

The summary (metrics with their intervals, the gate, charts, slices) is rendered here with
Jinja2's autoescaping; every case goes to the viewer as data (`viewer.py`) that the script
sets as text only: adversarial cases carry HTML and script on purpose, and the report must
show them, not run them. The page's Content-Security-Policy lets no script run but the viewer's
own (by its hash).
"""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from collections.abc import Sequence
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from casemill.case.model import Case
from casemill.evaluation.report import charts
from casemill.evaluation.report.markdown import HEADLINE
from casemill.evaluation.report.viewer import (
    DETAILS_ID,
    INDEX_ID,
    RunData,
    run_viewer_data,
    viewer_blocks,
)
from casemill.evaluation.scoring.caseset import describe
from casemill.evaluation.scoring.errors import not_covered_line, unmeasured
from casemill.evaluation.scoring.model import CaseScore, RunSummary
from casemill.evaluation.scoring.registry import pass_k_of, spec
from casemill.evaluation.trajectory import Trajectory
from casemill.text import count

# 2: the run viewer (every case, filtered, opened on demand) in place of the failing cases
REPORT_FORMAT = 2
GATE_CASES = 10  # cases listed under each failed gate rule (all of them are in the viewer)
GATE_OPERATORS = 8  # operators named, with their counts, under a failed gate rule


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


@cache
def _asset(name: str) -> str:
    return files("casemill.evaluation.report").joinpath("static", name).read_text("utf-8")


def viewer_assets() -> dict[str, Any]:
    """The viewer's script and style, and the CSP hash that lets that script alone run."""
    script = _asset("viewer.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    return {
        "script": Markup(script),
        "style": Markup(_asset("viewer.css")),
        "script_hash": f"sha256-{digest}",
        "index_id": INDEX_ID,
        "details_id": DETAILS_ID,
    }


def _gate_cases(summary: RunSummary, cases: dict[str, Case]) -> dict[str, dict[str, Any]]:
    """Per failed rule: its first cases with their operator and intents, and how many of its
    cases each operator made (the most first)."""
    out: dict[str, dict[str, Any]] = {}
    for f in summary.gate.failures if summary.gate else ():
        rows = [_case_row(case_id, cases.get(case_id)) for case_id in f.case_ids]
        operators = Counter(r["operator"] for r in rows).most_common()
        out[f.rule] = {
            "cases": rows[:GATE_CASES],
            "operators": operators[:GATE_OPERATORS],
            "more_operators": max(0, len(operators) - GATE_OPERATORS),
        }
    return out


def _case_row(case_id: str, case: Case | None) -> dict[str, str]:
    ops = case.provenance.operators if case else ()
    return {
        "id": case_id,
        "operator": ops[-1].name if ops else ("(none)" if case else "?"),
        "intent": ", ".join(case.tags.intents) if case and case.tags.intents else "-",
    }


def _charts(summary: RunSummary, trajectories: Sequence[Trajectory]) -> dict[str, Any]:
    def bars(dimension: str) -> list[charts.Bar]:
        rows = [
            r
            for r in summary.slices
            if r.dimension == dimension and r.task_success.mean is not None
        ]
        rows.sort(key=lambda r: (r.task_success.mean, r.value))  # the worst first
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
    name: str = "",
) -> str:
    """The report page as a string (`name`: the run folder, as the viewer names the run)."""
    run = RunData(name or summary.agent, summary, cases, scores, trajectories)
    index, details = run_viewer_data(run)
    template = _env().get_template("report.html.j2")
    return template.render(
        format=REPORT_FORMAT,
        summary=summary,
        headline=[n for n in HEADLINE if n in summary.metrics],
        cases_line=describe(summary.case_set),
        unmeasured=unmeasured(summary),
        not_covered=not_covered_line(summary) if summary.not_covered else "",
        charts=_charts(summary, trajectories),
        gate_cases=_gate_cases(summary, {c.id: c for c in cases}),
        viewer=viewer_assets() | viewer_blocks(index, details),
    )


def render_compare(names: Sequence[str], summaries: Sequence[RunSummary], data: Any) -> str:
    """The viewer over several runs (`runs compare A B C -o compare.html`): `data` is
    `compare_viewer_data`'s index and details."""
    index, details = data
    flips = sum(1 for row in index["cases"] if row.get("flip"))
    return (
        _env()
        .get_template("compare.html.j2")
        .render(
            format=REPORT_FORMAT,
            runs=list(zip(names, summaries, strict=True)),
            cases=len(index["cases"]),
            flips=flips,
            viewer=viewer_assets() | viewer_blocks(index, details),
        )
    )


def write_compare(run_dirs: Sequence[Any], output: Any) -> Path:
    """compare.html over the runs in `run_dirs` (their folders as given), written to `output`."""
    from casemill.evaluation.report.results import load_run
    from casemill.evaluation.report.viewer import compare_viewer_data, load_viewer_data
    from casemill.io.jsonl import atomic_write_text

    names = [str(d) for d in run_dirs]
    summaries = [load_run(d).summary for d in run_dirs]
    data = compare_viewer_data(
        [(n, *load_viewer_data(d)) for n, d in zip(names, run_dirs, strict=True)]
    )
    return atomic_write_text(Path(output), [render_compare(names, summaries, data)])
