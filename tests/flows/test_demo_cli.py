"""`casemill demo`, the README's main command, end to end (on the session's Prefect server)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from casemill.cli import app
from casemill.corpus import CorpusStore

pytestmark = pytest.mark.slow


def test_demo_requires_an_explicit_review_policy():
    result = CliRunner().invoke(app, ["demo"])
    assert result.exit_code == 2 and "--review" in result.output


def test_demo_writes_a_corpus_a_review_record_reports_and_verdicts(
    prefect_harness, tmp_path, monkeypatch
):
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect"))
    monkeypatch.setenv("COLUMNS", "200")
    work = tmp_path / "demo"
    result = CliRunner().invoke(
        app,
        [
            "demo",
            "--review",
            "auto",
            "--workdir",
            str(work),
            "--agents",
            "reference,reference:refund_whole_order",
        ],
    )
    assert result.exit_code == 0, result.output
    out = result.output
    latest = CorpusStore(work / "corpus").latest()
    assert latest.version == 2 and f"version v0002, {latest.active_count} active cases" in out
    approved = re.search(r"review record .*: (\d+) approved, 0 rejected, (\d+) waiting", out)
    assert approved and int(approved.group(1)) == len(latest.added)
    assert (work / "review.db").is_file()
    assert "reference: task success" in out and "gate passed" in out
    assert "reference:refund_whole_order: task success" in out and "gate FAILED" in out
    (runs,) = (work / "runs").iterdir()  # one folder for the pipeline run
    assert re.fullmatch(r"\d{8}T\d{6}Z", runs.name)
    for agent in ("reference", "reference-refund_whole_order"):
        assert (runs / agent / "report.html").is_file()
    assert "Prefect UI" in out and "prefect server start" in out
