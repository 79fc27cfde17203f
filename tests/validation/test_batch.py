"""The Great Expectations batch layer: failing rows map back to file and line and leave the
batch; table rules (no-write share per category) fail the report without costing any case."""

from __future__ import annotations

import re

import pytest
from fixtures.casebuild import cancel_case, clarify_case, line, record, refund_case, scenario_case

from casemill.case.model import Case
from casemill.validation import BatchRules, Row, batch_findings, validate_paths

pytestmark = pytest.mark.slow  # imports great_expectations (several seconds)


def _edit(case, **tags):
    data = record(case)
    data["tags"].update(tags)
    data["id"] = ""
    return data


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("batch")
    blank = record(cancel_case("W1010"))
    blank["conversation"][1]["content"] = "   "
    blank["id"] = ""
    path = folder / "cases.jsonl"
    path.write_text(
        line(refund_case())
        + line(_edit(cancel_case(), intents=["teleport"]))
        + line(blank)
        + line(clarify_case())
        + line(scenario_case())
    )
    rules = BatchRules(min_category_cases=1, no_write_share={"robustness": (0.0, 0.5)})
    return validate_paths([path], rules=rules), path


def test_rows_failing_the_suite_are_located_and_removed(report):
    result, path = report
    located = {(b.line, f.layer, f.rule, f.field) for b in result.bad for f in b.findings}
    assert (2, "batch", "allowed-intent", "tags.intents") in located
    assert (3, "batch", "no-dialogue", "conversation") in located
    assert [b.line for b in result.bad] == [2, 3]
    assert all(b.file == str(path) for b in result.bad)
    assert [i.line for i in result.valid] == [1, 4, 5]


def test_share_of_no_write_cases_is_a_batch_issue(report):
    result, _ = report
    issues = [(f.rule, f.field) for f in result.batch_issues]
    assert issues == [("no-write-share", "tags.category")]
    assert "100% of the 1 'robustness' cases" in result.batch_issues[0].message
    assert not result.ok
    assert result.counts()["batch"] == {"allowed-intent": 1, "no-dialogue": 1, "no-write-share": 1}


def test_duplicate_rows_and_length_bounds():
    a, b = refund_case(), cancel_case()
    rows = [Row(a, "f.jsonl", 1), Row(b, "f.jsonl", 2), Row(a, "g.jsonl", 7)]
    found = batch_findings(rows, BatchRules(max_turn_chars=40, min_category_cases=99))
    got = {(f.file, f.line, f.rule) for f in found}
    assert got == {
        ("f.jsonl", 1, "unique-id"),
        ("g.jsonl", 7, "unique-id"),
        ("f.jsonl", 1, "text-length"),
        ("g.jsonl", 7, "text-length"),
    }
    (message,) = {f.message for f in found if f.rule == "text-length"}
    assert re.fullmatch(r"longest text is \d+ characters, outside \[\d+, 40\]", message), message


def test_default_rules_pass_good_cases():
    rows = [Row(c, "f.jsonl", i) for i, c in enumerate([refund_case(), cancel_case()], 1)]
    assert batch_findings(rows) == []


def test_cases_of_a_domain_without_known_write_tools_are_left_out_of_the_no_write_share():
    def generic(n: int):
        data = record(refund_case(f"W{2000 + n}"))
        data.update(domain="generic:calendar", id="")
        data["environment"] = {"state": {}, "faults": []}
        data["tags"]["category"] = "robustness"
        data["expected"]["tool_calls"] = [
            {"tool": "reschedule_meeting", "params": {"meeting_id": f"M-{n}"}}
        ]
        return Case.model_validate(data)

    rows = [Row(generic(n), "f.jsonl", n) for n in range(1, 26)]
    rules = BatchRules(no_write_share={"robustness": (0.0, 0.9)})
    assert batch_findings(rows, rules) == []
    support = [Row(clarify_case(), "g.jsonl", 1)]  # a robustness case expecting no write
    found = batch_findings([*rows, *support], rules.model_copy(update={"min_category_cases": 1}))
    assert [(f.rule, f.message.split(" expect")[0]) for f in found] == [
        ("no-write-share", "100% of the 1 'robustness' cases")
    ]
