"""The known fields of structured records (tool results, arguments) that hold personal data.

`collect` walks a record by these tables: a key's kind (`FIELD_KINDS`), the keys whose plain
string is an address, and what marks an object as a person or a payment method (so its plain
`name` or `id` is personal data too, where a line item's `name` is a product's).
"""

from __future__ import annotations

# Keys of structured records (tool results, arguments) whose string values are personal data.
FIELD_KINDS: dict[str, str] = {
    "email": "email",
    "email_address": "email",
    "phone": "phone",
    "phone_number": "phone",
    "mobile": "phone",
    "telephone": "phone",
    "mobile_number": "phone",
    "mobile_phone": "phone",
    "cell": "phone",
    "cell_phone": "phone",
    "phone_no": "phone",
    "contact_number": "phone",
    "first_name": "name",
    "last_name": "name",
    "full_name": "name",
    "customer_name": "name",
    "passenger_name": "name",
    "contact_name": "name",
    "cardholder_name": "name",
    "card_holder": "name",
    "cardholder": "name",
    "account_holder": "name",
    "recipient_name": "name",
    "given_name": "name",
    "family_name": "name",
    "surname": "name",
    "middle_name": "name",
    "username": "user_id",
    "user_name": "user_id",
    "street1": "address",
    "street2": "address",
    "address1": "address",
    "address2": "address",
    "street": "address",
    "street_address": "address",
    "line1": "address",
    "line2": "address",
    "address_line1": "address",
    "address_line2": "address",
    "address_line_1": "address",
    "address_line_2": "address",
    "street_line1": "address",
    "street_line2": "address",
    "zip": "postcode",
    "zipcode": "postcode",
    "zip_code": "postcode",
    "postal_code": "postcode",
    "postcode": "postcode",
    "post_code": "postcode",
    "city": "city",
    "town": "city",
    "user_id": "user_id",
    "customer_id": "user_id",
    "account_id": "user_id",
    "member_id": "user_id",
    "client_id": "user_id",
    "account_number": "user_id",
    "customer_number": "user_id",
    "card_number": "card",
    "card": "card",
    "card_no": "card",
    "cc_number": "card",
    "credit_card_number": "card",
    "payment_id": "payment",
    "payment_method_id": "payment",
    "dob": "dob",
    "date_of_birth": "dob",
    "birthdate": "dob",
    "birth_date": "dob",
}

# Keys whose plain string value is an address (one not serialised as JSON: a dict under them is
# a record walked on its own).
PLAIN_ADDRESS_KEYS = frozenset(
    {"address", "shipping_address", "billing_address", "home_address", "mailing_address"}
)
# Keys under which an object is a person's (`{"customer": {"name": ...}}`), so that its plain
# `name` is a person's name, as when the object holds one of `PERSON_MARKERS`.
PERSON_KEYS = frozenset(
    {
        "customer",
        "user",
        "passenger",
        "contact",
        "recipient",
        "cardholder",
        "account_holder",
        "buyer",
        "sender",
        "guest",
        "traveler",
        "traveller",
        "member",
        "profile",
    }
)

# What marks an object as a payment method, so that its `id` is a payment method's id: one of
# these keys, or one of the sources under its `source`, `kind` or `type`.
PAYMENT_MARKERS = frozenset({"last4", "last_four", "brand", "card_brand", "exp_month", "expiry"})
PAYMENT_SOURCES = frozenset(
    {"credit_card", "debit_card", "gift_card", "certificate", "paypal", "card", "bank_account"}
)


def is_payment_method(record: dict) -> bool:
    """Whether an object is a payment method (`PAYMENT_MARKERS`, `PAYMENT_SOURCES`)."""
    if not PAYMENT_MARKERS.isdisjoint(record):
        return True
    return any(
        isinstance(kind := record.get(key), str) and kind in PAYMENT_SOURCES
        for key in ("source", "kind", "type")
    )


# Keys that mark an object as a person, so that its plain `name` is a person's name (a line
# item's `name` is a product).
PERSON_MARKERS = frozenset(
    {
        "email",
        "phone",
        "phone_number",
        "dob",
        "date_of_birth",
        "payment_methods",
        "address",
        "first_name",
        "last_name",
        "membership",
        "saved_passengers",
    }
)


# Keys matched by meaning: a key not in `FIELD_KINDS` is split into its words (snake case), and
# its kind is that of the first rule whose words it holds. So `beneficiary_name`, `recipient`,
# `registered_ip`, `passport_no` and `emergency_contact_passport` are found without a list of
# every key a log may use.
_PERSON_WORDS = frozenset(
    [
        "beneficiary",
        "recipient",
        "holder",
        "who",
        "payee",
        "payer",
        "addressee",
        "sender",
        "owner",
        "contact",
        "guardian",
        "spouse",
        "kin",
        "emergency",
        "traveler",
        "traveller",
        "passenger",
        "guest",
        "customer",
        "cardholder",
        "signatory",
        "attendee",
        "patient",
    ]
)
_MEANINGS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"email", "e_mail", "mail"}), "email"),
    (frozenset({"iban"}), "iban"),
    (frozenset({"ip", "ipv4", "ipv6", "ip_address"}), "ip"),
    (frozenset({"passport"}), "passport"),
    (frozenset({"ssn"}), "ssn"),
    (frozenset({"sin"}), "sin"),
    (frozenset({"nino", "insurance_number"}), "nino"),
    (frozenset({"born", "birth", "birthday", "dob", "birthdate"}), "dob"),
    (frozenset({"phone", "mobile", "telephone", "tel", "cell"}), "phone"),
    (frozenset({"last4", "last_four"}), "last4"),
)
# a key's words that make its string a bank account's number (only when it holds digits)
ACCOUNT_WORDS = frozenset({"account", "bank_account", "account_no", "acct"})


def kind_by_meaning(key: str) -> str | None:
    """The kind of a key's string by the words of the key (`key` in snake case), or None."""
    words = key.split("_")
    pairs = {f"{a}_{b}" for a, b in zip(words, words[1:], strict=False)}
    present = set(words) | pairs
    for vocabulary, kind in _MEANINGS:
        if not vocabulary.isdisjoint(present):
            return kind
    if key in ACCOUNT_WORDS or words[-1] in ("account", "acct"):
        return "account"
    if words[-1] in ("name", "full", "fullname") and not _PERSON_WORDS.isdisjoint(words):
        return "name"
    if words[-1] in _PERSON_WORDS and words[-1] not in _SELF_WORDS:
        return "party"  # `recipient`, `holder`, `emergency_contact`: a person's name or record
    return None


# person words that name the customer's own record, under which a string is no name (an id)
_SELF_WORDS = frozenset({"customer", "passenger", "traveler", "traveller", "guest", "patient"})


def looks_like_name(value: str) -> bool:
    """Whether a string under a person's key (`recipient`) is written as a name: one to four
    words of letters (with inner apostrophes, hyphens and dots), not an id or a sentence."""
    words = value.split()
    return (
        0 < len(words) <= 4
        and len(value) <= 60
        and all(
            w.replace("'", "").replace("-", "").replace(".", "").replace("’", "").isalpha()
            for w in words
        )
    )
