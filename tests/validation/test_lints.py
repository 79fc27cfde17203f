"""Lints: vague required phrases, lookup values leaked into the customer's text, writes on
cases that need a clarifying question. Warnings by default, errors under `strict`."""

from __future__ import annotations

import json

from fixtures.casebuild import cancel_case, clarify_case, line, record, refund_case

from casemill.case.model import Case
from casemill.validation import check_case, lint_findings, validate_paths


def _with(case: Case, **expected) -> Case:
    data = record(case)
    data["expected"].update(expected)
    data["id"] = ""
    return Case.model_validate(data)


def rules(case: Case) -> list[tuple[str, str | None]]:
    return [(f.rule, f.field) for f in lint_findings(case)]


def test_good_cases_have_no_lints():
    for case in (refund_case(), cancel_case(), clarify_case()):
        assert lint_findings(case) == []


def test_generic_word_alone_is_vague_when_an_amount_could_be_required():
    case = _with(refund_case(), reply_contains=["refund"])
    found = lint_findings(case)
    assert [(f.rule, f.field, f.severity) for f in found] == [
        ("vague-phrase", "expected.reply_contains[0]", "warning")
    ]
    assert "'W1001'" in found[0].message or "I1" in found[0].message


def test_short_phrase_is_vague():
    case = _with(refund_case(), reply_contains=["ok", "so"])
    assert rules(case) == [("vague-phrase", "expected.reply_contains[0]")]


def test_short_numbers_are_concrete():
    assert rules(_with(refund_case(), reply_contains=["10"])) == []


def test_generic_word_beside_a_concrete_one_is_fine():
    assert rules(_with(refund_case(), reply_contains=["14.50", "refund"])) == []


def test_vague_phrase_without_any_concrete_value_is_not_flagged():
    assert rules(_with(clarify_case(), reply_contains=["sorry"])) == []


def test_price_in_the_customer_text_leaks_the_lookup():
    case = refund_case(text="Order W1001: the $14.50 mug arrived cracked.")
    assert rules(case) == [("leaked-lookup", "conversation[1].content")]
    assert "14.50" in lint_findings(case)[0].message


def test_status_in_the_customer_text_leaks_the_lookup():
    case = refund_case(text="Order W1001 was delivered yesterday and the mug is cracked.")
    found = lint_findings(case)
    assert [(f.rule, f.field) for f in found] == [("leaked-lookup", "conversation[1].content")]
    assert "'delivered'" in found[0].message


def test_small_counts_are_not_prices():
    case = refund_case(text="Order W1001 had 2 things and the mug is cracked.")
    assert rules(case) == []


def test_no_lookup_expected_means_no_leak():
    case = _with(
        refund_case(text="Order W1001 was delivered, the mug is cracked."), optimal_steps=2
    )
    assert rules(case) == []


def test_write_on_a_case_labelled_clarify():
    data = record(refund_case())
    data["tags"]["labels"] = ["clarify"]
    data["id"] = ""
    case = Case.model_validate(data)
    assert rules(case) == [("clarify-write", "expected.tool_calls[0]")]


def test_strict_makes_lints_errors():
    case = _with(refund_case(), reply_contains=["refund"])
    assert [f.severity for f in check_case(case)] == ["warning"]
    assert [f.severity for f in check_case(case, strict=True)] == ["error"]


def test_items_that_are_not_a_list_are_a_state_finding_not_a_crashed_check(tmp_path):
    """An order whose `items` is a number: the lints skip it, and the semantic check reports
    the wrong shape at its field (it used to crash the lints: `semantic/check-crashed`)."""
    data = record(refund_case(text="Order W1001: the $14.50 mug arrived cracked."))
    data["environment"]["state"]["orders"]["W1001"]["items"] = 5
    data["id"] = ""
    case = Case.model_validate(data)
    assert lint_findings(case) == []
    path = tmp_path / "c.jsonl"
    path.write_text(line(case))
    report = validate_paths([path], batch=False)
    found = [(f.rule, f.field) for b in report.bad for f in b.findings]
    assert found == [("state-shape", "environment.state.orders.W1001.items")]


WRONG_SHAPES = (5, "x", None, [], {}, [1, 2], {"a": 1}, 1e308, -1, True, 10**30)


def _paths(value, path=()):
    """Every place inside `value` (a JSON value), as a path of keys and indexes."""
    yield path
    if isinstance(value, dict | list):
        for key, inner in value.items() if isinstance(value, dict) else enumerate(value):
            yield from _paths(inner, (*path, key))


def _replaced(data: dict, path: tuple, new) -> dict:
    data = json.loads(json.dumps(data))
    inner = data
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = new
    data["id"] = ""
    return data


def test_no_wrong_shape_in_the_state_or_the_expected_calls_crashes_a_check():
    """Each value of the environment's state and of the expected calls, in turn, replaced by
    a value of another shape: the semantic checks and lints of every model-valid result give
    findings, never an exception."""
    cases = [refund_case(text="Order W1001: the $14.50 mug arrived cracked."), cancel_case()]
    checked = 0
    for case in cases:
        data = record(case)
        for root in (("environment", "state"), ("expected", "tool_calls")):
            for path in list(_paths(data[root[0]][root[1]]))[1:]:
                for new in WRONG_SHAPES:
                    try:
                        mutated = Case.model_validate(_replaced(data, (*root, *path), new))
                    except ValueError:
                        continue
                    assert isinstance(check_case(mutated), list)
                    checked += 1
    assert checked > 500
