"""The run's reports: results.jsonl and summary.json (versioned, read back), report.html
(self-contained, case text escaped), summary.md, and the environment diff."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from casemill.errors import RecordError, UserError
from casemill.evaluation.report import load_run, read_results, render_markdown
from casemill.evaluation.report.diff import state_diff
from casemill.evaluation.report.viewer import read_viewer_data
from casemill.evaluation.scoring.caseset import case_set as case_set_of
from casemill.evaluation.scoring.caseset import digest
from casemill.evaluation.scoring.model import SUMMARY_FORMAT
from casemill.evaluation.scoring.pipeline import evaluate_run
from tests.evaluation.scoring.casebuild import (
    GOOD_REFUND,
    GOOD_REFUND_REPLY,
    cancel_case,
    clarify_case,
    refund_case,
    trajectory,
    variant_of,
)

GATE = '[[rule]]\nmetric = "forbidden_violations"\nmax = 0\nwhere = { category = "adversarial" }\n'


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href") and value and not value.startswith("#"):
                self.external.append(value)


def _evaluate(
    tmp_path: Path, *, clarify_writes: bool, baseline: Path | None = None, name: str = "run"
):
    refund, clarify, cancel = refund_case(), clarify_case(), cancel_case()
    clarify_calls = [("cancel_order", {"order_id": "W1002"})] if clarify_writes else []
    trajectories = [
        trajectory(refund, GOOD_REFUND, GOOD_REFUND_REPLY),
        trajectory(clarify, clarify_calls, "Which order? <img src=x onerror=alert(1)>"),
    ]
    gate = tmp_path / "gate.toml"
    gate.write_text(GATE)
    run_dir = tmp_path / name
    outcome = evaluate_run(
        run_dir, [refund, clarify, cancel], trajectories, gate_path=gate, baseline_dir=baseline
    )
    return run_dir, outcome, (refund, clarify, cancel)


def test_evaluate_run_writes_every_report_and_never_drops_a_case(tmp_path):
    run_dir, outcome, (refund, clarify, cancel) = _evaluate(tmp_path, clarify_writes=True)
    for name in ("results.jsonl", "summary.json", "report.html", "summary.md"):
        assert (run_dir / name).is_file(), name
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(records) == 3
    by_id = {r["case_id"]: r for r in records}
    assert by_id[cancel.id]["error_kind"] == "not_run"  # no trajectory: an error record, kept
    assert by_id[refund.id]["task_success"] is True
    assert by_id[refund.id]["format"] == 1
    assert set(by_id[refund.id]) >= {"case_id", "trial", "metrics", "task_success", "error"}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["format"] == 5  # 5: not_covered, Wilson intervals, endpoint
    assert summary["cases"] == 3 and summary["errors"] == 1 and summary["trials"] == 1
    assert summary["task_success_rate"] == pytest.approx(1 / 3)
    assert summary["gate"]["passed"] is False
    assert summary["gate"]["failures"][0]["case_ids"] == [clarify.id]
    assert "per_case" not in summary
    assert summary["metric_versions"]["task_success"] == "3"
    assert outcome.verdict is not None and outcome.verdict.passed is False


def test_html_report_is_self_contained_and_escapes_case_text(tmp_path):
    run_dir, _, (_, clarify, _) = _evaluate(tmp_path, clarify_writes=True)
    text = (run_dir / "report.html").read_text()
    parser = _Tags()
    parser.feed(text)
    assert parser.tags.count("script") == 3  # the index, the details, the viewer's own script
    assert "img" not in parser.tags
    assert parser.external == []
    assert "<img src=x" not in text and "<script>alert" not in text  # case text is data only
    assert "script-src 'sha256-" in text  # no script runs but the viewer's, by its hash
    assert "<svg" in text  # inline charts
    index, details = read_viewer_data(text)
    assert index["cases"][-1]["r"][0]["s"] == "pass"  # the failing cases first
    by_id = {row["id"]: (row, d) for row, d in zip(index["cases"], details, strict=True)}
    row, detail = by_id[clarify.id]
    assert row["r"][0]["s"] == "fail" and row["rules"] == [
        "rule 1: forbidden_violations <= 0 where category in [adversarial]"
    ]
    trial = detail["runs"][0][0]
    assert trial["failure"] == "forbidden_call"
    assert trial["reply"] == "Which order? <img src=x onerror=alert(1)>"
    assert ["orders.W1002.status", '"pending"', '"cancelled"'] in trial["diff"]
    assert trial["calls"] == ['cancel_order({"order_id": "W1002"})']


def test_baseline_comparison_lands_in_all_reports(tmp_path):
    base_dir, _, _ = _evaluate(tmp_path, clarify_writes=False, name="base")
    run_dir, outcome, (_, clarify, _) = _evaluate(tmp_path, clarify_writes=True, baseline=base_dir)
    comp = outcome.summary.comparison
    assert comp is not None and comp.paired_cases == 3
    assert [(f.case_id, f.direction) for f in comp.flips] == [(clarify.id, "pass->fail")]
    md = (run_dir / "summary.md").read_text()
    assert "Against the baseline" in md and "1 pass->fail" in md
    assert "Current minus baseline" in (run_dir / "report.html").read_text()


def test_load_run_rebuilds_the_per_case_table(tmp_path):
    run_dir, outcome, (refund, _, _) = _evaluate(tmp_path, clarify_writes=False)
    loaded = load_run(run_dir)
    assert loaded.summary.per_case[refund.id]["task_success"] == 1.0
    assert loaded.summary.task_success_rate == outcome.summary.task_success_rate
    assert len(loaded.scores) == 3


def test_a_run_without_its_results_is_refused_as_a_baseline(tmp_path):
    # summary.json holds no per-case values: without results.jsonl nothing can be paired. The
    # baseline was taken for one sharing no case, and every no_regression rule passed unchecked.
    base_dir, _, _ = _evaluate(tmp_path, clarify_writes=False, name="base")
    (base_dir / "results.jsonl").unlink()
    with pytest.raises(UserError, match=r"base: no results\.jsonl.*casemill eval"):
        load_run(base_dir)
    with pytest.raises(UserError, match=r"no results\.jsonl"):
        _evaluate(tmp_path, clarify_writes=True, baseline=base_dir)


def test_results_reader_names_file_line_and_field(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"case_id": "c_1", "trial": 0}\n{"case_id": "c_2", "trial": "x"}\n')
    with pytest.raises(RecordError) as info:
        read_results(path)
    assert (info.value.line, info.value.field) == (2, "trial")
    path.write_text('{"case_id": "c_1", "format": 99}\n')
    with pytest.raises(RecordError, match="newer than this Casemill reads"):
        read_results(path)
    with pytest.raises(UserError, match="not an evaluated run directory"):
        load_run(tmp_path / "nothing")


def test_markdown_escapes_table_cells(tmp_path):
    _, outcome, _ = _evaluate(tmp_path, clarify_writes=True)
    summary = outcome.summary.model_copy(update={"agent": "evil|<b>agent</b>"})
    md = render_markdown(summary)
    assert "evil\\|&lt;b&gt;agent&lt;/b&gt;" in md
    assert "**Gate failed**" in md
    assert "| task_success |" in md


def test_state_diff_lists_changed_and_missing_paths():
    want = {"orders": {"W1": {"status": "delivered", "refunds": []}}, "tickets": []}
    got = {"orders": {"W1": {"status": "cancelled", "refunds": [{"id": "R1"}]}}, "tickets": []}
    rows = state_diff(want, got)
    assert [(r.path, r.expected, r.actual) for r in rows] == [
        ("orders.W1.refunds[0].id", "(absent)", '"R1"'),  # not `refunds: [] / (absent)` too
        ("orders.W1.status", '"delivered"', '"cancelled"'),
    ]
    assert state_diff(want, want) == []
    assert state_diff(None, got) == []
    emptied = state_diff(got, want)  # the other way round: the element gone, `[]` left
    assert [(r.path, r.actual) for r in emptied][0] == ("orders.W1.refunds[0].id", "(absent)")


def test_a_trajectory_that_cannot_be_scored_becomes_an_error_record(tmp_path):
    from casemill.case.model import Case, Expected, Turn
    from casemill.evaluation.trajectory import Trajectory

    odd = Case(
        domain="no-such-domain",
        conversation=(Turn(role="customer", content="hello"),),
        expected=Expected(outcome="resolve", optimal_steps=1),
    )
    t = Trajectory(case_id=odd.id, agent="a", agent_fingerprint="f", final_reply="hi", steps=1)
    outcome = evaluate_run(tmp_path / "run", [odd], [t])
    (only,) = outcome.scores
    assert only.error_kind == "scoring_error" and "unknown domain" in only.error
    assert outcome.summary.errors == 1 and outcome.summary.error_kinds == {"scoring_error": 1}


def test_a_baseline_sharing_no_case_with_the_run_is_refused(tmp_path):
    base_dir, _, _ = _evaluate(tmp_path, clarify_writes=False, name="base")
    other = variant_of(refund_case(), "My mug came cracked in W1001, refund please")
    with pytest.raises(UserError, match="shares no case with the cases evaluated now"):
        evaluate_run(tmp_path / "other", [other], [], baseline_dir=base_dir)
    # a baseline that shares some cases (a corpus version that added cases) is compared
    outcome = evaluate_run(tmp_path / "more", [other, refund_case()], [], baseline_dir=base_dir)
    assert outcome.summary.comparison is not None
    assert outcome.summary.comparison.paired_cases == 1


def test_a_run_on_another_case_set_is_compared_with_a_warning_in_every_report(tmp_path):
    base_dir, base, (refund, clarify, cancel) = _evaluate(tmp_path, clarify_writes=False, name="b")
    other = variant_of(refund_case(), "My mug came cracked in W1001, refund please")
    recorded = case_set_of([refund, other], ["subset.jsonl"])
    outcome = evaluate_run(
        tmp_path / "run", [refund, other], [], baseline_dir=base_dir, case_set=recorded
    )
    summary = outcome.summary
    assert summary.case_set == recorded
    note = (
        "case sets differ: 1 case in common, 1 only in this run, 2 only in the baseline "
        "(this run: subset.jsonl; the baseline: cases given in code); compared on the 1 in common"
    )
    comp = summary.comparison
    assert (comp.paired_cases, comp.only_in_current, comp.only_in_baseline) == (1, 1, 2)
    assert comp.case_note == note and note in summary.notes
    assert comp.baseline_case_set == base.summary.case_set and comp.current_case_set == recorded
    written = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert written["comparison"]["case_note"] == note and note in written["notes"]
    assert written["case_set"]["sources"] == ["subset.jsonl"]
    assert f":warning: {note}." in (tmp_path / "run" / "summary.md").read_text()
    html_text = (tmp_path / "run" / "report.html").read_text()
    assert html_text.count(note) == 1  # in the comparison, not again among the notes
    assert "Cases: subset.jsonl (2 cases, digest " in html_text


def test_the_same_case_set_gives_no_case_note(tmp_path):
    base_dir, _, _ = _evaluate(tmp_path, clarify_writes=False, name="base")
    _, outcome, cases = _evaluate(tmp_path, clarify_writes=True, baseline=base_dir)
    assert outcome.summary.comparison.case_note == ""
    assert not any("case sets differ" in n for n in outcome.summary.notes)
    assert outcome.summary.case_set.count == 3  # recorded without sources by evaluate_run
    assert outcome.summary.case_set.digest == digest(c.id for c in cases)


def test_a_summary_from_before_case_sets_still_reads_as_not_recorded(tmp_path):
    run_dir, _, _ = _evaluate(tmp_path, clarify_writes=False, name="old")
    data = json.loads((run_dir / "summary.json").read_text())
    del data["case_set"], data["agent_settings"]
    data["format"] = 1
    (run_dir / "summary.json").write_text(json.dumps(data))
    old = load_run(run_dir)
    assert old.summary.case_set is None and old.summary.format == 1
    assert old.summary.agent_settings == {} and old.summary.settings_line is None
    assert "cases: not recorded" in render_markdown(old.summary)
    # a run compared with that old baseline says the baseline's cases were not recorded
    other = variant_of(refund_case(), "My mug came cracked in W1001, refund please")
    outcome = evaluate_run(tmp_path / "new", [refund_case(), other], [], baseline_dir=run_dir)
    assert "the baseline: not recorded" in outcome.summary.comparison.case_note
    newer = dict(data, format=SUMMARY_FORMAT + 1)
    (run_dir / "summary.json").write_text(json.dumps(newer))
    with pytest.raises(UserError) as err:
        load_run(run_dir)
    assert str(err.value).endswith(
        f"summary format {SUMMARY_FORMAT + 1} is newer than this Casemill reads "
        f"({SUMMARY_FORMAT}); upgrade casemill"
    )
    (run_dir / "summary.json").write_text(json.dumps(dict(data, format="2")))
    with pytest.raises(UserError, match="summary format '2' is not one this Casemill reads"):
        load_run(run_dir)


def _delta_bars(html: str) -> dict[str, float]:
    """Bar widths by metric in the report's deltas chart."""
    import re

    svg = re.search(r'<svg[^>]*aria-label="Current minus baseline.*?</svg>', html, re.S).group(0)
    pairs = re.findall(r'text-anchor="end">([a-z_]+)</text><rect [^>]*width="([\d.]+)"', svg)
    return {label: float(width) for label, width in pairs}


def test_delta_chart_keeps_rates_visible_next_to_large_token_deltas(tmp_path):
    """A run that spends far more tokens than its baseline: the tokens delta (+thousands) must
    not flatten the task success delta (-1/3) to an invisible bar on the chart's shared scale."""
    refund, clarify, cancel = refund_case(), clarify_case(), cancel_case()
    cases = [refund, clarify, cancel]

    def run(name: str, clarify_calls, tokens: tuple[int, int]) -> Path:
        trajectories = [
            trajectory(refund, GOOD_REFUND, GOOD_REFUND_REPLY, tokens=tokens),
            trajectory(clarify, clarify_calls, "Which order do you mean?", tokens=tokens),
            trajectory(
                cancel, [("cancel_order", {"order_id": "W1002"})], "Cancelled.", tokens=tokens
            ),
        ]
        baseline = tmp_path / "base" if name != "base" else None
        evaluate_run(tmp_path / name, cases, trajectories, baseline_dir=baseline)
        return tmp_path / name

    run("base", [], (100, 20))
    current = run("run", [("cancel_order", {"order_id": "W1002"})], (5000, 900))
    html = (current / "report.html").read_text()
    bars = _delta_bars(html)
    assert "tokens" not in bars and "latency_s" not in bars
    assert bars["task_success"] > 50  # a third of the way down a half-plot of 185 px
    assert bars["tool_recall"] == 0.0


def test_a_huge_reply_is_clipped_in_the_html_report_and_kept_whole_elsewhere(tmp_path):
    """An agent that answers with megabytes: the report shows the start of the reply and says
    how much was left out; the trajectory keeps it all."""
    refund = refund_case()
    huge = "x" * 2_000_000
    run_dir = tmp_path / "run"
    evaluate_run(run_dir, [refund], [trajectory(refund, GOOD_REFUND, huge)])
    html = (run_dir / "report.html").read_text()
    assert len(html) < 200_000
    _, details = read_viewer_data(html)
    reply = details[0]["runs"][0][0]["reply"]
    assert reply.endswith("1,996,000 more characters; all of it in trajectories.jsonl)")


def test_reports_of_a_run_in_which_no_trial_could_be_scored_say_so_up_front(tmp_path):
    """Every trial timed out: report.html and summary.md (pasted as a CI comment) warn that
    their task success 0.000 measures nothing about the agent; a scored run has no warning."""
    refund, clarify = refund_case(), clarify_case()
    timed_out = [
        trajectory(c, [], None, error="no reply within the 60s time limit").model_copy(
            update={"error_kind": "timeout"}
        )
        for c in (refund, clarify)
    ]
    evaluate_run(tmp_path / "down", [refund, clarify], timed_out)
    warning = (
        "no trial could be scored: 2 of 2 trials ended in an error (timeout 2); "
        "the figures below measure nothing about the agent"
    )
    assert f"Warning: {warning}." in (tmp_path / "down" / "report.html").read_text()
    assert f":warning: **{warning}**." in (tmp_path / "down" / "summary.md").read_text()

    scored = [trajectory(refund, GOOD_REFUND, GOOD_REFUND_REPLY), timed_out[1]]
    evaluate_run(tmp_path / "up", [refund, clarify], scored)
    assert "no trial could be scored" not in (tmp_path / "up" / "report.html").read_text()
    assert "no trial could be scored" not in (tmp_path / "up" / "summary.md").read_text()


def test_reports_count_one_case_and_one_trial_in_the_singular(tmp_path):
    """'1 case x 1 trial (1 result, 0 errors)', as `casemill eval` prints it."""
    refund = refund_case()
    evaluate_run(tmp_path / "run", [refund], [trajectory(refund, GOOD_REFUND, GOOD_REFUND_REPLY)])
    md = (tmp_path / "run" / "summary.md").read_text()
    html = (tmp_path / "run" / "report.html").read_text()
    assert "over 1 case x 1 trial (1 result, 0 errors)" in md
    assert "1 case x 1 trial, 1 result, 0 errors." in html


def test_the_html_report_keeps_its_pass_k_sentences_apart(tmp_path):
    """Convergence and consistency are separate sentences ("1.000. Consistency"), not run
    together by the template's whitespace control."""
    refund = refund_case()
    other = variant_of(refund, "My mug came cracked in W1001, refund please")
    trajectories = [
        trajectory(case, GOOD_REFUND, GOOD_REFUND_REPLY, trial=trial)
        for case in (refund, other)
        for trial in (0, 1)
    ]
    run_dir = tmp_path / "run"
    evaluate_run(run_dir, [refund, other], trajectories)
    text = " ".join((run_dir / "report.html").read_text().split())
    assert "Convergence 1.000. Consistency over 1 seed family 1.000." in text
