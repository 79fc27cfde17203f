"""Which logged messages answer which agent turn (the log in `logs.py`, mined without
redaction so the tests read the raw values)."""

import pytest

from casemill.recorded.log import RecordedLog
from casemill.recorded.segments import (
    customer_turns,
    held_after_customer,
    opening_differs,
    segment,
)
from casemill.recorded.spec import LogSpec
from tests.recorded.logs import mined, write_log


@pytest.fixture(scope="module")
def log_and_cases(tmp_path_factory):
    log = write_log(tmp_path_factory.mktemp("seg") / "airline.jsonl")
    recorded = RecordedLog(LogSpec(log, redact=False))
    by_kind = {
        (c.provenance.source.conversation_id, c.tags.labels[1]): c for c in mined(log, redact=False)
    }
    return recorded, by_kind


def _conv(recorded, case):
    return recorded.find(case.provenance.source.conversation_id).conversation


def test_a_conversation_case_plays_the_log_turn_by_turn(log_and_cases):
    recorded, cases = log_and_cases
    case = cases[("air-cancel-1", "conversation")]
    conv = _conv(recorded, case)
    assert (customer_turns(case), held_after_customer(case)) == (1, 0)
    first, second, third = (segment(conv, case, t) for t in range(3))
    assert [c.tool for c in first.calls] == ["get_user_details", "get_reservation_details"]
    assert first.reply == "Ana, shall I cancel ZK3P9Q? Please say yes."
    assert [(c.tool, c.arguments) for c in second.calls] == [
        ("cancel_reservation", {"reservation_id": "ZK3P9Q"})
    ]
    assert second.reply == "Done: ZK3P9Q is cancelled, Ana."
    # the customer's farewell, left unanswered in the log: the agent's last words stand
    assert (third.calls, third.reply, third.said_before) == ((), second.reply, True)
    past = segment(conv, case, 3)  # past the log's end (a customer that goes on)
    assert (past.found, past.calls, past.reply, past.said_before) == (
        False,
        (),
        second.reply,
        True,
    )


def test_a_turn_of_calls_without_words_replies_with_the_words_before(log_and_cases):
    recorded, cases = log_and_cases
    case = cases[("air-bags-2", "decision_point")]
    conv = _conv(recorded, case)
    quiet = conv.with_messages(
        [m for m in conv.messages if m.content != "One bag is added to ZK3P9Q."]
    )
    first = segment(quiet, case, 0)
    assert [c.tool for c in first.calls] == ["update_reservation_baggages"]
    assert (first.reply, first.said_before) == ("No checked bags on ZK3P9Q.", True)


def test_a_decision_point_starts_after_its_own_customer_turns(log_and_cases):
    recorded, cases = log_and_cases
    case = cases[("air-cancel-1", "decision_point")]
    assert customer_turns(case) == 2
    first = segment(_conv(recorded, case), case, 0)
    assert [c.tool for c in first.calls] == ["cancel_reservation"]
    assert first.reply == "Done: ZK3P9Q is cancelled, Ana."


def test_the_reads_a_decision_point_holds_are_not_made_again(log_and_cases):
    recorded, cases = log_and_cases
    case = cases[("air-bags-2", "decision_point")]
    assert [t.role for t in case.conversation][-3:] == ["customer", "assistant", "tool"]
    assert held_after_customer(case) == 2
    first = segment(_conv(recorded, case), case, 0)
    assert [(c.tool, c.arguments) for c in first.calls] == [
        ("update_reservation_baggages", {"reservation_id": "ZK3P9Q", "total_baggages": 1})
    ]
    assert first.reply == "One bag is added to ZK3P9Q."


def test_an_imported_task_counts_its_scenario_as_the_first_customer_turn(log_and_cases):
    recorded, cases = log_and_cases
    mined_case = cases[("air-cancel-1", "conversation")]
    task = mined_case.model_copy(update={"conversation": mined_case.conversation[:1]})
    assert task.user_scenario and customer_turns(task) == 1
    conv = _conv(recorded, mined_case)
    assert segment(conv, task, 1) == segment(conv, mined_case, 1)


def test_an_opening_that_is_not_the_logs_is_found(log_and_cases):
    recorded, cases = log_and_cases
    case = cases[("air-cancel-1", "decision_point")]
    conv = _conv(recorded, case)
    assert opening_differs(conv, case) is None
    turns = list(case.conversation)
    turns[-1] = turns[-1].model_copy(update={"content": "No, keep it."})
    other = case.model_copy(update={"conversation": tuple(turns)})
    assert opening_differs(conv, other) == "customer turn 2"
