"""Entity swaps: another order id, customer, product, amount or address, drawn from faker and the
product lexicon, applied consistently to every turn, the environment and the expected parameters
and phrases. Faker is one instance, re-seeded from the candidate's `random.Random` before use.
"""

from __future__ import annotations

import functools
import random
import re
from typing import Any

from casemill.case.model import Case, derive
from casemill.generators.framework import NotApplicable, operator
from casemill.generators.lexicon import lexicon
from casemill.packs.support.facts import (
    money,
    primary_order,
    refund_amount,
    signed_in,
    state_view,
    support_only,
    writes,
)

SWAP_RULE = "expected parameters and phrases rewritten to the new values; outcome unchanged"


@functools.lru_cache(maxsize=1)
def _faker_instance() -> Any:
    from faker import Faker

    return Faker("en_US")


def faker(rng: random.Random) -> Any:
    fake = _faker_instance()
    fake.seed_instance(rng.getrandbits(64))
    return fake


_SCALARS = (int, float, bool, type(None))


def _walk(value: Any, fn: Any) -> Any:
    """`value` (JSON data) with `fn` applied to every string, keys included."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {fn(k): v if type(v) in _SCALARS else _walk(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _SCALARS else _walk(v, fn) for v in value]
    return value


def _case_preserving(new: str) -> Any:
    def repl(m: re.Match[str]) -> str:
        old = m.group(0)
        if old.islower():
            return new.lower()
        if old.isupper():
            return new.upper() if any(c.isalpha() for c in new[1:]) and len(old) > 1 else new
        if old[:1].isupper() and new[:1].islower():  # "Earbuds and ..." -> "Headphones and ..."
            return new[:1].upper() + new[1:]
        return new

    return repl


@functools.lru_cache(maxsize=2048)
def _keys_pattern(keys: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern finding any of `keys` as a whole word, any case (longest first)."""
    return re.compile(
        "|".join(r"(?<![\w@.])" + re.escape(k) + r"(?![\w])" for k in keys), re.IGNORECASE
    )


def substitute(
    case: Case,
    mapping: dict[str, str],
    *,
    text_only: dict[str, str] | None = None,
    parts: tuple[str, ...] = ("environment", "conversation", "expected"),
) -> Case:
    """A new case with every occurrence of each key of `mapping` (whole words, any case,
    replaced in the case of the match) replaced in `parts`; `text_only` pairs apply to the
    conversation alone."""
    everywhere, texts = _replacer(mapping), _replacer(text_only or {})
    updates: dict[str, Any] = {}
    if mapping:
        for part in parts:
            updates[part] = _walk(_dumped(case, part), everywhere)
    if text_only:
        conversation = updates.get("conversation") or _dumped(case, "conversation")
        updates["conversation"] = _walk(conversation, texts)
        if case.expected.reference_reply:
            expected = updates.get("expected") or _dumped(case, "expected")
            expected["reference_reply"] = texts(expected["reference_reply"])
            updates["expected"] = expected
    if case.user_scenario:
        updates["user_scenario"] = texts(everywhere(case.user_scenario))
    return derive(case, **updates)


def _dumped(case: Case, part: str) -> Any:
    value = getattr(case, part)
    if isinstance(value, tuple):
        return [item.model_dump(mode="json") for item in value]
    return value.model_dump(mode="json")


def _replacer(pairs: dict[str, str]) -> Any:
    """A function replacing the keys of `pairs` in a string (whole words, any case, in the
    case of the match)."""
    if not pairs:
        return lambda s: s
    pat = _keys_pattern(tuple(sorted(pairs, key=lambda k: (-len(k), k))))
    lower = {k.lower(): v for k, v in pairs.items()}
    done: dict[str, str] = {}  # the same keys and values recur all over a case

    def replace(s: str) -> str:
        out = done.get(s)
        if out is None:
            out = done[s] = pat.sub(lambda m: _case_preserving(lower[m.group(0).lower()])(m), s)
        return out

    return replace


def _fresh(rng: random.Random, prefix: str, taken: str) -> str:
    for _ in range(100):
        candidate = f"{prefix}{rng.randint(2000, 9999)}"
        if candidate not in taken:
            return candidate
    raise NotApplicable("no fresh id")


@operator(kind="entity_swap", name="swap_order_id", version="1", label_rule=SWAP_RULE)
def swap_order_id(case: Case, rng: random.Random) -> list[Case]:
    """Every order gets a new id (W + 4 digits), everywhere it occurs."""
    support_only(case)
    st = state_view(case)
    if not st.orders:
        raise NotApplicable("no orders")
    taken = case.model_dump_json()  # ids already in use (any spelling of the case will do)
    mapping: dict[str, str] = {}
    for oid in sorted(st.orders):
        mapping[oid] = _fresh(rng, "W", taken + " ".join(mapping.values()))
    return [substitute(case, mapping)]


@operator(kind="entity_swap", name="swap_customer", version="1", label_rule=SWAP_RULE)
def swap_customer(case: Case, rng: random.Random) -> list[Case]:
    """The signed-in customer becomes another person: id, name, email (and first name)."""
    support_only(case)
    who = signed_in(case)
    if who is None or who[0] not in state_view(case).customers:
        raise NotApplicable("no signed-in customer in the environment")
    cid, name, email = who
    fake = faker(rng)
    first, last = fake.first_name(), fake.last_name()
    new_id = _fresh(rng, "C", case.model_dump_json())
    mapping = {cid: new_id, email: f"{first}.{last}@example.com".lower(), name: f"{first} {last}"}
    old_first = name.split()[0]
    text_only = {old_first: first} if len(old_first) > 2 else {}
    return [substitute(case, mapping, text_only=text_only)]


def _product_words(name: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z]{3,}", name) if w.lower() not in {"the", "and", "with"}]


def _kinds() -> dict[str, str]:
    """Product noun -> kind, from `lexicons/categories.json`."""
    return {w: k for k, words in lexicon("categories").items() if k != "_doc" for w in words}


def _kind_of(name: str) -> str | None:
    """The product kind of the first word of `name` that names a kind of product."""
    kinds = _kinds()
    return next((kinds[w.lower()] for w in _product_words(name) if w.lower() in kinds), None)


def _says(text: str, word: str) -> bool:
    """Whether lower-cased `text` holds `word` as a whole word, or its plural."""
    return re.search(r"\b" + re.escape(word.lower()) + r"(?:e?s)?\b", text) is not None


def _swap_options(base: str, text: str, names: set[str]) -> list[dict]:
    """Lexicon products `base` may become: the same kind (so what the text keeps saying about
    the item still fits: a skillet that 'cooks fine' does not become a tie), and no word of
    theirs in the text or in another item's name (else 'the mug' could mean two items)."""
    kind = _kind_of(base)
    if kind is None:
        return []
    others = " ".join(names).lower()
    return [
        p
        for p in lexicon("products")
        if _kind_of(p["name"]) == kind
        and p["name"] not in names
        and not any(_says(text, w) or _says(others, w) for w in _product_words(p["name"]))
    ]


@operator(kind="entity_swap", name="swap_product", version="4", label_rule=SWAP_RULE)
def swap_product(case: Case, rng: random.Random) -> list[Case]:
    """An item of the case's order becomes another product of the same kind (name and the
    customer's word for it), from the product lexicon; ids, prices and variants stay.

    Not when the new name would share a word with another item of the environment or with the
    text (the customer's reference would then fit two items), nor for an item whose kind is not
    known (what the text says of it might not fit the new product)."""
    support_only(case)
    st = state_view(case)
    order = st.orders[primary_order(case)]
    text = f"{case.customer_text} {case.user_scenario or ''}".lower()
    names = {i.name for o in st.orders.values() for i in o.items}
    reasons = ["no item named by exactly one word of its name"]
    for item in rng.sample(order.items, len(order.items)):
        base = item.name.split(" (")[0]  # the variant's options in brackets are kept
        used = [w for w in _product_words(base) if re.search(r"\b" + w.lower() + r"\b", text)]
        if len(used) != 1 or used[0].lower() not in _kinds():
            continue  # none, two, or a word that is not the product's noun ("tea" towels)
        others = " ".join(n for n in names if n != item.name).lower()
        if _says(others, used[0]):
            continue  # a word another item's name shares (glass, wine glasses): the customer's
            # "glass" may mean either, and renamed the conversation would stop making sense
        options = _swap_options(base, text, names - {item.name})
        if not options:
            reasons.append(f"no other product of the kind of {base!r} fits the text")
            continue
        new = rng.choice(options)
        mapping = {item.name: new["name"] + item.name[len(base) :], base: new["name"]}
        product = st.products.get(item.product_id or "")
        if product is not None and product.name not in mapping:
            mapping[product.name] = new["name"]
        # the customer's whole word for it: "t-shirt" becomes "sweater", not "t-sweater"
        said = re.search(r"(?<![\w-])((?:[a-z]+-)?" + used[0].lower() + r")\b", text)
        word = said.group(1) if said else used[0]
        out = substitute(
            case, mapping, parts=("environment", "conversation"), text_only={word: new["word"]}
        )
        return [out]
    raise NotApplicable(reasons[-1])


@operator(kind="entity_swap", name="swap_amount", version="2", label_rule=SWAP_RULE)
def swap_amount(case: Case, rng: random.Random) -> list[Case]:
    """Prices of the case's order scale by one factor (variants and past refunds too); amounts
    in the text and the refund amount in the expected reply follow."""
    support_only(case)
    if any(t.role == "tool" for t in case.conversation):
        raise NotApplicable("tool results in the history would disagree with new prices")
    if any(c.params.get("amount") is not None for c in case.expected.forbidden_calls):
        # an amount the customer demands, judged against the price paid (more than was paid):
        # scaled, the price could pass it, and the demand in their words does not follow
        raise NotApplicable("a forbidden refund amount is judged against the prices")
    oid = primary_order(case)
    environment, expected = _dumped(case, "environment"), _dumped(case, "expected")
    factor = rng.choice([0.5, 0.6, 0.75, 1.25, 1.5, 2.0, 2.5, 3.0])
    state = environment["state"]
    order = state["orders"][oid]
    text_map: dict[str, str] = {}
    product_ids = {i.get("product_id") for i in order["items"]}
    for item in order["items"]:
        old_p, q = item["price"], item.get("quantity", 1)
        item["price"] = round(old_p * factor, 2)
        text_map[money(old_p)] = money(item["price"])
        text_map[money(old_p * q)] = money(item["price"] * q)
    for refund in order.get("refunds", []):
        refund["amount"] = round(refund["amount"] * factor, 2)
    for pid in product_ids:
        for variant in (state.get("products", {}).get(pid or "", {}) or {}).get("variants", []):
            variant["price"] = round(variant["price"] * factor, 2)
    for call in expected["tool_calls"]:
        if call["tool"] == "refund_items" and call["params"].get("amount") is not None:
            old = call["params"]["amount"]
            call["params"]["amount"] = round(old * factor, 2)
            text_map[money(old)] = money(call["params"]["amount"])
    if len(set(text_map.values())) != len(text_map):
        raise NotApplicable("two amounts would map to one")
    old_phrases = _refund_phrases(case)
    draft = derive(case, environment=environment, expected=expected)
    out = substitute(draft, {}, text_only=_money_map(text_map))
    return [_rephrase_refunds(out, old_phrases)]


def _money_map(pairs: dict[str, str]) -> dict[str, str]:
    out = dict(pairs)
    for old, new in pairs.items():
        if old.endswith(".00"):
            out.setdefault(old[:-3], new)
    return out


def _refund_phrases(case: Case) -> set[str]:
    st = state_view(case)
    return {money(refund_amount(st, c)) for c in writes(case) if c.tool == "refund_items"}


def _rephrase_refunds(case: Case, old: set[str]) -> Case:
    st = state_view(case)
    new = [money(refund_amount(st, c)) for c in writes(case) if c.tool == "refund_items"]
    kept = [p for p in case.expected.reply_contains if p not in old]
    contains = tuple(dict.fromkeys([*new, *kept]))
    expected = case.expected.model_copy(update={"reply_contains": contains})
    return derive(case, expected=expected)


@operator(kind="entity_swap", name="swap_address", version="1", label_rule=SWAP_RULE)
def swap_address(case: Case, rng: random.Random) -> list[Case]:
    """The new shipping address the customer asks for becomes another one (faker): text,
    expected parameters and the expected city phrase."""
    support_only(case)
    calls = [c for c in writes(case) if c.tool == "change_shipping_address"]
    if not calls:
        raise NotApplicable("no address change expected")
    old = calls[0].params["address"]
    text = f"{case.customer_text} {case.user_scenario or ''}"
    fields = [k for k in ("street1", "city", "zip") if old.get(k) and old[k] in text]
    if len(fields) < 2:
        raise NotApplicable("the new address is not spelled out in the text")
    fake = faker(rng)
    new = {"street1": fake.street_address(), "city": fake.city(), "zip": fake.zipcode()}
    mapping = {old[k]: new[k] for k in new if old.get(k)}
    return [substitute(case, mapping, parts=("expected",), text_only=mapping)]
