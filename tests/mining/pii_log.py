"""A seeded log of support conversations holding personal data of the kinds real logs have, in
every place a log holds it (text, known keys, keys the field list does not know, nested values,
conversation ids, system prompts): `pii_log` gives the records and every personal value in them."""

from __future__ import annotations

import json
import random
import unicodedata
from dataclasses import dataclass, field

from mining_helpers import call_msg, chat, result_msg
from stdnum import iban, luhn

# (first, last): accented, hyphenated and apostrophe names among them; surnames rare enough
# that no surrogate pool holds them
PEOPLE = [
    ("Siobhán", "O'Sullivan"), ("Philippa", "Drinkwater"), ("José", "García-López"),
    ("Zoë", "Featherstonehaugh"), ("Søren", "Kierkegaard-Lund"), ("Tom", "Bakerfield"),
    ("Aoife", "Ní Bhriain"), ("Matthias", "Oberhollenzer"), ("Renée", "Delacroix-Moreau"),
    ("Bartholomew", "Quigley"), ("Ingrid", "Halvorsen"), ("Lucía", "Echeverría"),
    ("Declan", "Mac Giolla"), ("Anneliese", "Wittgenstein"), ("Ottilie", "Ravenscroft"),
    ("Ciarán", "Ó Briain"), ("Hedwig", "Spannagel"), ("Florian", "Zwischenbrugger"),
]  # fmt: skip
THIRD = [
    ("Philippa", "Drinkwater"), ("Tom", "Baker"), ("Imogen", "Applethwaite"),
    ("Rupert", "Wolstenholme"), ("Gwendolyn", "Pettigrew"), ("Cornelius", "Blackwood"),
    ("Henrietta", "Marchbanks"), ("Percival", "Thistlewood"), ("Beatrix", "Fenwick-Hale"),
    ("Ambrose", "Lockwood"), ("Winifred", "Oglethorpe"), ("Barnaby", "Clutterbuck"),
]  # fmt: skip
MONTHS = "January February March April May June July August September October November December"


def folded(word: str) -> str:
    """A name as squashed into an id or an email (`O'Sullivan`: `osullivan`)."""
    plain = unicodedata.normalize("NFKD", word)
    return "".join(c for c in plain if c.isalnum() and not unicodedata.combining(c)).lower()


@dataclass
class Log:
    records: list[dict] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)  # personal value -> its kind
    cards: list[tuple[str, str]] = field(default_factory=list)  # (conversation id, card)

    def v(self, kind: str, value: str) -> str:
        self.values[value] = kind
        return value


def _iban(rng: random.Random, country: str, spaced: bool) -> str:
    if country == "GB":
        bban = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(4))
        bban += "".join(rng.choice("0123456789") for _ in range(14))
    else:
        bban = "".join(rng.choice("0123456789") for _ in range(18))
    value = f"{country}{iban.calc_check_digits(f'{country}00{bban}')}{bban}"
    assert iban.is_valid(value)
    return " ".join(value[i : i + 4] for i in range(0, len(value), 4)) if spaced else value


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _card(rng: random.Random) -> str:
    head = "4" + _digits(rng, 14)
    return head + luhn.calc_check_digit(head)


def _ssn(rng: random.Random) -> str:
    return f"{rng.randint(100, 665)}-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}"


def _sin(rng: random.Random) -> str:
    head = str(rng.randint(1, 7)) + _digits(rng, 7)
    value = head + luhn.calc_check_digit(head)
    return f"{value[:3]} {value[3:6]} {value[6:]}"


def _nino(rng: random.Random) -> str:
    return f"{rng.choice('ACEHJLMRSW')}{rng.choice('ABEHKLMPRT')} {_digits(rng, 2)} " + (
        f"{_digits(rng, 2)} {_digits(rng, 2)} {rng.choice('ABCD')}"
    )


def _ipv4(rng: random.Random) -> str:
    return (
        f"{rng.randint(11, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    )


def _ipv6(rng: random.Random) -> str:
    return f"2a02:{rng.randint(4096, 65535):x}:{rng.randint(4096, 65535):x}::{rng.randint(4096, 65535):x}"


def conversation(log: Log, rng: random.Random, n: int) -> dict:
    """One conversation holding about 20 personal values of every kind, in every place."""
    v = log.v
    first, last = PEOPLE[n % len(PEOPLE)]
    third_first, third_last = THIRD[n % len(THIRD)]
    other_first, other_last = THIRD[(n + 5) % len(THIRD)]
    conv_id = v("id", f"conv-{folded(first)}-{folded(last)}-{n:03d}")
    full, third, other = (
        f"{first} {last}",
        f"{third_first} {third_last}",
        f"{other_first} {other_last}",
    )
    v("name", full), v("name", third), v("name", other)
    ip4, ip6, ip_text = v("ip", _ipv4(rng)), v("ip", _ipv6(rng)), v("ip", _ipv4(rng))
    gb, de = v("iban", _iban(rng, "GB", n % 2 == 0)), v("iban", _iban(rng, "DE", n % 2 == 1))
    account = v("account", _digits(rng, 8))
    passport, nested_passport = (
        v("passport", f"{rng.choice('CKX')}{_digits(rng, 8)}"),
        v("passport", _digits(rng, 9)),
    )
    ssn, sin, nino = v("ssn", _ssn(rng)), v("sin", _sin(rng)), v("nino", _nino(rng))
    year, month, day = rng.randint(1940, 2000), rng.randint(1, 12), rng.randint(13, 28)
    dob_forms = [f"{month:02d}/{day:02d}/{year}", f"{day}/{month:02d}/{year}",
                 f"{MONTHS.split()[month - 1]} {day}, {year}"]  # fmt: skip
    dob_text = v("dob", dob_forms[n % 3])
    dob_key = v("dob", f"{year - 1}-{month:02d}-{day:02d}")
    obf1 = v("email", f"{folded(first)}(at)web.de")
    obf2 = v("email", f"{folded(first)[0]} dot {folded(last)} at gmail dot com")
    card = v("card", _card(rng))
    log.cards.append((conv_id, card))
    v("last4", f"card ending {card[-4:]}")
    profile = {
        "name": full,
        "email": v("email", f"{folded(first)}.{folded(last)}@example.org"),
        "passport_no": passport,
        "registered_ip": ip6,
        "born": dob_key,
        "iban": de,
        "account": account,
        "emergency_contact": {"passport": nested_passport, "relation": "sister"},
        "contact": {"full": other},
        "payment_methods": [{"id": f"pm_{n}", "kind": "card", "number": card, "last4": card[-4:]}],
    }
    transfer = {"holder": full, "recipient": third, "who": other, "beneficiary_name": third,
                "from_ip": ip_text, "amount": 125.5 + n, "order_id": f"#W{4100000 + n}"}  # fmt: skip
    messages = [
        {"role": "system", "content": f"Support session. Customer connected from {ip4}."},
        {"role": "user", "content": (
            f"hi, {folded(first)} {folded(last)} here. I was born on {dob_text}. my ssn is {ssn} "
            f"and my SIN is {sin}; my NI number is {nino}. Please send it to {third}, it's "
            f"under {other}'s name. IBAN {gb}. You can mail {obf1} or {obf2}. My IP is "
            f"{ip_text}. Charge the card ending {card[-4:]}, $125.50 for flight HAT{170 + n} "
            f"JFK to SFO on 2024-05-{10 + n % 18:02d}."
        )},
        call_msg(f"{conv_id}-1", "get_profile", {"customer": full, "passport_no": passport}),
        result_msg(f"{conv_id}-1", json.dumps(profile, ensure_ascii=n % 2 == 0)),
        call_msg(f"{conv_id}-2", "send_transfer", transfer),
        result_msg(f"{conv_id}-2", json.dumps({"status": "sent", **transfer})),
        {"role": "assistant", "content": f"Done: ${125.5 + n:.2f} sent to {third}, card ending {card[-4:]}."},
    ]  # fmt: skip
    return chat(conv_id, messages)


def pii_log(seed: int = 26, count: int = 30) -> Log:
    rng = random.Random(seed)
    log = Log()
    for n in range(count):
        log.records.append(conversation(log, rng, n))
    return log
