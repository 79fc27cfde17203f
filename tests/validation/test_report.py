"""The report API: counts per layer and rule, warnings on kept cases, JSON form, and a batch
suite that cannot run."""

from __future__ import annotations

import json
import logging

from fixtures.casebuild import cancel_case, line, record, refund_case

import casemill.validation.report as report_module
from casemill.validation import LAYERS, check_case, validate_paths


def _vague():
    data = record(refund_case())
    data["expected"]["reply_contains"] = ["refund"]
    data["id"] = ""
    return data


def test_warnings_keep_the_case_and_strict_refuses_it(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(line(_vague()) + line(cancel_case()))
    loose = validate_paths([path], batch=False)
    assert loose.ok and len(loose.valid) == 2
    assert [(w.line, w.rule, w.severity) for w in loose.warnings] == [
        (1, "vague-phrase", "warning")
    ]
    assert loose.counts()["lint"] == {"vague-phrase": 1}
    strict = validate_paths([path], strict=True, batch=False)
    assert not strict.ok and [b.line for b in strict.bad] == [1]
    assert strict.bad[0].findings[0].severity == "error"


def test_counts_cover_every_layer_and_json_form(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(line(refund_case()) + "{\n" + "[]\n")
    report = validate_paths([path], batch=False)
    counts = report.counts()
    assert tuple(counts) == LAYERS
    assert counts["json"] == {"invalid-json": 1, "not-object": 1}
    data = json.loads(json.dumps(report.as_dict()))
    assert data["records"] == 3 and data["valid"] == 1 and data["bad"] == 2
    assert data["batch_checked"] is False
    assert [f["line"] for f in data["findings"]] == [2, 3]


def test_a_failing_batch_suite_is_a_finding_not_a_crash(tmp_path, monkeypatch, caplog):
    def broken(rows, rules=None):
        raise RuntimeError("no pandas today")

    monkeypatch.setattr(report_module, "batch_findings", broken)
    path = tmp_path / "c.jsonl"
    path.write_text(line(refund_case()))
    caplog.set_level(logging.DEBUG, logger=report_module.__name__)
    report = validate_paths([path])
    assert [r.levelno for r in caplog.records if r.exc_info] == [logging.DEBUG]  # off screen
    assert not report.ok and len(report.valid) == 1
    assert [(f.layer, f.rule) for f in report.batch_issues] == [("batch", "suite-failed")]
    assert "no pandas today" in report.batch_issues[0].message


def test_check_case_names_an_unknown_domain():
    data = record(refund_case())
    data["domain"], data["id"] = "banking", ""
    from casemill.case.model import Case

    found = check_case(Case.model_validate(data))
    assert [(f.rule, f.field) for f in found] == [("unknown-domain", "domain")]


def test_a_crashed_check_is_a_finding_and_its_traceback_stays_off_screen(
    tmp_path, monkeypatch, caplog
):
    """A bug in a check: the record gets `semantic/check-crashed` and the others are kept; the
    traceback goes to the debug log only, never to a level a console shows."""

    def broken(case, domain=None):
        raise TypeError("'int' object is not iterable")

    monkeypatch.setattr(report_module, "lint_findings", broken)
    path = tmp_path / "c.jsonl"
    path.write_text(line(refund_case()) + line(cancel_case()))
    caplog.set_level(logging.DEBUG, logger=report_module.__name__)
    report = validate_paths([path], batch=False)
    assert [(b.line, [f.rule for f in b.findings]) for b in report.bad] == [
        (1, ["check-crashed"]),
        (2, ["check-crashed"]),
    ]
    assert "TypeError: 'int' object is not iterable" in report.bad[0].findings[0].message
    traced = [r for r in caplog.records if r.exc_info]
    assert [r.levelno for r in traced] == [logging.DEBUG, logging.DEBUG]
    assert not [r for r in caplog.records if r.levelno >= logging.INFO and r.exc_info]
