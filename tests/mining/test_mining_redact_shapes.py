"""Redaction of the shapes real logs hold personal data in: field names in other cases and
spellings, numbers, keys, records serialised into strings, phone and card formats, names in
other scripts, names that are everyday words, and quarantined records' ids."""

from __future__ import annotations

import json

from casemill.mining.model import Conversation, LoggedCall, Message, Quarantined
from casemill.mining.pipeline import MineOptions, _scrubbed
from casemill.mining.redact.detect import scan
from casemill.mining.redact.redactor import redact_conversation


def conv(messages: list[Message], conv_id: str = "c-1") -> Conversation:
    return Conversation(
        id=conv_id, messages=messages, file="f.jsonl", line=1, format="openai-jsonl"
    )


def with_result(result: dict, arguments: dict | None = None, said: str = "hi") -> Conversation:
    call = LoggedCall("k1", "get_profile", arguments or {"account": "A1"}, json.dumps(result))
    return conv(
        [
            Message("customer", said),
            Message("assistant", "", [call]),
            Message("tool", call.result or "", call_id="k1"),
            Message("assistant", "done"),
        ]
    )


def everything(c: Conversation) -> str:
    """Every text of a redacted conversation, its id and its calls' arguments and results."""
    parts = [c.id]
    for m in c.messages:
        parts.append(m.content)
        for call in m.calls:
            parts += [json.dumps(call.arguments, ensure_ascii=False), call.result or ""]
    return "\n".join(parts)


def test_fields_in_camel_case_and_other_spellings_are_redacted():
    profile = {
        "customerId": "cus_88123",
        "firstName": "Zebulon",
        "lastName": "Quackenbush",
        "phoneNumber": "5559871234",
        "dateOfBirth": "1984-07-19",
        "address_line_1": "77 Sunset Vista",
        "username": "zquack88",
        "cardholder_name": "Ottoline Featherstonehaugh",
        "shipping_address": "12 Maple Crossing, Springfield",
        "customer": {"name": "Bartholomew Higginbottom"},
    }
    red = redact_conversation(with_result(profile), seed=0)
    out = everything(red.conversation)
    for raw in (
        "cus_88123",
        "Zebulon",
        "Quackenbush",
        "5559871234",
        "1984-07-19",
        "77 Sunset Vista",
        "zquack88",
        "Ottoline",
        "Featherstonehaugh",
        "12 Maple Crossing",
        "Bartholomew",
        "Higginbottom",
    ):
        assert raw not in out, raw
    result = json.loads(red.conversation.messages[2].content)
    assert set(result) == set(profile)  # the keys stay, the record stays JSON
    assert red.counts["name"] >= 6 and red.counts["user_id"] >= 2


def test_a_line_item_name_is_not_a_persons_name():
    item = {"items": [{"name": "Glass vase", "price": 32.0}], "customer": {"id": "x"}}
    red = redact_conversation(with_result(item), seed=0)
    assert json.loads(red.conversation.messages[2].content) == item


def test_personal_data_written_as_json_numbers_is_redacted_and_stays_a_number():
    account = {"user_id": 987654, "phone": 5553334444, "card_number": 4111111111111111}
    said = "my phone is 555-333-4444 and I am customer 987654"
    red = redact_conversation(with_result(account, {"phone": 5553334444}, said), seed=0)
    out = everything(red.conversation)
    for raw in ("987654", "5553334444", "4111111111111111", "555-333-4444"):
        assert raw not in out, raw
    result = json.loads(red.conversation.messages[2].content)
    assert all(type(v) is int for v in result.values())
    assert all(len(str(result[k])) == len(str(account[k])) for k in account)
    call = red.conversation.messages[1].calls[0]
    assert call.arguments == {"phone": result["phone"]}  # the same surrogate everywhere
    # the number typed with separators is the same phone: the same digits stand in for it
    phone = str(result["phone"])
    typed = red.conversation.messages[0].content
    assert f"({phone[:3]}) {phone[3:6]}-{phone[6:]}" in typed
    assert str(result["user_id"]) in typed


def test_an_id_of_a_few_digits_is_left_so_amounts_and_quantities_stay():
    red = redact_conversation(with_result({"customer_id": 42}, said="42 mugs at $42.00"), 0)
    assert red.conversation.messages[0].content == "42 mugs at $42.00"
    assert json.loads(red.conversation.messages[2].content) == {"customer_id": 42}


def test_personal_data_used_as_a_key_is_redacted():
    result = {"users": {"zed.keyed@example.com": {"plan": "pro"}, "+1 (555) 777-8888": "vip"}}
    red = redact_conversation(with_result(result, {"arg.keyed@example.com": True}), seed=0)
    out = everything(red.conversation)
    for raw in ("zed.keyed@example.com", "(555) 777-8888", "arg.keyed@example.com"):
        assert raw not in out, raw
    users = json.loads(red.conversation.messages[2].content)["users"]
    assert len(users) == 2 and {"plan": "pro"} in users.values()


def test_records_serialised_into_strings_and_python_literals_are_redacted():
    inner = {"first_name": "Philippa", "last_name": "Throckmorton", "phone": "555-000-1111"}
    red = redact_conversation(with_result({"payload": json.dumps(inner)}), seed=0)
    out = everything(red.conversation)
    for raw in ("Philippa", "Throckmorton", "555-000-1111"):
        assert raw not in out, raw
    payload = json.loads(json.loads(red.conversation.messages[2].content)["payload"])
    assert set(payload) == set(inner)

    call = LoggedCall("k1", "get_note", {}, str({"first_name": "Annabel", "city": "Austin"}))
    literal = conv([Message("customer", "hi"), Message("assistant", "", [call])])
    literal.messages.append(Message("tool", call.result or "", call_id="k1"))
    red = redact_conversation(literal, seed=0)
    assert "Annabel" not in everything(red.conversation)
    assert "Austin" not in everything(red.conversation)


def test_phone_numbers_in_the_formats_customers_write_them():
    said = {
        "call +15558675309": "+15558675309",
        "or +442079460999 please": "+442079460999",
        "ring 1-555-234-5678": "1-555-234-5678",
        "my UK number 020 7946 0111": "020 7946 0111",
        "Berlin office +49 30 1234567": "+49 30 1234567",
        "reach me at 1 (555) 234-5678": "1 (555) 234-5678",
        "phone 555-123-\n4567 thanks": "555-123-\n4567",
    }
    for text, phone in said.items():
        assert [v for k, v in scan(text) if k == "phone"] == [phone], text
    # groups of digits that are not a phone number: too few digits, a date and a time
    for text in ("10 20 30", "on 2024-05-20 10:30", "item 7751905257", "v1.555.234.5678"):
        assert [v for k, v in scan(text) if k == "phone"] == [], text


def test_card_numbers_after_a_dot_or_hyphen_and_across_lines():
    said = {
        "Card No.4012888888881881 ok": "4012888888881881",
        "cc-6011111111111117 ok": "6011111111111117",
        "card 4111 1111 1111\n1111 ok": "4111 1111 1111\n1111",
    }
    for text, card in said.items():
        assert [v for k, v in scan(text) if k == "card"] == [card], text
    assert [v for k, v in scan("ref.4012888888881882") if k == "card"] == []  # not Luhn


def test_a_card_wrapped_across_lines_is_not_rebuilt_in_clear_by_the_case():
    from casemill.mining.derive.cases import derive_cases

    said = "Refund W1 to card 4111 1111 1111\n1111 please"
    call = LoggedCall("k1", "refund", {"order_id": "W1"}, '{"ok": true}')
    c = conv(
        [
            Message("customer", said),
            Message("assistant", "", [call]),
            Message("tool", '{"ok": true}', call_id="k1"),
            Message("assistant", "Refunded."),
        ]
    )
    c.resolved = True
    red = redact_conversation(c, seed=0).conversation
    for case in derive_cases(red).cases:
        dumped = case.model_dump_json()
        assert "4111" not in dumped and "1111 1111" not in dumped


def test_emails_and_street_types_beyond_ascii_and_the_common_suffixes():
    found = set(scan("mail josé@exámple.com or visit 1 Infinite Loop, or 77 Sunset Vista"))
    assert found == {
        ("email", "josé@exámple.com"),
        ("address", "1 Infinite Loop"),
        ("address", "77 Sunset Vista"),
    }
    # the other street types are ordinary words: only written capitalised are they one
    assert list(scan("I ordered 2 things at the old mill loop")) == []


def test_names_after_family_words_and_in_other_scripts():
    said = {
        "My wife Gertrude Pennyworth ordered it": "Gertrude Pennyworth",
        "my name is Łukasz Żółkiewski": "Łukasz Żółkiewski",
        "I'm 王伟, thanks": "王伟",
        "a courier named Olga came": "Olga",
    }
    for text, name in said.items():
        assert [v for k, v in scan(text) if k == "name"] == [name], text
    for text in ("I'm OK, this is URGENT", "my son is happy", "Mrs. smith"):
        assert [v for k, v in scan(text) if k == "name"] == [], text


def test_a_name_that_is_a_word_is_replaced_only_where_written_as_a_name():
    profile = {"first_name": "Will", "last_name": "Price", "email": "w.p@example.com"}
    said = "Hi, this is Will Price. I will need the price of W1 changed."
    red = redact_conversation(with_result(profile, said=said), seed=0)
    text = red.conversation.messages[0].content
    assert "Will" not in text and "Price" not in text
    assert "I will need the price of W1 changed." in text
    assert set(json.loads(red.conversation.messages[2].content)) == set(profile)


def test_a_quarantined_records_id_is_scrubbed_with_what_the_record_holds():
    record = {
        "conversation_id": "Margaret Thistlewood 5551230000",
        "messages": [
            {"role": "tool", "content": '{"first_name": "Margaret", "last_name": "Thistlewood"}'},
            {"role": "user", "content": "my phone is 5551230000"},
        ],
    }
    item = Quarantined(
        file="f.jsonl",
        line=2,
        reason="orphan_tool_result",
        message="a tool result whose call does not appear before it",
        conversation_id=record["conversation_id"],
    ).with_record(record)
    scrubbed = _scrubbed(item, MineOptions()).conversation_id
    assert scrubbed is not None
    for raw in ("Margaret", "Thistlewood", "5551230000"):
        assert raw not in scrubbed
    assert "_record" not in _scrubbed(item, MineOptions()).model_dump_json()
    assert _scrubbed(item, MineOptions(redact=False)).conversation_id == record["conversation_id"]


def test_the_street_types_cover_fakers_us_street_suffixes():
    """The surrogates are Faker's US addresses: every street type they end in is one the address
    detector knows (the common ones in any case, the others capitalised)."""
    from faker.providers.address.en_US import Provider

    from casemill.mining.redact import places

    known = {t.lower() for t in places.STREET_TYPES.split("|")}
    titled = set(places.TITLED_STREET_TYPES.split("|"))
    assert {s for s in Provider.street_suffixes if s.lower() not in known} <= titled
