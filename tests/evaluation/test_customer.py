"""The scripted customer: script first, then confirmations, then facts, else the end."""

from __future__ import annotations

import pytest

from casemill.case.model import Case
from casemill.evaluation.customer import (
    NO,
    YES,
    ScriptedSession,
    asks_confirmation,
    customer_facts,
    fact_sentence,
    facts_asked,
    recorded_user_facts,
)
from tests.evaluation.scoring.casebuild import refund_case


def generic_case(customer: dict | None = None) -> Case:
    return Case.model_validate(
        {
            "domain": "generic:airline",
            "environment": {
                "state": {
                    "records": {
                        "user_details": {
                            "mia_li_3668": {
                                "name": {"first_name": "Mia", "last_name": "Li"},
                                "email": "mia.li@example.com",
                            }
                        }
                    }
                }
            },
            "conversation": [{"role": "customer", "content": "I want to book a flight."}],
            "customer": customer,
            "expected": {"outcome": "resolve", "optimal_steps": 1},
        }
    )


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Shall I refund the mug, $24.99, to your card?", True),
        ("I will cancel W1001. Do you want me to proceed?", True),
        ("Here are the details. Please confirm (yes/no).", True),
        ("Would you like me to cancel it instead?", True),
        ("Do you want me to cancel order W1, or to change its address?", False),
        ("Which order of yours can I help with?", False),
        ("Your refund of $14.50 is on its way.", False),
        ("Your refund is issued. Would you like me to help with anything else?", False),
        ("Is there something else you want me to do?", False),
    ],
)
def test_what_counts_as_a_request_for_confirmation(text, asks):
    assert asks_confirmation(text) is asks


def test_facts_are_matched_by_every_word_of_their_name():
    facts = {"user_id": "u1", "email": "e@x.org", "order_ids": ["W1", "W2"], "name": "Mia Li"}
    assert facts_asked("Could you provide your user ID and email?", facts) == ["user_id", "email"]
    assert facts_asked("What are your order numbers?", facts) == ["order_ids"]
    assert facts_asked("Please send me your name.", facts) == ["name"]
    assert facts_asked("Which flight do you want?", facts) == []
    assert fact_sentence("order_ids", ["W1", "W2"]) == "My order ids is W1, W2."


def test_the_script_goes_first_then_confirmation_then_facts_then_the_end():
    session = ScriptedSession(
        generic_case({"script": ["From JFK to SEA ###STOP###", "###STOP###"]})
    )
    assert session.next("Where would you like to fly?").text == "From JFK to SEA"
    assert session.next("Shall I book HAT069 for you?").text == YES
    assert session.next("What is your user id?").text == "My user id is mia_li_3668."
    end = session.next("Booked. Anything else?")
    assert end.text is None and end.ended == "the customer has nothing to add"


def test_a_question_about_a_fact_is_answered_with_the_fact_not_a_yes():
    session = ScriptedSession(generic_case())
    assert session.next("Could you please confirm your email address?").text == (
        "My email is mia.li@example.com."
    )
    assert (
        session.next("Before I proceed, could you tell me your name?").text == "My name is Mia Li."
    )


def test_a_customer_who_declines_says_no_once_and_the_agent_repeating_itself_ends_it():
    session = ScriptedSession(generic_case({"declines": True}))
    assert session.next("Shall I go ahead?").text == NO
    assert session.next("Shall I go ahead?").ended == "the agent repeated its last reply"
    fresh = ScriptedSession(generic_case({"declines": True}))
    fresh.next("Shall I go ahead?")
    assert fresh.next("Are you sure? Shall I proceed?").ended == "the customer declined already"
    assert ScriptedSession(generic_case()).next("").ended == "the agent said nothing"


def test_facts_come_from_the_case_the_domain_or_the_records():
    assert customer_facts(refund_case()) == {
        "customer_id": "C1001",
        "name": "Ana Diaz",
        "email": "ana.diaz@example.com",
    }
    assert customer_facts(generic_case()) == {
        "user_id": "mia_li_3668",
        "name": "Mia Li",
        "email": "mia.li@example.com",
    }
    assert customer_facts(generic_case({"facts": {"zip": "10001"}})) == {"zip": "10001"}
    assert recorded_user_facts({"records": {"user_details": {"a": {}, "b": {}}}}) == {}
