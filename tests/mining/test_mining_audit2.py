"""Fixes from the second user audit of `casemill mine`: a city typed after a street address,
arguments the support path drops, CSV tickets whose rows are not contiguous, and a CSV export
split at another delimiter."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mining_helpers import call_msg, chat, result_msg, write_jsonl

from casemill.errors import UserError
from casemill.mining import mine
from casemill.mining.output import mine_to_files
from casemill.mining.parsers import csv_tickets
from casemill.mining.parsers.csv_tickets import WINDOW
from casemill.mining.redact import detect, places
from casemill.mining.redact.detect import _scan

# -- 1. a city written right after a street address -------------------------------------------

TACOMA = {
    "conversation_id": "x1",
    "resolved": True,
    "messages": [
        {
            "role": "user",
            "content": "Hi, I live at 1457 Birchwood Avenue, Tacoma. Please send the refund "
            "to my card.",
        },
        {"role": "assistant", "content": "Sure, Tacoma it is."},
    ],
}


def test_a_city_typed_after_a_street_address_is_replaced_everywhere_consistently(tmp_path):
    (tmp_path / "in").mkdir()
    log = write_jsonl(tmp_path / "in" / "log.jsonl", [TACOMA])
    out = tmp_path / "out"
    out.mkdir()
    summary = mine_to_files([log], "openai-jsonl", out / "cands.jsonl", keep_raw=out / "raw.jsonl")
    assert summary.redactions["city"] == 2 and summary.redactions["address"] == 1
    # before, the street was replaced and the city left as typed
    written = [p for p in out.iterdir() if p.name != "raw.jsonl"]
    assert written and not any("Tacoma" in p.read_text() for p in written)
    raw = [json.loads(line) for line in (out / "raw.jsonl").read_text().splitlines()]
    city = next(r["surrogate"] for r in raw if r["kind"] == "city" and r["raw"] == "Tacoma")
    case = json.loads((out / "cands.jsonl").read_text().splitlines()[0])
    text = case["conversation"][0]["content"]
    assert re.search(rf"\d+ [^,]+, {re.escape(city)}\. Please send the refund", text)
    assert "Birchwood" not in text


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("I live at 1457 Birchwood Avenue, Tacoma. Thanks", "Tacoma"),
        ("1457 Birchwood Avenue, Tacoma", "Tacoma"),
        ("12 Oak Street, Kansas City MO 64101", "Kansas City"),
        ("12 Oak Street, Apt 4, St. Louis, MO", "St. Louis"),
        ("12 Oak Street, Tacoma Washington 98402", "Tacoma"),
        ("12 Oak Street, New York, NY 10001", "New York"),
        ("12 Oak Street, Springfield 62701", "Springfield"),
        ("12 Oak Street, Tacoma\nthanks", "Tacoma"),
        # not a city: a lower-case word follows, a state, a country, a word such as Please
        ("1457 Birchwood Avenue, Please send it", None),
        ("12 Oak Street, Texas.", None),
        ("12 Oak Street, New York.", None),
        ("12 Oak Street, United States.", None),
        ("12 Oak Street, Please.", None),
        ("Tacoma is nice, Tacoma.", None),
    ],
)
def test_which_words_after_a_street_address_are_a_city(text, city):
    found = [value for kind, value in _scan(text) if kind == "city"]
    assert found == ([city] if city else [])


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("12 Oak Street, Kansas City MO 64101", "64101"),
        ("12 Oak Street, Tacoma Washington 98402", "98402"),
        ("12 Oak Street, New York, NY 10001-2345.", "10001-2345"),
        ("12 Oak Street, Springfield 62701", "62701"),
        ("12 Oak Street, Springfield, IL, 62701 thanks", "62701"),
        # no postal code: a number that is not one, or not right after the city
        ("12 Oak Street, Springfield, IL 627011", None),
        ("12 Oak Street, Springfield. Order 62701", None),
        ("My order 62701 is late", None),
    ],
)
def test_a_postal_code_after_a_street_address_and_city_is_found(text, code):
    found = [value for kind, value in _scan(text) if kind == "postcode"]
    assert found == ([code] if code else [])


def test_a_postal_code_typed_after_an_address_is_replaced_everywhere(tmp_path):
    record = {
        "conversation_id": "x2",
        "resolved": True,
        "messages": [
            {"role": "user", "content": "Ship it to 12 Main St, Springfield, IL 62701-1234."},
            {"role": "assistant", "content": "Noted: zip 62701."},
        ],
    }
    log = write_jsonl(tmp_path / "log.jsonl", [record])
    out = tmp_path / "cands.jsonl"
    summary = mine_to_files([log], "openai-jsonl", out)
    # before, the street and city were replaced and the postal code left as typed
    assert summary.redactions["postcode"] == 2
    assert "62701" not in out.read_text()
    case = json.loads(out.read_text().splitlines()[0])
    text = case["conversation"][0]["content"]
    zip5 = re.search(r", IL (\d{5})-\d{4}\.$", text)
    assert zip5 and zip5.group(1) != "62701"


def test_please_after_a_street_address_is_left_alone(tmp_path):
    record = chat("x2", [{"role": "user", "content": "1457 Birchwood Avenue, Please send it"}])
    log = write_jsonl(tmp_path / "log.jsonl", [record])
    result = mine([log], "openai-jsonl")
    text = result.cases[0].conversation[0].content
    assert text.endswith(", Please send it") and "Birchwood" not in text
    assert "city" not in result.summary.redactions


def _digits_city() -> re.Pattern[str]:
    """DIGITS with a city after its address: the defining pattern of what `_scan` finds as a
    city (inside DIGITS's last alternative, the address, before its two closing groups)."""
    assert detect.DIGITS.pattern.endswith("))")
    return re.compile(f"{detect.DIGITS.pattern[:-2]}(?:{places.CITY_AFTER.pattern})?))")


def _defined_cities(text: str) -> list[tuple[int, str, str]]:
    out = []
    for m in _digits_city().finditer(text):
        address, city = m.group("address"), m.group("city")
        if address is None or city is None or not places.address_ok(address):
            continue
        low = city.lower()
        if low in places.NOT_CITIES:
            continue
        if low in places.STATE_NAMES and not places.THEN_CODE.match(text, m.end()):
            continue
        out.append((m.start("city"), "city", city))
    return out


PIECES = [
    *"0123456789 ,.;!?-'\n\x00aTx",
    "12 Main St",
    "1457 Birchwood Avenue",
    "Apt 5",
    ", Tacoma",
    ", New",
    " York",
    " City",
    ", St. Louis",
    ", Please",
    " send",
    " Washington",
    " NY",
    " 98402",
    "Texas",
    "O'Neil",
    "Ft.",
    "Loop",
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_cities_found_are_those_the_defining_pattern_finds(text):
    assert [f for f in detect._scan_at(text, luhn=False) if f[1] == "city"] == _defined_cities(text)
    # scanned with other texts (joined by the separator), the same
    alone = set(_scan(text)) if "\x00" not in text else None
    if alone is not None:
        assert set(detect.scan_many([text, "x"])) == alone | set(_scan("x"))


# -- 2. arguments the support path drops -------------------------------------------------------


def test_the_support_path_lists_the_arguments_its_expected_calls_drop(tmp_path):
    args = {"order_id": "W7719342", "reason": "no longer needed", "refund_to": "original_payment"}
    record = chat(
        "s1",
        [
            {"role": "user", "content": "Please cancel order W7719342, I no longer need it."},
            call_msg("c1", "cancel_order", args),
            result_msg("c1", '{"ok": true}'),
            {"role": "assistant", "content": "Your order is cancelled."},
        ],
    )
    log = write_jsonl(tmp_path / "log.jsonl", [record])
    cases = mine([log], "openai-jsonl").cases
    assert cases and all(c.domain == "support" for c in cases)
    for case in cases:
        assert case.expected.tool_calls[0].params == {"order_id": "W7719342"}
        assert (
            "arguments the support tools' expected calls do not keep were dropped: "
            "cancel_order(reason, refund_to)" in case.provenance.notes
        )


def test_the_support_path_says_nothing_when_nothing_is_dropped(tmp_path):
    record = chat(
        "s2",
        [
            {"role": "user", "content": "Please cancel order W7719342."},
            call_msg("c1", "cancel_order", {"order_id": "W7719342"}),
            result_msg("c1", '{"ok": true}'),
        ],
    )
    log = write_jsonl(tmp_path / "log.jsonl", [record])
    cases = mine([log], "openai-jsonl").cases
    assert cases and not any("dropped" in (c.provenance.notes or "") for c in cases)


# -- 3. CSV tickets whose rows are not contiguous ----------------------------------------------


def test_tickets_whose_rows_interleave_are_each_mined_whole(tmp_path):
    """An export sorted by time interleaves its tickets' rows."""
    log = tmp_path / "t.csv"
    log.write_text(
        "ticket_id,role,message,status\n"
        "T-100,customer,My parcel never came,resolved\n"
        "T-101,customer,Where is my refund,resolved\n"
        "T-100,agent,I will resend it,resolved\n"
        "T-102,customer,Hello,resolved\n"
        "T-101,agent,It is on its way,resolved\n"
    )
    result = mine([log], "csv", redact=False)
    # before: T-100 and T-101 were mined from their first row alone, high confidence, and their
    # later rows quarantined as split tickets
    assert result.quarantined == ()
    assert result.summary.conversations_read == 3
    turns = {
        c.id: (c.line, [m.content for m in c.messages])
        for c in csv_tickets.parse(log, max_turns=50)
    }
    assert turns == {
        "T-100": (2, ["My parcel never came", "I will resend it"]),
        "T-101": (3, ["Where is my refund", "It is on its way"]),
        "T-102": (5, ["Hello"]),
    }


def test_a_ticket_id_that_comes_back_after_its_ticket_was_finished_is_quarantined(tmp_path):
    log = tmp_path / "t.csv"
    filler = "".join(f"F-{i},customer,Hello {i},resolved\n" for i in range(WINDOW + 5))
    log.write_text(
        "ticket_id,role,message,status\n"
        "T-100,customer,My parcel never came,resolved\n"
        + filler
        + "T-100,agent,I will resend it,resolved\n"
    )
    result = mine([log], "csv", redact=False)
    [q] = result.quarantined
    assert (q.line, q.reason, q.conversation_id, q.field) == (
        WINDOW + 8,
        "split_ticket",
        "T-100",
        "ticket_id",
    )
    assert "first seen on line 2" in q.message
    assert f"keep a ticket's rows within {WINDOW} lines of each other" in q.message
    assert result.summary.conversations_read == WINDOW + 6


def test_contiguous_tickets_and_tickets_without_an_id_are_not_split(tmp_path):
    log = tmp_path / "t.csv"
    log.write_text(
        "ticket_id,role,message\n"
        "T-1,customer,hi\nT-1,agent,hello\nT-2,customer,hey\n,customer,no id\n"
        "T-3,customer,yo\n,customer,no id again\n"
    )
    result = mine([log], "csv", redact=False)
    assert result.quarantined == () and result.summary.conversations_read == 5


# -- 4. a CSV export split at another delimiter ------------------------------------------------


@pytest.mark.parametrize(
    ("sep", "shown"), [(";", '"delimiter": ";"'), ("\t", '"delimiter": "\\t"')]
)
def test_a_header_split_at_another_delimiter_names_the_delimiter_to_set(tmp_path, sep, shown):
    log = tmp_path / "t.csv"
    log.write_text(sep.join(["ticket_id", "role", "message"]) + "\n" + sep.join(["T1", "c", "hi"]))
    with pytest.raises(UserError) as caught:
        mine([log], "csv")
    message = str(caught.value)
    assert f"3 split at {sep!r} (columns: ticket_id, role, message)" in message
    assert f"set {shown} in the --csv-mapping" in message
    assert "does not look like a header" not in message


def test_an_unreadable_row_of_no_id_quarantines_the_open_ticket_of_the_next_row(tmp_path):
    log = tmp_path / "t.csv"
    log.write_text(
        "ticket_id,role,message,status\n"
        "A,customer,hi my order A,resolved\n"
        "B,customer,hi my order B,resolved\n"
        "A,agent,looking at A,resolved\n"
        ",agent,a,stray,cells,resolved\n"  # whose row it was, nobody can tell: A's or B's
        "B,agent,looking at B,resolved\n"
    )
    result = mine([log], "csv", redact=False)
    # before: B, open since line 3, was mined as if the lost row could not be its own
    assert not result.cases
    assert sorted((q.line, q.conversation_id) for q in result.quarantined) == [
        (2, "A"),
        (3, "B"),
        (5, None),
    ]
