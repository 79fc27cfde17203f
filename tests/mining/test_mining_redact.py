"""Redaction: detectors, known fields, consistency within a conversation, determinism."""

from __future__ import annotations

import json
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from casemill.mining.model import Conversation, LoggedCall, Message
from casemill.mining.redact import detect
from casemill.mining.redact.detect import luhn_ok, scan
from casemill.mining.redact.redactor import redact_conversation, scrub_text
from casemill.mining.redact.surrogates import SHIPPED, draw, pools


def conv(messages: list[Message], conv_id: str = "c-1") -> Conversation:
    return Conversation(
        id=conv_id, messages=messages, file="f.jsonl", line=1, format="openai-jsonl"
    )


def test_detectors_find_each_kind_and_leave_order_ids_alone():
    text = (
        "my name is Ana Diaz, ana.diaz@example.com, (415) 555-0134, +44 20 7946 0958, "
        "card 4111 1111 1111 1111, 12 Oak Street, Apt 4, user mia_li_3668, customer C1001, "
        "call me at 4155550134. Order W1001 for $14.50 on 2024-05-20, item 7751905257, "
        "reservation Z7GOZK, I have 2 boxes on the way"
    )
    found = set(scan(text))
    assert found == {
        ("name", "Ana Diaz"),
        ("email", "ana.diaz@example.com"),
        ("phone", "(415) 555-0134"),
        ("phone", "+44 20 7946 0958"),
        ("card", "4111 1111 1111 1111"),
        ("address", "12 Oak Street, Apt 4"),
        ("user_id", "mia_li_3668"),
        ("user_id", "C1001"),
        ("phone", "4155550134"),
    }


def test_a_name_the_customer_gives_is_found_whole():
    # before, the name stopped at the first letter outside A-Z/a-z: the rest of it was kept
    # ("Caroline Greer-Lopez", "Pamela Mc" + "Donald", "Jos" + "é Álvarez")
    said = {
        "this is Maria Garcia-Lopez, order 12": "Maria Garcia-Lopez",
        "I'm Sean McDonald.": "Sean McDonald",
        "my name is Sean O'Brien": "Sean O'Brien",
        "i am José Álvarez": "José Álvarez",
        "I'm Jürgen Müller": "Jürgen Müller",
    }
    for text, name in said.items():
        assert ("name", name) in scan(text), text
    assert not [v for k, v in scan("I'm OK, this is URGENT") if k == "name"]


def test_a_name_after_a_title_or_a_sign_off_is_found():
    said = {
        "Could Mr. Olsen call me back?": "Olsen",
        "ask for Mrs Ruth Baker": "Ruth Baker",
        "Ms. Garcia-Lopez ordered it": "Garcia-Lopez",
        "Dr. Elena Rossi wrote": "Elena Rossi",
        "Thank you.\nSincerely,\nDr. Elena Rossi": "Elena Rossi",
        "Kind regards,\nPriya Patel": "Priya Patel",
        "Miss Jones will pick it up": "Jones",
    }
    for text, name in said.items():
        names = [v for k, v in scan(text) if k == "name"]
        assert names == [name], text
    # a title word inside another word, or not followed by a capitalised word, is no hint
    for text in ("Mrs. smith", "the forms are due", "ms office", "items Ordered"):
        assert not [v for k, v in scan(text) if k == "name"], text
    red = redact_conversation(conv([Message("customer", "Regards,\nDr. Elena Rossi")]), seed=0)
    assert "Elena" not in red.conversation.messages[0].content
    assert "Rossi" not in red.conversation.messages[0].content
    red = redact_conversation(
        conv([Message("customer", "Hi, this is Maria Garcia-Lopez. Garcia-Lopez is my name.")]),
        seed=0,
    )
    assert "Garcia" not in red.conversation.messages[0].content
    assert "Lopez" not in red.conversation.messages[0].content


# pieces that make the detectors' patterns start, stop, back off and meet their boundaries
PIECES = [
    *"0123456789 +-().,_#@%\n\taCcxZé",
    "(555)",
    "555-0139",
    "4111 1111 1111 1111",
    "+44 20 7946 0958",
    "12 Main St",
    "Apt 5",
    "Suite 3",
    "Ave.",
    "Road",
    "C1001",
    "mia_li_3668",
    "gift_card_1234",
    "credit_card_",
    "ab_cd_",
    "_1234",
    "bob.x@ex.com",
    "a@b",
    ".co",
    "x9",
    "+15558675309",
    "1-555",
    "020 7946",
    " 0111",
    "\r\n",
    "Loop",
    "Vista",
    "No.",
    "josé",
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_fast_scanners_find_what_the_patterns_define(text):
    """EMAIL, DIGITS and USER_ID define what is found; `_scan` runs faster forms of them."""
    assert detect._emails_at(text) == [(m.start(), m.group(0)) for m in detect.EMAIL.finditer(text)]
    assert [(m.lastgroup, m.group(0)) for m in detect._DIGITS_FAST.finditer(text)] == [
        (m.lastgroup, m.group(m.lastgroup)) for m in detect.DIGITS.finditer(text)
    ]
    assert detect._user_ids_at(text) == [
        (m.start(), m.group(0)) for m in detect.USER_ID.finditer(text)
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=8).map("".join), max_size=6))
def test_scan_many_finds_what_each_text_holds_from_memory_too(texts):
    """Texts scanned together (and texts seen before, answered from memory) give what each
    text's own scan gives."""
    expected = {found for text in texts for found in detect._scan(text)}
    assert set(detect.scan_many(texts)) == expected
    assert set(detect.scan_many(texts)) == expected
    assert set(detect.scan_many([*texts, "my name is Ana Diaz"])) == expected | {
        ("name", "Ana Diaz")
    }


def test_scan_many_remembers_by_shape_and_checks_each_card_number():
    """Texts that differ only in their digits share what is remembered; each card number is
    still checked on its own digits."""
    passing, failing = "card 4111 1111 1111 1111 ok", "card 4111 1111 1111 1112 ok"
    assert detect.shape(passing) == detect.shape(failing) == "card 0000 0000 0000 0000 ok"
    assert detect.shape("é ٣ 9\ud800") == "é ٣ 0\ud800"
    for texts in ([passing, failing], [failing, passing], [failing], [passing]):
        expected = {found for text in texts for found in detect._scan(text)}
        assert set(detect.scan_many(texts)) == expected
    assert detect.scan_many(["order W2001 for C2002", "order W3001 for C3003"]) == [
        ("user_id", "C2002"),
        ("user_id", "C3003"),
    ]


def test_scan_many_scans_long_texts_and_texts_holding_the_separator_alone():
    long = "filler " * 400 + "my name is Ana Diaz, card 4111 1111 1111 1111"
    held = "call me at 4155550134\x00C1001"
    texts = ["mia_li_3668", long, held, long]
    expected = {found for text in texts for found in detect._scan(text)}
    assert len(long) > detect.LONG and expected >= {("card", "4111 1111 1111 1111")}
    assert set(detect.scan_many(texts)) == expected
    assert set(detect.scan_many(texts[:2])) == {("user_id", "mia_li_3668"), *detect._scan(long)}


def test_card_numbers_must_pass_luhn():
    assert luhn_ok("4111111111111111")
    assert not luhn_ok("4111111111111112")
    assert list(scan("card 4111 1111 1111 1112 please")) == []
    assert list(scan("card 4111 1111 1111 1111 please")) == [("card", "4111 1111 1111 1111")]


def _profile_conversation() -> Conversation:
    profile = {
        "id": "C1001",
        "name": "Ana Diaz",
        "email": "ana.diaz@example.com",
        "phone": "555-867-5309",
        "address": {"street1": "12 Oak Street", "city": "Austin", "zip": "73301"},
    }
    order = {
        "id": "W1001",
        "customer_id": "C1001",
        "items": [{"item_id": "I1", "name": "Ceramic mug 12oz", "price": 14.5}],
    }
    call = LoggedCall("k1", "get_customer", {"customer_id": "C1001"}, json.dumps(profile))
    call2 = LoggedCall("k2", "get_order", {"order_id": "W1001"}, json.dumps(order))
    return conv(
        [
            Message("system", "Authenticated customer: C1001 (Ana Diaz, ana.diaz@example.com)"),
            Message("customer", "hi it's ana, my mug from W1001 is cracked. DIAZ is my surname."),
            Message("assistant", "", [call]),
            Message("tool", call.result or "", call_id="k1"),
            Message("assistant", "", [call2]),
            Message("tool", call2.result or "", call_id="k2"),
            Message("assistant", "Thanks Ana Diaz, calling 555-867-5309 now."),
        ]
    )


def test_same_value_same_surrogate_across_text_arguments_and_results():
    red = redact_conversation(_profile_conversation(), seed=3)
    c = red.conversation
    profile = json.loads(c.messages[3].content)
    new_id, new_name = profile["id"], profile["name"]
    first, last = new_name.split()
    assert new_id != "C1001" and new_id.startswith("C") and len(new_id) == 5
    assert (
        c.messages[0].content
        == f"Authenticated customer: {new_id} ({new_name}, {profile['email']})"
    )
    assert c.messages[2].calls[0].arguments == {"customer_id": new_id}
    assert c.messages[2].calls[0].result == c.messages[3].content
    assert json.loads(c.messages[5].content)["customer_id"] == new_id
    # names found in fields are searched for in all text, keeping the case they were written in
    assert f"it's {first.lower()}," in c.messages[1].content
    assert f"{last.upper()} is my surname" in c.messages[1].content
    assert c.messages[6].content == f"Thanks {new_name}, calling {profile['phone']} now."
    # product names and order ids are not personal data
    assert "Ceramic mug 12oz" in c.messages[5].content and "W1001" in c.messages[1].content
    assert red.counts["name"] >= 5 and red.counts["email"] == 2 and red.counts["phone"] == 2
    text = " ".join(m.content for m in c.messages)
    for raw in ("Ana", "Diaz", "ana.diaz@example.com", "555-867-5309", "12 Oak Street", "C1001"):
        assert raw.lower() not in text.lower()


def test_each_part_of_a_hyphenated_name_is_replaced_where_it_is_written_alone():
    profile = {"first_name": "Maria", "last_name": "Garcia-Lopez", "email": "mgl@example.com"}
    call = LoggedCall("k1", "get_user_details", {"user_id": "u1"}, json.dumps(profile))
    red = redact_conversation(
        conv(
            [
                Message("customer", "hi, my surname is Garcia Lopez"),
                Message("assistant", "", [call]),
                Message("tool", call.result or "", call_id="k1"),
                Message("assistant", "Thanks Ms. Lopez, Maria Garcia-Lopez is on file."),
            ]
        ),
        seed=0,
    )
    text = " ".join(m.content for m in red.conversation.messages)
    # before, 'Ms. Lopez' and 'Garcia Lopez' kept the surname's second part
    assert "lopez" not in text.lower() and "garcia" not in text.lower()
    new_last = json.loads(red.conversation.messages[2].content)["last_name"]
    assert f"{new_last} is on file" in red.conversation.messages[3].content


def test_surrogates_are_deterministic_and_depend_on_seed_and_what_was_said():
    a = redact_conversation(_profile_conversation(), seed=3).conversation
    b = redact_conversation(_profile_conversation(), seed=3).conversation
    c = redact_conversation(_profile_conversation(), seed=4).conversation
    assert [m.content for m in a.messages] == [m.content for m in b.messages]
    assert [m.content for m in a.messages] != [m.content for m in c.messages]
    # drawn by what the conversation holds: the same one under another id redacts the same,
    # another one (here: one more message) draws anew
    other = _profile_conversation()
    other.id = "c-2"
    d = redact_conversation(other, seed=3).conversation
    assert d.messages[3].content == a.messages[3].content
    longer = _profile_conversation()
    longer.messages.append(Message("customer", "thanks"))
    e = redact_conversation(longer, seed=3).conversation
    assert e.messages[3].content != a.messages[3].content


def test_raw_values_only_when_asked():
    assert redact_conversation(_profile_conversation()).raw == []
    raw = redact_conversation(_profile_conversation(), keep_raw=True).raw
    assert {(r.kind, r.raw) for r in raw} >= {
        ("email", "ana.diaz@example.com"),
        ("user_id", "C1001"),
        ("address", "12 Oak Street"),
        ("postcode", "73301"),
        ("city", "Austin"),
    }


def _moving_conversation(address: dict, said: str, escaped: bool = False) -> Conversation:
    """A customer's profile holding `address`, the customer typing `said`, and a call that
    ships an order to a new address (a tool result with escapes when `escaped`)."""
    profile = {"user_id": "ana_diaz_1234", "name": "Ana Diaz", "address": address}
    if escaped:
        profile["note"] = "José"
    result = json.dumps(profile)
    new = {"address1": "9 Elm Road", "city": "Boulder", "state": "CO", "zip": "80302-1145"}
    calls = [
        LoggedCall("k1", "get_user_details", {"user_id": "ana_diaz_1234"}, result),
        LoggedCall("k2", "modify_pending_order_address", {"order_id": "W1", "address": new}),
    ]
    return conv(
        [
            Message("customer", said),
            Message("assistant", "", calls[:1]),
            Message("tool", result, call_id="k1"),
            Message("assistant", "", calls[1:]),
            Message("tool", json.dumps({"order_id": "W1", "address": new}), call_id="k2"),
            Message("assistant", "Your order W1 now goes to Boulder, CO 80302-1145."),
        ]
    )


def test_payment_method_ids_get_a_surrogate_of_their_shape_everywhere():
    """Payment methods' ids, from a payment method's record (keyed by id too, as tau-bench
    keeps them), from `payment_id` fields and typed in text, are replaced consistently: a label
    and digits keep the label; a 4-digit one is not taken for a user id (no name "gift card")."""
    methods = {
        "credit_card_7815826": {"source": "credit_card", "brand": "visa", "last_four": "9990",
                                "id": "credit_card_7815826"},
        "gift_card_1234": {"source": "gift_card", "amount": 128, "id": "gift_card_1234"},
    }  # fmt: skip
    profile = json.dumps({"user_id": "ana_diaz_1234", "name": "Ana Diaz",
                          "payment_methods": methods})  # fmt: skip
    booking = {"reservation_id": "Z7GOZK", "payment_id": "credit_card_7815826"}
    calls = [
        LoggedCall("k1", "get_user_details", {"user_id": "ana_diaz_1234"}, profile),
        LoggedCall("k2", "book_reservation", booking),
    ]
    said = "Use my gift_card_1234 first, then credit_card_7815826. My gift card is new."
    red = redact_conversation(
        conv(
            [
                Message("customer", said),
                Message("assistant", "", calls[:1]),
                Message("tool", profile, call_id="k1"),
                Message("assistant", "", calls[1:]),
            ]
        ),
        seed=3,
    )
    c = red.conversation
    got = json.loads(c.messages[2].content)["payment_methods"]
    card, gift = list(got)
    assert re.fullmatch(r"credit_card_\d{7}", card) and card != "credit_card_7815826"
    assert re.fullmatch(r"gift_card_\d{4}", gift) and gift != "gift_card_1234"
    assert (got[card]["id"], got[gift]["id"]) == (card, gift)
    # a card's last four digits are redacted too (the surrogate card's, when one is known)
    assert re.fullmatch(r"\d{4}", got[card]["last_four"]) and got[card]["last_four"] != "9990"
    assert c.messages[3].calls[0].arguments == {"reservation_id": "Z7GOZK", "payment_id": card}
    assert c.messages[0].content == f"Use my {gift} first, then {card}. My gift card is new."
    assert red.counts["payment"] == 7


def test_postcodes_and_cities_get_one_surrogate_everywhere_in_their_shape():
    """Zip codes and cities the records hold are replaced in results, arguments and text (as
    whole tokens, cities ignoring case and keeping it), a zip by 5 digits, a ZIP+4 by a ZIP+4;
    states, countries and numbers or words the records do not hold as such are kept."""
    address = {"address1": "12 Oak Street", "city": "Austin", "state": "TX", "zip": "73301"}
    said = (
        "Hi, I'm Ana. My zip is 73301 (not 733010, nor 173301), I live in AUSTIN, moving from "
        "austin to Boulder. Order 55555 in Dallas, TX; a 2-pack for Austinites."
    )
    red = redact_conversation(_moving_conversation(address, said), seed=5)
    c = red.conversation
    home = json.loads(c.messages[2].content)["address"]
    new = c.messages[3].calls[0].arguments["address"]
    assert re.fullmatch(r"\d{5}", home["zip"]) and home["zip"] != "73301"
    assert re.fullmatch(r"\d{5}-\d{4}", new["zip"]) and not new["zip"].startswith("80302")
    assert home["city"] not in ("Austin", new["city"]) and new["city"] != "Boulder"
    assert (home["state"], new["state"]) == ("TX", "CO")
    assert c.messages[0].content == (
        f"Hi, I'm {json.loads(c.messages[2].content)['name'].split()[0]}. My zip is "
        f"{home['zip']} (not 733010, nor 173301), I live in {home['city'].upper()}, moving from "
        f"{home['city'].lower()} to {new['city']}. Order 55555 in Dallas, TX; a 2-pack for "
        "Austinites."
    )
    assert json.loads(c.messages[4].content)["address"] == new
    assert c.messages[5].content == f"Your order W1 now goes to {new['city']}, CO {new['zip']}."
    assert red.counts["postcode"] == 5 and red.counts["city"] == 7


def test_postcodes_keep_their_shape_and_json_numbers_stay_numbers():
    """A zip code written as a JSON number gets a number (no leading 0), in a result redacted
    on its text and in one redacted value by value (it holds escapes); another country's code
    keeps where its letters, digits and separators are."""
    for escaped in (False, True):
        address = {
            "address1": "12 Oak Street",
            "city": "Leeds",
            "zip": 10001,
            "post_code": "LS1 4AP",
        }
        red = redact_conversation(
            _moving_conversation(address, "my postcode is ls1 4ap, zip 10001", escaped), seed=9
        )
        c = red.conversation
        home = json.loads(c.messages[2].content)["address"]
        assert type(home["zip"]) is int and 10000 <= home["zip"] <= 99999
        assert home["zip"] != 10001
        assert re.fullmatch(r"[A-Z]{2}\d \d[A-Z]{2}", home["post_code"])
        assert home["post_code"] != "LS1 4AP"
        assert c.messages[0].content == f"my postcode is {home['post_code']}, zip {home['zip']}"
    leading = {"city": "Boston", "zip": "02134"}
    home = json.loads(
        redact_conversation(_moving_conversation(leading, "hi"), seed=1)
        .conversation.messages[2]
        .content
    )["address"]
    assert re.fullmatch(r"\d{5}", home["zip"]) and home["zip"] != "02134"


def test_surrogate_cities_hold_no_word_of_a_raw_name_or_city():
    """A surrogate city made of a raw word (Lake Austin, North Ana) would show the raw value:
    real cities named with the words Faker's cities are made of get surrogates without them."""
    cities = ["North Haven", "East Orange", "West Point", "South Bend", "New Haven", "Lake Forest"]
    cities += ["Port Arthur", "Georgetown", "Jamesport"]
    raw_words = {w.lower() for city in cities for w in city.split()} | {"ana", "diaz", "austin"}
    for seed in range(3):
        records = {
            "user": {"first_name": "Ana", "last_name": "Diaz", "city": "Austin"},
            "addresses": [{"city": city, "zip": f"{10000 + n}"} for n, city in enumerate(cities)],
        }
        c = _moving_conversation({"city": "Austin"}, "hi")
        c.messages[2] = Message("tool", json.dumps(records), call_id="k1")
        c.messages[1].calls[0].result = c.messages[2].content
        red = redact_conversation(c, seed=seed, keep_raw=True)
        surrogates = [r.surrogate for r in red.raw if r.kind == "city"]
        assert len(surrogates) == len(cities) + 2
        for surrogate in surrogates:
            assert raw_words.isdisjoint(surrogate.lower().split()), surrogate


def test_a_short_city_in_capitals_stays_when_the_records_use_it_as_a_code():
    """Like a short name, a short city whose capitals the records hold as a code (an airport,
    a station) is left alone where written in capitals, replaced anywhere else."""
    address = {"city": "Ely", "zip": "89301"}
    said = "I live in Ely, flying out of ELY"
    c = _moving_conversation(address, said)
    c.messages[4] = Message("tool", json.dumps({"origin": "ELY"}), call_id="k2")
    out = redact_conversation(c, seed=2).conversation
    city = json.loads(out.messages[2].content)["address"]["city"]
    assert city != "Ely"
    assert out.messages[0].content == f"I live in {city}, flying out of ELY"
    assert json.loads(out.messages[4].content) == {"origin": "ELY"}


def test_a_zip_plus_four_is_replaced_where_its_zip_is_written_alone_or_otherwise_joined():
    """Records holding a ZIP+4 (78205-1234) and a customer typing the zip alone (78205), with a
    space or with nothing between its parts: each is the raw zip, replaced by the surrogate's
    own zip (and ZIP+4)."""
    address = {"city": "Austin", "zip": "78205-1234"}
    said = "my zip is 78205, or 78205 1234, or 782051234; order 178205 is another number"
    out = redact_conversation(_moving_conversation(address, said), seed=3).conversation
    zip4 = json.loads(out.messages[2].content)["address"]["zip"]
    head = zip4[:5]
    assert re.fullmatch(r"\d{5}-\d{4}", zip4) and head != "78205"
    assert out.messages[0].content == (
        f"my zip is {head}, or {zip4}, or {zip4}; order 178205 is another number"
    )


def test_multi_word_cities_and_postcodes_are_found_with_other_whitespace_between_words():
    """A city of many words the customer types across lines or with two spaces (san\\nantonio)
    and a postal code written without its space (M5V3L9) or a ZIP+4 with a line break are the
    raw values still: they get the surrogate the records' value gets, in its case."""
    address = {"city": "San Antonio", "zip": "78205 1234", "post_code": "M5V 3L9"}
    said = "I live in san\nantonio (SAN  ANTONIO), code M5V3L9 or m5v\t3l9, zip 78205\n1234."
    for text in (said, said + " İ"):  # (lower-casing İ moves offsets: the other path)
        c = _moving_conversation(address, text)
        out = redact_conversation(c, seed=4).conversation
        home = json.loads(out.messages[2].content)["address"]
        city, code, zip4 = home["city"], home["post_code"], home["zip"]
        assert city != "San Antonio" and code != "M5V 3L9" and not zip4.startswith("78205")
        assert out.messages[0].content.removesuffix(" İ") == (
            f"I live in {city.lower()} ({city.upper()}), code {code} or {code}, zip {zip4}."
        )


def test_json_results_with_escapes_are_redacted_structurally():
    profile = json.dumps({"first_name": "José", "last_name": "Núñez", "email": "jn@example.com"})
    assert "\\u00e9" in profile
    call = LoggedCall("k", "get_user_details", {"user_id": "jose_nunez_1234"}, profile)
    c = conv(
        [
            Message("customer", "hola, soy José"),
            Message("assistant", "", [call]),
            Message("tool", profile, call_id="k"),
        ]
    )
    out = redact_conversation(c).conversation
    parsed = json.loads(out.messages[2].content)
    assert parsed["first_name"] != "José" and parsed["last_name"] != "Núñez"
    assert "José" not in out.messages[0].content


def test_a_name_written_in_capitals_stays_when_the_records_use_it_as_a_code():
    """Mia's airport, MIA, is a code in the conversation's records (a flight's origin, a key of
    the airports map): left as it is in capitals wherever it occurs, so the flights stay
    coherent and the codes do not tell which name the surrogate replaced; Mia in any other
    case is replaced."""
    profile = json.dumps(
        {"user_id": "mia_kim_4397", "name": {"first_name": "Mia", "last_name": "Kim"}}
    )
    booking = json.dumps({"reservation_id": "H9ZU1C", "origin": "MIA", "destination": "IAH"})
    airports = json.dumps({"MIA": "Miami", "IAH": "Houston"})
    calls = [
        LoggedCall("k1", "get_user_details", {"user_id": "mia_kim_4397"}, profile),
        LoggedCall("k2", "get_reservation_details", {"reservation_id": "H9ZU1C"}, booking),
        LoggedCall("k3", "list_all_airports", {}, airports),
    ]
    c = conv(
        [
            Message("customer", "Hi, I'm Mia Kim (mia_kim_4397), flying from Miami (MIA)."),
            Message("assistant", "", calls[:1]),
            Message("tool", profile, call_id="k1"),
            Message("assistant", "", calls[1:2]),
            Message("tool", booking, call_id="k2"),
            Message("assistant", "", calls[2:]),
            Message("tool", airports, call_id="k3"),
            Message("assistant", "", [LoggedCall("k4", "search", {"origin": "MIA"})]),
            Message("assistant", "Thanks MIA KIM, mia: your flight from MIA is on time."),
        ]
    )
    out = redact_conversation(c, seed=2).conversation
    first = json.loads(out.messages[2].content)["name"]["first_name"]
    assert first != "Mia"
    assert out.messages[0].content.startswith(f"Hi, I'm {first} ")
    assert out.messages[0].content.endswith("flying from Miami (MIA).")
    assert json.loads(out.messages[4].content)["origin"] == "MIA"
    assert json.loads(out.messages[6].content) == {"MIA": "Miami", "IAH": "Houston"}
    assert out.messages[7].calls[0].arguments == {"origin": "MIA"}
    # capitals the records do not use as a code are replaced as before
    assert "KIM" not in out.messages[8].content
    assert out.messages[8].content.endswith(f"{first.lower()}: your flight from MIA is on time.")
    # a name the records also write in capitals as a name is replaced in capitals too
    passenger = json.dumps({"passengers": [{"first_name": "MIA", "last_name": "KIM"}]})
    c.messages[4] = Message("tool", passenger[:-1] + ", " + booking[1:], call_id="k2")
    out = redact_conversation(c, seed=2).conversation
    assert "MIA" not in json.dumps([m.content for m in out.messages])


def test_a_reused_call_id_keeps_each_result_with_its_own_call():
    # the airline logs reuse call ids: each result answers the latest call with its id
    profile = json.dumps({"first_name": "Ana", "last_name": "Diaz", "email": "ana@example.com"})
    first = LoggedCall("k", "get_user_details", {"user_id": "ana_diaz_1234"}, profile)
    second = LoggedCall("k", "calculate", {"expression": "1 + 2"}, "3.0")
    c = conv(
        [
            Message("customer", "hi, I'm Ana Diaz"),
            Message("assistant", "", [first]),
            Message("tool", profile, call_id="k"),
            Message("assistant", "", [second]),
            Message("tool", "3.0", call_id="k"),
        ]
    )
    out = redact_conversation(c).conversation
    lookup, calc = out.messages[1].calls[0], out.messages[3].calls[0]
    assert lookup.result == out.messages[2].content
    assert json.loads(lookup.result)["email"] != "ana@example.com"
    assert calc.result == "3.0"


def test_scrub_text_replaces_what_detectors_find():
    assert "bob@example.com" not in scrub_text("ticket-bob@example.com")


names = st.tuples(
    st.sampled_from(["Olga", "Tomasz", "Priya", "Kwame", "Lucia", "Hiroshi", "Amara", "Dmitri"]),
    st.sampled_from(["Kowalski", "Okafor", "Ramirez", "Nakamura", "Lindqvist", "Haddad"]),
)


@settings(max_examples=40, deadline=None)
@given(
    name=names,
    number=st.integers(1000, 9999),
    house=st.integers(1, 9999),
    street=st.sampled_from(["Oak", "Birch", "Hillcrest", "Lakeview"]),
    kind=st.sampled_from(["Street", "Avenue", "Road", "Lane"]),
    city=st.sampled_from(["Austin", "San Antonio", "Fort Worth", "Erie", "New York", "Mobile"]),
)
@example(
    name=("Amara", "Kowalski"), number=3610, house=1, street="Oak", kind="Street", city="Austin"
)
@example(  # Faker's street Ramirez Spur was drawn for the street of a Ramirez
    name=("Olga", "Ramirez"), number=1118, house=1, street="Oak", kind="Street", city="Austin"
)
def test_property_no_raw_value_survives(name, number, house, street, kind, city):
    first, last = name
    email = f"{first.lower()}.{last.lower()}{number % 97}@example.org"
    phone = f"({200 + number % 700}) 555-{number:04d}"
    address = f"{house} {street} {kind}"
    uid = f"{first.lower()}_{last.lower()}_{number}"
    zip_code = f"{number * 7 % 100000:05d}"
    profile = json.dumps(
        {
            "name": {"first_name": first, "last_name": last},
            "email": email,
            "phone": phone,
            "address": {"address1": address, "city": city, "zip": zip_code},
            "user_id": uid,
        }
    )
    call = LoggedCall("k", "get_user_details", {"user_id": uid}, profile)
    c = conv(
        [
            Message("customer", f"I'm {first}, user id {uid}, reach me at {phone} or {email}"),
            Message("assistant", "", [call]),
            Message("tool", profile, call_id="k"),
            Message("assistant", f"Thanks {first} {last}, shipping to {address}."),
            Message("customer", f"Yes, {city.upper()}, zip {zip_code}; {city.lower()} it is."),
        ],
        conv_id=f"c-{number}",
    )
    out = redact_conversation(c, seed=0).conversation
    blob = json.dumps([[m.content, [x.arguments for x in m.calls]] for m in out.messages]).lower()
    for raw in (email, phone, address, uid):
        assert raw.lower() not in blob
    for raw in (first, last, city, zip_code):  # as a word: the surrogate Tamara is not Amara
        assert re.search(rf"\b{raw.lower()}\b", blob) is None


def test_long_texts_seen_again_are_searched_for_the_needles_they_hold():
    """Long instructions repeated in every conversation: from the second one on, only the
    needles made of words they hold are searched for, with the same replacements."""
    padding = "Follow the policy. " * 120
    outputs = []
    for n in range(3):
        instructions = f"{padding}Escalate to ana.diaz@example.com or call Diaz (ANA) at end."
        c = conv(
            [
                Message("system", instructions),
                Message("customer", "Hi, my name is Ana Diaz."),
                Message("customer", "my name is Bo Li, write to ana.diaz@example.com"),
            ],
            conv_id=f"c-{n}",  # the same words (so the same surrogates) under another id
        )
        red = redact_conversation(c, seed=1).conversation
        outputs.append(red.messages[0].content)
        assert "ana.diaz@example.com" not in red.messages[0].content
        assert "Diaz" not in red.messages[0].content and "ANA" not in red.messages[0].content
        assert red.messages[0].content.startswith(padding)
    assert outputs[0] == outputs[1] == outputs[2]


def test_shipped_pools_are_what_faker_draws():
    """The pools shipped for the default seed are Faker's draw; after a Faker upgrade changes
    it, `casemill.mining.redact.surrogates.write_shipped()` writes them afresh."""
    for seed in SHIPPED:
        assert pools(seed) == draw(seed)
    assert pools(7) == draw(7) != pools(0)


def test_drawn_pools_do_not_change_with_the_calendar(monkeypatch):
    """Dates of birth are drawn as of a fixed day: on another day the same seed gives the same
    surrogates (Faker's own `date_of_birth` counts back from today)."""
    import datetime as dt

    import faker.providers.date_time as faker_dates

    today = draw(3)

    class Later(dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return dt.datetime(2031, 3, 1, tzinfo=tz)

    monkeypatch.setattr(faker_dates, "datetime", Later)
    assert draw(3) == today


def test_surrogate_zip_codes_start_with_0_only_where_the_raw_ones_do():
    """So that a zip code written as a JSON number stays a valid number once replaced."""
    from casemill.mining.redact.surrogates import Surrogates

    s = Surrogates(0, "c-zip")
    raws = [f"{n:05d}" for n in range(10000, 10300)]
    got = [s.postcode(raw, frozenset(raws)) for raw in raws]
    assert len(set(got)) == len(raws) and not set(got) & set(raws)
    assert all(re.fullmatch(r"[1-9]\d{4}", z) for z in got)
    assert any(z.startswith("0") for z in pools(0).postcode)  # so the rule is needed
    assert re.fullmatch(r"\d{9}", s.postcode("123456789", frozenset()))
    assert re.fullmatch(r"\d{5} \d{4}", s.postcode("12345 6789", frozenset()))
    four = [s.postcode(f"{n}", frozenset()) for n in range(2000, 2200)]  # Australia's shape
    assert all(re.fullmatch(r"[1-9]\d{3}", z) for z in four) and len(set(four)) == len(four)
    assert re.fullmatch(r"\d{4}", s.postcode("0800", frozenset()))


def test_a_street_surrogate_never_holds_a_raw_unit_of_the_conversation(monkeypatch):
    """Faker's street lines can carry a unit (3028 Thompson Vista Suite 494): one that holds the
    conversation's own raw unit would show it. With only such a street line and a clean one in
    the pool, the clean one is picked for every raw street line."""
    import dataclasses

    from casemill.mining.redact import surrogates

    shipped = surrogates.pools(0)
    street = ("3028 Thompson Vista Suite 494", "7 Elm Row")
    narrow = dataclasses.replace(shipped, street=street)
    monkeypatch.setattr(surrogates, "pools", lambda seed: narrow)
    picked = set()
    for number in range(1, 21):
        record = {"address": {"address1": f"{number} Chestnut Street", "address2": "Suite 494"}}
        messages = [
            Message("assistant", calls=[LoggedCall("c1", "get_user_details", {"user_id": "u"})]),
            Message("tool", json.dumps(record), call_id="c1"),
        ]
        red = redact_conversation(conv(messages, conv_id=f"c-{number}"), seed=0)
        result = red.conversation.messages[1].content
        assert "suite 494" not in result.lower(), result
        picked.add(json.loads(result)["address"]["address1"])
    assert picked == {"7 Elm Row"}
