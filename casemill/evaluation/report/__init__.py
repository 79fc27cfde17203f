"""Reports of a run: results.jsonl, summary.json, report.html and summary.md."""

from casemill.evaluation.report.html import render_html
from casemill.evaluation.report.markdown import render_markdown
from casemill.evaluation.report.results import (
    REPORT,
    RESULTS,
    SUMMARY,
    SUMMARY_MD,
    TRAJECTORIES,
    LoadedRun,
    load_baseline,
    load_run,
    read_results,
    read_summary,
    read_trajectories,
    write_results,
    write_summary,
)

__all__ = [
    "REPORT",
    "RESULTS",
    "SUMMARY",
    "SUMMARY_MD",
    "TRAJECTORIES",
    "LoadedRun",
    "load_baseline",
    "load_run",
    "read_results",
    "read_summary",
    "read_trajectories",
    "render_html",
    "render_markdown",
    "write_results",
    "write_summary",
]
