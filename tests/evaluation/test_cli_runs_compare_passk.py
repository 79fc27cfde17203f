"""`casemill runs compare A B` and the baseline comparison of `evaluate_run` with several trials
per case: pass^k deltas in the terminal table, `--json`, summary.md and report.html; a summary
written before pass^k deltas (format 3) still reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill.cli import app
from casemill.evaluation.report import load_run
from casemill.evaluation.scoring.pipeline import evaluate_run
from tests.evaluation.scoring.casebuild import (
    GOOD_REFUND,
    GOOD_REFUND_REPLY,
    cancel_case,
    refund_case,
    trajectory,
)

runner = CliRunner()
T, F = True, False


def _write_run(run_dir: Path, outcomes: dict[str, list[bool]], baseline: Path | None = None):
    """A run of the refund and cancel cases whose trials succeed as `outcomes` says."""
    refund, cancel = refund_case(), cancel_case()
    good = {
        "refund": lambda k: trajectory(refund, GOOD_REFUND, GOOD_REFUND_REPLY, trial=k),
        "cancel": lambda k: trajectory(
            cancel, [("cancel_order", {"order_id": "W1002"})], "Cancelled.", trial=k
        ),
    }
    bad = {
        "refund": lambda k: trajectory(refund, [], "Sorry.", trial=k),
        "cancel": lambda k: trajectory(cancel, [], "no", trial=k),
    }
    trajectories = [
        (good if ok else bad)[name](k)
        for name, trials in outcomes.items()
        for k, ok in enumerate(trials)
    ]
    return evaluate_run(run_dir, [refund, cancel], trajectories, baseline_dir=baseline)


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """Baseline: refund 2 of 3, cancel 3 of 3. Current, with 4 trials: refund 4 of 4, cancel
    3 of 4; compared with the baseline when it was scored."""
    base, cur = tmp_path / "base", tmp_path / "cur"
    _write_run(base, {"refund": [T, T, F], "cancel": [T, T, T]})
    _write_run(cur, {"refund": [T, T, T, T], "cancel": [T, T, T, F]}, baseline=base)
    return base, cur


# per case, current minus baseline: refund 1 - 1/3, cancel C(3,2)/C(4,2) - 1
PASS_2 = ((1 - 1 / 3) + (3 / 6 - 1)) / 2
# refund 1 - 0, cancel C(3,3)/C(4,3) - 1
PASS_3 = (1 + (1 / 4 - 1)) / 2


def test_compare_json_has_the_pass_k_rows_after_task_success(runs):
    base, cur = runs
    result = runner.invoke(app, ["runs", "compare", str(base), str(cur), "--json"])
    assert result.exit_code == 0, result.output
    comp = json.loads(result.output)
    names = [d["metric"] for d in comp["deltas"]]
    assert names[:3] == ["task_success", "pass^2", "pass^3"] and "pass^4" not in names
    rows = {d["metric"]: d for d in comp["deltas"]}
    assert rows["pass^2"]["delta"] == pytest.approx(PASS_2)
    assert rows["pass^2"]["baseline"] == pytest.approx((1 / 3 + 1) / 2)
    assert rows["pass^3"]["delta"] == pytest.approx(PASS_3)
    assert rows["pass^3"]["current"] == pytest.approx((1 + 1 / 4) / 2)
    assert rows["pass^3"]["paired_cases"] == 2 and rows["pass^3"]["higher_is_better"] is True
    assert comp["pass_k_note"] == (
        "pass^4 not compared: the baseline ran up to 3 trials per case (the current run up to 4)"
    )


def test_compare_prints_the_pass_k_rows(runs):
    base, cur = runs
    result = runner.invoke(app, ["runs", "compare", str(base), str(cur)])
    assert result.exit_code == 0, result.output
    cells = [
        [c.strip() for c in line.split("│")[1:-1]]
        for line in result.output.splitlines()
        if line.startswith("│")
    ]
    rows = {c[0]: c[1:4] for c in cells}
    assert [c[0] for c in cells][:3] == ["task_success", "pass^2", "pass^3"]
    assert rows["pass^2"] == ["0.667", "0.750", f"{PASS_2:.3f}"]
    assert rows["pass^3"] == ["0.500", "0.625", f"{PASS_3:.3f}"]


def test_compare_with_a_single_trial_baseline_says_why_there_is_no_pass_k(runs, tmp_path):
    _, cur = runs
    single = tmp_path / "single"
    _write_run(single, {"refund": [T], "cancel": [T]})
    plain = runner.invoke(app, ["runs", "compare", str(single), str(cur)])
    assert "pass^2" not in plain.output
    said = " ".join(plain.output.split())
    assert (
        "note: pass^k not compared: the baseline ran 1 trial per case (the other up to 4); "
        "run both with --trials 2 or more"
    ) in said
    comp = json.loads(
        runner.invoke(app, ["runs", "compare", str(single), str(cur), "--json"]).output
    )
    assert comp["pass_k_note"].startswith("pass^k not compared: the baseline ran 1 trial")


def test_the_reports_of_a_run_with_a_baseline_show_the_pass_k_deltas(runs):
    _, cur = runs
    written = json.loads((cur / "summary.json").read_text())
    rows = {d["metric"]: d for d in written["comparison"]["deltas"]}
    assert rows["pass^3"]["delta"] == pytest.approx(PASS_3)
    md = (cur / "summary.md").read_text()
    assert f"| pass^2 | 0.667 | 0.750 | {PASS_2:.3f} [" in md
    html = (cur / "report.html").read_text()
    assert "<tr><td>pass^3</td>" in html
    assert 'text-anchor="end">pass^2</text>' in html  # a rate: in the deltas chart too


def test_a_format_3_summary_with_a_comparison_still_reads(runs):
    """Written before pass^k deltas: its comparison has no pass_k_note and no pass^k rows."""
    _, cur = runs
    data = json.loads((cur / "summary.json").read_text())
    comparison = data["comparison"]
    del comparison["pass_k_note"]
    comparison["deltas"] = [d for d in comparison["deltas"] if not d["metric"].startswith("pass^")]
    data["format"] = 3
    (cur / "summary.json").write_text(json.dumps(data))
    old = load_run(cur).summary
    assert old.format == 3 and old.comparison.pass_k_note == ""
    assert [d.metric for d in old.comparison.deltas][:2] == ["task_success", "tool_recall"]
    # its trials are rebuilt from results.jsonl, so `runs compare` gives it pass^k rows now
    assert sorted(len(o) for o in old.trial_success.values()) == [4, 4]
    base, _ = runs
    again = json.loads(
        runner.invoke(app, ["runs", "compare", str(base), str(cur), "--json"]).output
    )
    assert {d["metric"]: d["delta"] for d in again["deltas"]}["pass^3"] == pytest.approx(PASS_3)
