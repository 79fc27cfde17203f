"""summary.md: the run in a few tables, fit for a CI comment (GitHub-flavoured Markdown)."""

from __future__ import annotations

from casemill.evaluation.scoring.caseset import describe
from casemill.evaluation.scoring.errors import not_covered_line, split_kinds, unmeasured
from casemill.evaluation.scoring.model import RunSummary, Stat
from casemill.text import count

HEADLINE = (
    "task_success",
    "tool_recall",
    "tool_precision",
    "param_accuracy",
    "phrase_recall",
    "state_success",
    "forbidden_violations",
    "efficiency",
    "completion",
    "overall",
    "latency_s",
    "tokens",
)
MAX_IDS = 10
MAX_ROWS = 25


def cell(text: object) -> str:
    """Markdown table cell text: pipes, newlines and HTML brackets made harmless."""
    out = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    return out.replace("<", "&lt;").replace(">", "&gt;")


def fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def fmt_stat(stat: Stat) -> str:
    if stat.mean is None:
        return "n/a"
    if stat.ci_low is None or stat.ci_low == stat.ci_high:
        return fmt(stat.mean)
    return f"{fmt(stat.mean)} [{fmt(stat.ci_low)}, {fmt(stat.ci_high)}]"


def ids(case_ids: tuple[str, ...]) -> str:
    shown = ", ".join(f"`{i}`" for i in case_ids[:MAX_IDS])
    more = len(case_ids) - MAX_IDS
    return shown + (f" and {more} more" if more > 0 else "")


def _gate(summary: RunSummary) -> list[str]:
    gate = summary.gate
    if gate is None:
        return []
    if gate.passed:
        return [f"**Gate passed** ({len(gate.rules)} rules, `{cell(gate.gate)}`)", ""]
    out = [
        f"**Gate failed**: {len(gate.failures)} of {len(gate.rules)} rules (`{cell(gate.gate)}`)",
        "",
    ]
    out += ["| rule | value | threshold | failing cases |", "| --- | --- | --- | --- |"]
    for f in gate.failures:
        out.append(
            f"| {cell(f.rule)} | {fmt(f.value)} | {fmt(f.threshold)} "
            f"| {ids(f.case_ids) or cell(f.message)} |"
        )
    return [*out, ""]


def _comparison(summary: RunSummary) -> list[str]:
    comp = summary.comparison
    if comp is None:
        return []
    out = [
        f"### Against the baseline ({cell(comp.baseline_agent)}, {comp.paired_cases} paired cases)",
        "",
    ]
    out += ["| metric | baseline | current | delta [95% CI] |", "| --- | --- | --- | --- |"]
    for d in comp.deltas:
        flag = " :warning:" if d.significant_regression else ""
        out.append(
            f"| {d.metric} | {fmt(d.baseline)} | {fmt(d.current)} "
            f"| {fmt(d.delta)} [{fmt(d.ci_low)}, {fmt(d.ci_high)}]{flag} |"
        )
    worse = tuple(f.case_id for f in comp.flips if f.direction == "pass->fail")
    better = tuple(f.case_id for f in comp.flips if f.direction == "fail->pass")
    out += ["", f"Flips: {len(worse)} pass->fail, {len(better)} fail->pass."]
    if comp.case_note:
        out.append(f":warning: {cell(comp.case_note)}.")
    if comp.not_comparable:
        out.append(f"Not compared (metric versions differ): {', '.join(comp.not_comparable)}.")
    if comp.pass_k_note:
        out.append(f"Note: {cell(comp.pass_k_note)}.")
    if worse:
        out.append(f"Now failing: {ids(worse)}")
    return [*out, ""]


def _notes(summary: RunSummary) -> list[str]:
    """The summary's notes (skipped extras, the judge and its agreement, other settings of the
    baseline's agent), one item each; the case-set warning is the comparison's."""
    case_note = summary.comparison.case_note if summary.comparison else ""
    notes = [n for n in summary.notes if n != case_note]
    if not notes:
        return []
    return ["Notes:", "", *(f"- {cell(n)}" for n in notes), ""]


def render_markdown(summary: RunSummary) -> str:
    lines = [f"## Casemill eval: {cell(summary.agent)}", ""]
    lines += _gate(summary)
    rate = fmt(summary.task_success_rate)
    lines.append(
        f"Task success **{rate}** over {count(summary.cases, 'case')} x "
        f"{count(summary.trials, 'trial')} ({count(summary.results, 'result')}, "
        f"{count(summary.errors, 'error')}); mode `{summary.mode}`."
    )
    warning = unmeasured(summary)
    if warning is not None:
        lines.append(f":warning: **{cell(warning)}**.")
    lines.append(f"cases: {cell(describe(summary.case_set))}")
    if summary.not_covered:
        lines.append(f"Not covered: {cell(not_covered_line(summary))}")
    if summary.settings_line:
        lines.append(f"agent settings: {cell(summary.settings_line)}")
    if summary.endpoint:
        lines.append(f"endpoint: {cell(summary.endpoint)}")
    if summary.pass_k:
        lines.append("pass^k: " + ", ".join(f"k={k}: {fmt(v)}" for k, v in summary.pass_k.items()))
    lines += ["", "| metric | mean [95% CI] |", "| --- | --- |"]
    for name in HEADLINE:
        if name in summary.metrics:
            lines.append(f"| {name} | {fmt_stat(summary.metrics[name])} |")
    lines.append("")
    lines += _notes(summary)
    lines += _comparison(summary)
    weakest = sorted(
        (r for r in summary.slices if r.task_success.mean is not None),
        key=lambda r: (r.task_success.mean, r.dimension, r.value),
    )
    if weakest:
        lines += [
            "### Weakest slices",
            "",
            "| slice | cases | task success |",
            "| --- | --- | --- |",
        ]
        for row in weakest[: MAX_ROWS // 3]:
            lines.append(
                f"| {row.dimension}={cell(row.value)} | {row.cases} "
                f"| {fmt_stat(row.task_success)} |"
            )
        lines.append("")
    errors, faults = split_kinds(summary.error_kinds)
    if errors:
        lines.append("Errors: " + ", ".join(f"{cell(k)} {v}" for k, v in errors.items()))
    if faults:
        said = ", ".join(f"{cell(k)} {v}" for k, v in faults.items())
        lines.append(f"Agent faults (trials scored as usual): {said}")
    return "\n".join(lines).rstrip() + "\n"
