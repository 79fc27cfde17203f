"""Lints: traps of test design that make a case prove less than it seems (severity warning;
`--strict` makes them errors).

- `vague-phrase`: every required phrase is a generic word ("refund", "sorry", "order") or
  shorter than 3 characters without a digit, while the case has a concrete value (an amount, an order id, a
  city) it could require instead;
- `leaked-lookup`: a value a lookup tool is supposed to fetch (a line-item price, the order's
  status) is already written in the customer's text while the case expects the lookup, so an
  agent can skip it and still look right;
- `clarify-write`: a write call is expected on a case labelled as needing clarification.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from casemill.case.model import Case
from casemill.domains import Domain, get_domain
from casemill.validation.findings import Finding

GENERIC_PHRASES = frozenset(
    {
        "refund",
        "refunded",
        "refunds",
        "sorry",
        "apologize",
        "apologies",
        "order",
        "orders",
        "item",
        "items",
        "thanks",
        "thank you",
        "help",
        "ok",
        "okay",
        "yes",
        "no",
        "done",
        "issue",
        "problem",
        "please",
        "customer",
        "request",
        "account",
        "happy to help",
    }
)
MIN_PHRASE_CHARS = 3
LOOKUP_TOOLS = frozenset({"get_order", "list_customer_orders"})
_NUMBER = re.compile(r"(\$)?(?<![\w.])(\d{1,6}(?:[.,]\d{1,2})?)(?![\w])")
_WORD_CACHE: dict[str, re.Pattern[str]] = {}


def _word(text: str) -> re.Pattern[str]:
    pattern = _WORD_CACHE.get(text)
    if pattern is None:
        pattern = _WORD_CACHE[text] = re.compile(rf"\b{re.escape(text)}\b", re.IGNORECASE)
    return pattern


def _orders(case: Case) -> dict[str, Any]:
    orders = case.environment.state.get("orders")
    return orders if isinstance(orders, dict) else {}


def _referenced_orders(case: Case) -> list[dict[str, Any]]:
    orders = _orders(case)
    out = []
    for call in case.expected.tool_calls:
        order_id = call.params.get("order_id")
        order = orders.get(str(order_id).strip().lstrip("#").upper()) if order_id else None
        if isinstance(order, dict) and order not in out:
            out.append(order)
    return out


def _concrete_values(case: Case) -> list[str]:
    """Values a required phrase could name: amounts, ids and cities of the expected calls."""
    values = []
    for call in case.expected.tool_calls:
        for name, value in call.params.items():
            if name in ("amount", "order_id", "item_id", "new_variant_id") and value not in (
                None,
                "",
            ):
                values.append(f"{value:.2f}" if isinstance(value, float) else str(value))
            elif name == "address" and isinstance(value, dict) and value.get("city"):
                values.append(str(value["city"]))
    return values


def is_vague(phrase: str) -> bool:
    """A generic word, or a very short phrase with no digit in it ("10" is concrete)."""
    text = phrase.strip()
    if text.casefold() in GENERIC_PHRASES:
        return True
    return len(text) < MIN_PHRASE_CHARS and not any(ch.isdigit() for ch in text)


def vague_phrases(case: Case) -> Iterator[Finding]:
    phrases = case.expected.reply_contains
    if not phrases:
        return
    vague = [p for p in phrases if is_vague(p)]
    concrete = _concrete_values(case)
    if len(vague) < len(phrases) or not concrete:
        return
    index = phrases.index(vague[0])
    yield Finding(
        "lint",
        "vague-phrase",
        f"required phrase {vague[0]!r} is too vague to prove anything; require a concrete value "
        f"such as {concrete[0]!r} instead (or as well)",
        field=f"expected.reply_contains[{index}]",
        case_id=case.id,
        severity="warning",
    )


def _item_prices(order: dict[str, Any]) -> list[float]:
    """The prices (and price times quantity) of an order's line items. The lints run on every
    model-valid case, also one whose state the semantic check refuses (`items` not a list, a
    price that is text): whatever is not of the expected shape is skipped, and left to the
    semantic check to report, so that a wrong shape is a finding, never a crashed check."""
    items = order.get("items")
    prices = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and isinstance(item.get("price"), int | float):
            prices.append(float(item["price"]))
            quantity = item.get("quantity", 1)
            if isinstance(quantity, int) and quantity > 1:
                prices.append(round(item["price"] * quantity, 2))
    return prices


def _expects_lookup(case: Case, domain: Domain) -> bool:
    calls = case.expected.tool_calls
    if any(c.tool in LOOKUP_TOOLS for c in calls):
        return True
    writes = sum(1 for c in calls if c.tool in domain.write_tools)
    reads = sum(1 for c in calls if c.tool in domain.read_tools)
    return case.expected.optimal_steps > writes + reads + 1  # reads counted but not listed


def leaked_lookups(case: Case, domain: Domain) -> Iterator[Finding]:
    orders = _referenced_orders(case)
    if not orders or not _expects_lookup(case, domain):
        return
    text = case.customer_text
    where = next(
        (
            f"conversation[{i}].content"
            for i, t in enumerate(case.conversation)
            if t.role == "customer"
        ),
        "conversation",
    )
    for order in orders:
        status = order.get("status")
        if isinstance(status, str) and status and _word(status).search(text):
            yield Finding(
                "lint",
                "leaked-lookup",
                f"the customer's text already says the order is {status!r}, which the agent is "
                "expected to look up; leave it out so the lookup is needed",
                field=where,
                case_id=case.id,
                severity="warning",
            )
        prices = _item_prices(order)
        for match in _NUMBER.finditer(text):
            number = float(match.group(2).replace(",", "."))
            has_cents = "." in match.group(2) or "," in match.group(2)
            if not (match.group(1) or has_cents or number >= 10):
                continue
            if any(abs(number - p) < 0.005 for p in prices):
                yield Finding(
                    "lint",
                    "leaked-lookup",
                    f"the customer's text already gives the price {match.group(0)!r}, which the "
                    "agent is expected to look up; leave it out so the lookup is needed",
                    field=where,
                    case_id=case.id,
                    severity="warning",
                )
                break


def clarify_writes(case: Case, domain: Domain) -> Iterator[Finding]:
    labelled = "clarify" in case.tags.labels or case.expected.outcome == "clarify"
    if not labelled:
        return
    for index, call in enumerate(case.expected.tool_calls):
        if call.tool in domain.write_tools:
            yield Finding(
                "lint",
                "clarify-write",
                f"the case needs a clarifying question but expects the write call {call.tool}; "
                "an agent should ask before writing (drop the call or the 'clarify' label)",
                field=f"expected.tool_calls[{index}]",
                case_id=case.id,
                severity="warning",
            )


def lint_findings(case: Case, domain: Domain | None = None) -> list[Finding]:
    """Every lint warning for one (model-valid) case."""
    domain = domain or get_domain(case.domain)
    return [*vague_phrases(case), *leaked_lookups(case, domain), *clarify_writes(case, domain)]
