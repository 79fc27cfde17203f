"""A log seeded with personal data of every kind, mined through the CLI: no seeded value appears
in any output (byte for byte), the raw values reach only the --keep-raw file, and the mined
support cases stay coherent (ids exist, semantic checks and replay pass)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mining_helpers import call_msg, chat, result_msg, write_jsonl
from typer.testing import CliRunner

from casemill.case.model import Case, Environment
from casemill.cli import app
from casemill.domains.support.sandbox import SupportSandbox
from casemill.mining.output import mine_to_files
from casemill.mining.pipeline import MineOptions
from casemill.mining.synthetic import model_calls
from casemill.validation.semantic import semantic_findings

NAME, FIRST, LAST = "Ingrid Vasquez", "Ingrid", "Vasquez"
EMAIL = "ingrid.vasquez77@example.com"
PHONE = "(415) 555-0187"
CARD = "4539 1488 0343 6467"
STREET, UNIT = "742 Evergreen Terrace", "Apt 12"
NEW_STREET = "88 Maple Avenue"
CUSTOMER = "C1042"
ACCOUNT = "ingrid_vasquez_4821"
CITY, ZIP = "Springfield", "62701"
PAYMENT = "pm_7Qx83KdLw2"  # an opaque payment-method token
GIFT_CARD = "gift_card_8190333"  # a payment method's id in the tau-bench shape, typed
NEW_CITY, NEW_ZIP = "Madison", "53703-2417"  # a ZIP+4
SEEDED = [NAME, FIRST, LAST, EMAIL, PHONE, CARD, STREET, NEW_STREET, CUSTOMER, ACCOUNT]
SEEDED += [CITY, ZIP, NEW_CITY, NEW_ZIP, NEW_ZIP[:5], PAYMENT, GIFT_CARD]

ADDRESS = {
    "street1": STREET,
    "street2": UNIT,
    "city": CITY,
    "state": "IL",
    "zip": ZIP,
    "country": "US",
}
STATE = {
    "customers": {
        CUSTOMER: {
            "id": CUSTOMER,
            "name": NAME,
            "email": EMAIL,
            "phone": PHONE,
            "address": ADDRESS,
            "payment_methods": [{"id": PAYMENT, "kind": "card", "last4": "6467"}],
        }
    },
    "orders": {
        "W2001": {
            "id": "W2001",
            "customer_id": CUSTOMER,
            "status": "delivered",
            "items": [
                {"item_id": "I1", "name": "Ceramic mug 12oz", "price": 14.5},
                {"item_id": "I2", "name": "Desk lamp", "price": 45.25},
            ],
            "address": ADDRESS,
            "payment_method_id": PAYMENT,
        },
        "W2002": {
            "id": "W2002",
            "customer_id": CUSTOMER,
            "status": "processing",
            "items": [{"item_id": "I1", "name": "Wool blanket", "price": 64.75}],
            "address": ADDRESS,
            "payment_method_id": PAYMENT,
        },
        "W2003": {
            "id": "W2003",
            "customer_id": CUSTOMER,
            "status": "pending",
            "items": [{"item_id": "I1", "name": "Glass vase", "price": 32.0}],
            "address": ADDRESS,
            "payment_method_id": PAYMENT,
        },
    },
}


def _played(conv_id: str, steps: list) -> dict:
    """A conversation whose tool results come from the simulator."""
    sandbox = SupportSandbox(Environment(state=STATE))
    messages = [
        {"role": "system", "content": f"Authenticated customer: {CUSTOMER} ({NAME}, {EMAIL})"}
    ]
    for n, step in enumerate(steps):
        if isinstance(step, tuple):
            tool, params = step
            messages.append(call_msg(f"{conv_id}-{n}", tool, params))
            messages.append(result_msg(f"{conv_id}-{n}", sandbox.call(tool, params).as_text()))
        else:
            messages.append(step)
    return chat(conv_id, messages)


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _agent(text: str) -> dict:
    return {"role": "assistant", "content": text}


def seeded_log(path: Path) -> Path:
    new_address = {"street1": NEW_STREET, "city": NEW_CITY, "state": "WI", "zip": NEW_ZIP}
    records = [
        _played(
            "pii-refund",
            [
                _user(
                    f"Hi, my name is {NAME}. The mug in W2001 arrived cracked. My account is "
                    f"{ACCOUNT} and you can call me on {PHONE}. My zip is {ZIP}, in "
                    f"{CITY.upper()}."
                ),
                ("get_customer", {"customer_id": CUSTOMER}),
                ("get_order", {"order_id": "W2001"}),
                _agent(f"Sorry {FIRST}! I can refund the mug, $14.50. Go ahead?"),
                _user("yes"),
                ("refund_items", {"order_id": "W2001", "item_ids": ["I1"], "reason": "damaged"}),
                _agent(f"Refunded $14.50, Ms {LAST}. A receipt goes to {EMAIL}."),
            ],
        ),
        _played(
            "pii-address",
            [
                _user(
                    f"Please send W2003 to {NEW_STREET}, {NEW_CITY}, WI {NEW_ZIP} instead of "
                    f"{STREET}, {UNIT}, {CITY} {ZIP}. I moved to {NEW_CITY.lower()}."
                ),
                ("get_order", {"order_id": "W2003"}),
                ("change_shipping_address", {"order_id": "W2003", "address": new_address}),
                _agent(f"Done, it will go to {NEW_CITY}."),
            ],
        ),
        _played(
            "pii-cancel",
            [
                _user(
                    f"Cancel W2002. Charge the fee to my card {CARD} or {GIFT_CARD} if there is one. "
                    f"{NAME.lower()}"
                ),
                ("get_order", {"order_id": "W2002"}),
                ("cancel_order", {"order_id": "W2002"}),
                _agent("Order W2002 is cancelled; please never send full card numbers."),
            ],
        ),
        json.dumps(chat("pii-broken", [_user(f"I am {NAME}, {EMAIL}")])).encode()[:60],
        f"{NAME} {EMAIL} {PHONE} {CARD} not json".encode(),
        chat("pii-role", [_user(f"{NAME} here"), {"role": "wizard", "content": f"{EMAIL} {CARD}"}]),
        chat(f"conv-{EMAIL}", [_user("hi"), {"role": "moderator", "content": "x"}]),
    ]
    return write_jsonl(path, records)


def test_no_seeded_value_reaches_any_output_and_cases_stay_coherent(tmp_path):
    log = seeded_log(tmp_path / "seeded.jsonl")
    out, quarantine, raw = tmp_path / "out.jsonl", tmp_path / "q.jsonl", tmp_path / "raw.jsonl"
    result = CliRunner().invoke(
        app,
        [
            "mine",
            str(log),
            "--format",
            "openai-jsonl",
            "-o",
            str(out),
            "--quarantine",
            str(quarantine),
            "--keep-raw",
            str(raw),
            "--json",
        ],
    )
    assert result.exit_code == 1, result.output  # records were quarantined
    summary = json.loads(result.stdout)
    assert summary["quarantined"] == {"invalid_json": 1, "truncated": 1, "unknown_role": 2}
    assert set(summary["redactions"]) >= {
        *("email", "phone", "card", "address", "name", "user_id", "postcode", "city", "payment")
    }

    outputs = {
        "candidates": out.read_bytes(),
        "quarantine": quarantine.read_bytes(),
        "summary": result.stdout.encode(),
    }
    for where, data in outputs.items():
        lowered = data.lower()
        for value in SEEDED:
            assert value.encode() not in data, f"{value!r} leaked into the {where}"
            assert value.lower().encode() not in lowered, f"{value!r} (any case) in the {where}"
        digits = CARD.replace(" ", "").encode()
        assert digits not in data.replace(b" ", b"")
    kept = raw.read_text()
    for value in (
        NAME.split()[0].lower(),
        EMAIL,
        PHONE,
        CARD,
        STREET,
        NEW_STREET,
        CUSTOMER,
        ACCOUNT,
        PAYMENT,
        GIFT_CARD,
    ):
        assert value.lower() in kept.lower(), f"{value!r} missing from the --keep-raw file"
    kept_kinds = {(r["kind"], r["raw"]) for r in map(json.loads, kept.splitlines())}
    assert kept_kinds >= {
        *(("postcode", ZIP), ("postcode", NEW_ZIP), ("city", CITY), ("city", NEW_CITY))
    }

    cases = [Case.model_validate_json(line) for line in out.read_text().splitlines()]
    assert {c.provenance.source.conversation_id for c in cases} == {
        "pii-refund",
        "pii-address",
        "pii-cancel",
    }
    assert all(c.domain == "support" for c in cases)
    for case in cases:
        assert semantic_findings(case) == [], case.provenance.source
        assert case.provenance.label_confidence == "high"
        assert case.review.status == "pending"
    refund = next(c for c in cases if c.provenance.source.conversation_id == "pii-refund")
    customer_id = next(iter(refund.environment.state["customers"]))
    assert customer_id != CUSTOMER and customer_id.startswith("C")
    assert refund.conversation[0].content.startswith(f"Authenticated customer: {customer_id} (")
    assert refund.environment.state["orders"]["W2001"]["customer_id"] == customer_id
    # the order's payment method is the customer's, under a surrogate of the token's shape
    (method,) = refund.environment.state["customers"][customer_id]["payment_methods"]
    assert refund.environment.state["orders"]["W2001"]["payment_method_id"] == method["id"]
    assert re.fullmatch(r"[a-z]{2}_\d[A-Z][a-z]\d\d[A-Z][a-z][A-Z][a-z]\d", method["id"])
    cancel = next(c for c in cases if c.provenance.source.conversation_id == "pii-cancel")
    assert re.search(r" or gift_card_\d{7} if there is one", cancel.conversation[1].content)
    address = next(
        c
        for c in cases
        if c.provenance.source.conversation_id == "pii-address"
        and c.provenance.operators[0].name == "decision_point"
    )
    new = address.expected.tool_calls[0].params["address"]
    typed = address.conversation[1].content
    # same surrogates in text and params, in the shape and case of the raw values; state kept
    assert f"{new['street1']}, {new['city']}, WI {new['zip']} instead of" in typed
    assert typed.endswith(f"I moved to {new['city'].lower()}.")
    assert re.fullmatch(r"\d{5}-\d{4}", new["zip"]) and new["state"] == "WI"
    assert address.expected.reply_contains == (new["city"],)
    home = address.environment.state["orders"]["W2003"]["address"]
    assert re.fullmatch(r"\d{5}", home["zip"]) and (home["state"], home["country"]) == ("IL", "US")
    assert f"{home['city']} {home['zip']}. I moved" in typed
    profile = refund.environment.state["customers"][customer_id]["address"]
    said = f"My zip is {profile['zip']}, in {profile['city'].upper()}."
    assert said in refund.conversation[1].content


def test_redaction_off_keeps_values_and_says_so(tmp_path):
    log = seeded_log(tmp_path / "seeded.jsonl")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        app, ["mine", str(log), "-f", "openai-jsonl", "-o", str(out), "--no-redact", "--json"]
    )
    assert result.exit_code == 1, result.output  # the seeded log's bad records were quarantined
    assert json.loads(result.stdout)["redacted"] is False
    assert EMAIL.encode() in out.read_bytes()


# Keys of the benchmark logs' profile, passenger and order records that hold personal data:
# names and cities (compared ignoring case, as whole words), zip codes (as whole tokens: a zip
# is also a piece of a longer number), and values compared byte for byte.
_NAME_KEYS = ("first_name", "last_name", "city")
_TOKEN_KEYS = ("zip",)
_VALUE_KEYS = ("email", "user_id", "address1", "address2", "dob")


def _personal(value: object, names: set[str], values: set[str], tokens: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(item, str) or not item:
                _personal(item, names, values, tokens)
            elif key in _NAME_KEYS:
                names.add(item)
            elif key in _TOKEN_KEYS:
                tokens.add(item)
            elif key in _VALUE_KEYS:
                values.add(item)
                if key == "user_id":  # tau-bench ids are made of the person's names
                    names.update(item.split("_")[:2])
    elif isinstance(value, list):
        for item in value:
            _personal(item, names, values, tokens)


def _json_of(text: str | None) -> object:
    text = (text or "").strip()
    if text[:1] not in ("{", "["):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _real_values(record: dict) -> tuple[set[str], set[str], set[str]]:
    """The names and cities, other personal values, and zip codes of one log record's
    structured parts (tool results and arguments; for a transcript, its `tool:` lines)."""
    names: set[str] = set()
    values: set[str] = set()
    tokens: set[str] = set()
    if "messages" in record:
        texts = [m.get("content") for m in record["messages"]]
        for m in record["messages"]:
            texts += [c["function"]["arguments"] for c in m.get("tool_calls") or []]
    else:
        lines = record["messages_display"].split("\n")
        texts = [line.removeprefix("tool: ") for line in lines if line.startswith("tool: ")]
    for text in texts:
        _personal(_json_of(text), names, values, tokens)
    return names, values, tokens


@pytest.mark.shared_data
@pytest.mark.parametrize(
    "log, fmt",
    [
        ("tau-bench-airline-logs/support_logs.jsonl", "openai-jsonl"),
        ("tau-bench-retail-logs/retail_conversations.jsonl", "transcript"),
    ],
)
def test_real_logs_mined_keep_no_personal_value_of_their_conversations(
    shared_data: Path, tmp_path: Path, log: str, fmt: str
):
    """The benchmark logs mined with redaction on: no name, city, zip code, email, user id,
    street line or date of birth that a conversation's records hold appears in the cases mined
    from it (names and cities as whole words, as written, in lower case, title case or
    capitals: in text, ids and email local parts too; zip codes as whole numbers), nor in the
    quarantine. (A surrogate that is another conversation's raw value is no leak: each
    conversation is checked against its own records.)"""
    path = shared_data / log
    out = tmp_path / "out.jsonl"
    summary = mine_to_files([path], fmt, out, options=MineOptions())
    assert summary.conversations_read > 0 and sum(summary.redactions.values()) > 0
    mined: dict[int, str] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        number = json.loads(line)["provenance"]["source"]["line"]
        mined[number] = mined.get(number, "") + line
    quarantined = (tmp_path / "out.quarantine.jsonl").read_text(encoding="utf-8")
    checked = zips = 0
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        names, values, tokens = _real_values(json.loads(raw))
        cases = mined.get(number, "")
        for value in values:
            assert value not in cases and value not in quarantined, (number, value)
        for token in tokens:
            whole = rf"(?<![A-Za-z0-9]){re.escape(token)}(?![A-Za-z0-9])"
            assert not re.search(whole, cases) and not re.search(whole, quarantined), (
                number,
                token,
            )
        for name in names:
            forms = {name, name.lower(), name.title(), name.upper()}
            if re.search(rf"\b{re.escape(name.upper())}\b", raw):
                forms.discard(name.upper())  # capitals the log holds are codes (MIA: Miami)
            for form in forms:
                assert not re.search(rf"(?<![A-Za-z0-9]){re.escape(form)}(?![A-Za-z0-9])", cases), (
                    number,
                    form,
                )
        checked += len(names) + len(values) + len(tokens)
        zips += len(tokens)
    assert checked > 500 and zips > 20


def test_a_gateways_model_calls_keep_no_seeded_value_either(tmp_path):
    """The seeded conversations logged a model call a line (each line repeating the history
    and ids and flags of its own) are joined and redacted as the whole conversations are."""
    log = seeded_log(tmp_path / "seeded.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()[:3]]
    calls = [c for r in records for c in model_calls(r)]
    for n, call in enumerate(calls):  # a gateway's own fields, with personal data in them
        call["id"] = f"{EMAIL}-{n}"
        call["end_user"], call["requester_ip_address"] = NAME, "203.0.113.7"
    calls_log = write_jsonl(tmp_path / "calls.jsonl", calls)
    out, quarantine = tmp_path / "out.jsonl", tmp_path / "q.jsonl"
    args = ["mine", str(calls_log), "--format", "openai-jsonl", "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--quarantine", str(quarantine), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["conversations_read"], summary["model_calls_joined"]) == (3, len(calls))
    for where, data in {"candidates": out.read_bytes(), "summary": result.stdout.encode()}.items():
        for value in SEEDED:
            assert value.lower().encode() not in data.lower(), f"{value!r} in the {where}"
    cases = [Case.model_validate_json(line) for line in out.read_text().splitlines()]
    assert len(cases) == 6
    for case in cases:
        assert semantic_findings(case) == [], case.provenance.source
        assert EMAIL not in (case.provenance.source.conversation_id or "")
