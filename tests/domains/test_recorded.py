"""Recorded tools: a case of a domain without a simulator answered from its own records."""

from __future__ import annotations

from casemill.case.model import Case
from casemill.domains.recorded import (
    RecordedSandbox,
    declared_tools,
    record_key,
    recorded_problems,
    tool_specs,
)


def airline_case(**state_extra) -> Case:
    state = {
        "records": {
            "user_details": {"mia_li_3668": {"name": "Mia Li", "reservations": ["NO6JO3"]}},
            "direct_flight": {
                '{"date":"2024-05-20","destination":"SEA","origin":"JFK"}': [{"flight": "HAT069"}]
            },
        },
        "tools": {
            "get_user_details": {"kind": "read", "params": ["user_id"]},
            "book_reservation": {"kind": "write", "params": ["user_id", "flights"]},
        },
        "calls": [
            {
                "tool": "cancel_reservation",
                "params": {"reservation_id": "NO6JO3"},
                "result": "Error: cannot cancel a basic economy booking",
                "ok": False,
                "turn": 5,
            },
        ],
        **state_extra,
    }
    return Case.model_validate(
        {
            "domain": "generic:airline",
            "environment": {"state": state},
            "conversation": [{"role": "customer", "content": "Book me JFK to SEA on May 20."}],
            "expected": {
                "tool_calls": [
                    {
                        "tool": "book_reservation",
                        "params": {"user_id": "mia_li_3668", "flights": ["HAT069"]},
                        "match": {"flights": {"kind": "set"}},
                    }
                ],
                "outcome": "resolve",
                "optimal_steps": 2,
            },
        }
    )


def test_reads_come_from_the_records_by_collection_and_key():
    box = RecordedSandbox(airline_case())
    got = box.call("get_user_details", {"user_id": "mia_li_3668"})
    assert got.ok and got.content == {"name": "Mia Li", "reservations": ["NO6JO3"]}
    search = {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}
    assert box.call("search_direct_flight", search).content == [{"flight": "HAT069"}]
    assert record_key(search) == '{"date":"2024-05-20","destination":"SEA","origin":"JFK"}'


def test_an_expected_write_is_acknowledged_under_the_matching_rules():
    box = RecordedSandbox(airline_case())
    got = box.call("book_reservation", {"user_id": "mia_li_3668", "flights": ["HAT069"]})
    assert got.ok and got.content["status"] == "ok"
    assert box.comparable_state() == {
        "writes": [
            {
                "tool": "book_reservation",
                "params": {"user_id": "mia_li_3668", "flights": ["HAT069"]},
            }
        ]
    }


def test_a_recorded_failure_fails_again_and_counts_as_no_write():
    box = RecordedSandbox(airline_case())
    got = box.call("cancel_reservation", {"reservation_id": "NO6JO3"})
    assert not got.ok and got.error == "recorded_error"
    assert got.content == "Error: cannot cancel a basic economy booking"
    assert box.comparable_state() == {"writes": []}


def test_anything_else_is_an_off_script_error_naming_the_call_and_counts_as_a_write():
    box = RecordedSandbox(airline_case())
    read = box.call("get_user_details", {"user_id": "someone_else"})
    assert not read.ok and read.error == "off_script"
    assert 'get_user_details({"user_id":"someone_else"})' in read.content["message"]
    assert "no result was recorded" in read.content["message"]
    write = box.call("book_reservation", {"user_id": "mia_li_3668", "flights": ["HAT001"]})
    assert write.error == "off_script"
    assert len(box.comparable_state()["writes"]) == 1  # the agent tried it: it counts
    assert box.call("teleport", {}).error == "unknown_tool"


def test_tools_are_declared_from_the_state_the_calls_and_the_expected_calls():
    tools = declared_tools(airline_case())
    assert tools["get_user_details"]["kind"] == "read"
    assert tools["book_reservation"] == {"kind": "write", "params": ["flights", "user_id"]}
    assert tools["cancel_reservation"]["kind"] == "write"
    names = [s["function"]["name"] for s in tool_specs(airline_case())]
    assert names == ["book_reservation", "cancel_reservation", "get_user_details"]


def test_two_different_recorded_results_for_one_call_are_a_finding_naming_the_turn():
    second = {
        "tool": "cancel_reservation",
        "params": {"reservation_id": "NO6JO3"},
        "result": {"status": "cancelled"},
        "turn": 9,
    }
    case = airline_case()
    calls = [*case.environment.state["calls"], second, "not a call"]
    problems = recorded_problems(airline_case(calls=calls))
    assert [(p.field, p.rule) for p in problems] == [
        ("environment.state.calls[1]", "recorded-conflict"),
        ("environment.state.calls[2]", "recorded-call-shape"),
    ]
    assert "(turn 9): calls[0] and calls[1]" in problems[0].message


def test_validation_reports_the_conflict_as_a_semantic_finding():
    from casemill.validation.semantic import semantic_findings

    second = {"tool": "cancel_reservation", "params": {"reservation_id": "NO6JO3"}, "turn": 9}
    case = airline_case(calls=[*airline_case().environment.state["calls"], second])
    found = semantic_findings(case)
    assert [(f.field, f.rule) for f in found] == [
        ("environment.state.calls[1]", "recorded-conflict")
    ]
    assert semantic_findings(airline_case()) == []


def test_the_writes_are_matched_one_to_one_whatever_their_order():
    from casemill.evaluation.scoring.context import context_for
    from casemill.evaluation.scoring.metrics import writes_match
    from casemill.evaluation.trajectory import RecordedCall

    case = Case.model_validate(
        {
            "domain": "generic:bookings",
            "conversation": [{"role": "customer", "content": "Cancel B1 and B2."}],
            "expected": {
                "tool_calls": [
                    {
                        "tool": "cancel",
                        "params": {"booking_id": "B9", "reason": "x"},
                        "match": {"booking_id": {"kind": "any"}},
                    },
                    {"tool": "cancel", "params": {"booking_id": "B1"}},
                ],
                "outcome": "resolve",
                "optimal_steps": 3,
            },
        }
    )
    made = [
        RecordedCall(tool="cancel", params={"booking_id": "B1", "reason": "x"}),
        RecordedCall(tool="cancel", params={"booking_id": "B2", "reason": "x"}),
    ]
    ctx = context_for(case)
    assert writes_match(ctx, made) and writes_match(ctx, made[::-1])
    assert not writes_match(ctx, made[1:] * 2)  # nothing cancels B1


def test_a_read_the_case_declares_is_not_counted_as_a_write():
    from casemill.evaluation.scoring.context import context_for
    from casemill.evaluation.scoring.metrics import writes_made
    from casemill.evaluation.trajectory import RecordedCall

    case = airline_case(tools={"lookup_booking": {"kind": "read", "params": ["id"]}})
    calls = [
        RecordedCall(tool="lookup_booking", params={"id": "B1"}),
        RecordedCall(tool="book_reservation", params={"user_id": "mia_li_3668"}),
    ]
    assert [c.tool for c in writes_made(context_for(case), calls)] == ["book_reservation"]
