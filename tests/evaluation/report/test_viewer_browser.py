"""The run viewer in a real browser (Playwright driving Debian's Chromium), opened from the
run folder with no server: filter to the failed adversarial cases, open one, read its
transcript (a simulated turn badged, case text shown and not run) and its state diff; the same
in a comparison of three runs, where the flips are marked."""

from __future__ import annotations

from pathlib import Path

import pytest

from casemill.evaluation.report.html import write_compare
from tests.evaluation.report.viewer_runs import PAYLOAD, cases, evaluate

pytestmark = pytest.mark.slow


def _open(browser, path: Path):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on(
        "request", lambda r: errors.append(f"request {r.url}") if r.url != path.as_uri() else None
    )
    page.goto(path.as_uri())
    page.wait_for_selector("html[data-viewer=ready]")
    return page, errors


def _filter_failed_adversarial(page) -> list[str]:
    page.select_option("select[name=status]", "fail")
    page.select_option("select[name=tag]", "adversarial")
    return page.locator("tr[data-case]").evaluate_all("rows => rows.map(r => r.dataset.case)")


def test_a_run_filtered_to_failed_adversarial_cases_opens_one_to_its_transcript(tmp_path, browser):
    run = evaluate(tmp_path, "run", clarify_writes=True)
    page, errors = _open(browser, run / "report.html")
    assert page.locator(".cm-count").text_content() == "4 of 4 cases"
    clarify = cases()[1]
    assert _filter_failed_adversarial(page) == [clarify.id]
    page.locator(f"tr[data-case='{clarify.id}']").click()
    page.wait_for_selector(".cm-trial")
    panel = page.locator(".cm-detail")
    assert "forbidden_call" in panel.locator("summary").first.text_content()
    roles = panel.locator(".cm-msg .cm-role").all_text_contents()
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert panel.locator(".cm-sim").count() == 1  # the simulated customer turn, badged
    assert PAYLOAD in panel.locator(".cm-msg pre").nth(4).text_content()  # shown as text
    diff = panel.locator(".cm-diff tr").all_text_contents()
    assert 'orders.W1002.status- "pending"+ "cancelled"' in diff
    assert page.evaluate("window.__pwned") is None and errors == []
    page.screenshot(path=str(tmp_path / "viewer.png"))


def test_a_gate_failure_names_the_cases_operator_and_intent_and_filters_the_viewer(
    tmp_path, browser
):
    run = evaluate(tmp_path, "run", clarify_writes=True)
    page, errors = _open(browser, run / "report.html")
    clarify = cases()[1]
    row = page.locator("table.gate-cases tr").nth(1).locator("td").all_text_contents()
    assert row == [clarify.id, "(none)", "refund"]
    assert "1 failing case; by operator: (none) 1." in page.locator("body").text_content()
    page.get_by_text("Show all of them in the viewer").click()
    page.wait_for_function("document.querySelectorAll('tr[data-case]').length === 1")
    assert page.locator(".cm-count").text_content() == "1 of 4 cases"
    assert errors == []


def test_three_runs_compared_mark_the_flips_and_open_each_runs_transcript(tmp_path, browser):
    runs = [
        evaluate(tmp_path, "a", clarify_writes=False),
        evaluate(tmp_path, "b", clarify_writes=True),
        evaluate(tmp_path, "c", clarify_writes=True, refund_ok=False),
    ]
    page, errors = _open(browser, write_compare(runs, tmp_path / "compare.html"))
    refund, clarify, _, _ = cases()
    flips = page.locator("tr.cm-flip").evaluate_all("rows => rows.map(r => r.dataset.case)")
    assert sorted(flips) == sorted([refund.id, clarify.id])
    assert _filter_failed_adversarial(page) == [clarify.id]
    row = page.locator(f"tr[data-case='{clarify.id}'] td.cm-st").all_text_contents()
    assert row == ["pass", "fail", "fail"]
    page.locator(f"tr[data-case='{clarify.id}']").click()
    page.wait_for_selector(".cm-trial")
    panel = page.locator(".cm-detail")
    assert panel.locator("h3.cm-run").count() == 3
    verdicts = panel.locator(".cm-trial > summary").all_text_contents()
    assert verdicts == [
        "run 1, trial 0: pass",
        "run 2, trial 0: forbidden_call",
        "run 3, trial 0: forbidden_call",
    ]
    assert panel.locator(".cm-diff").count() == 2  # the failing runs' state diffs
    assert panel.locator(".cm-sim").count() == 3  # one simulated turn in each transcript
    assert page.evaluate("window.__pwned") is None and errors == []
    page.screenshot(path=str(tmp_path / "compare.png"))
