"""Support-domain cases from a log that uses the built-in support tools.

The environment is rebuilt from what the log shows: each order as the first `get_order` result
before any write to it, each customer from `get_customer` or, failing that, from the system turn
naming the signed-in customer. A decision point's environment is that initial state with the
conversation's earlier successful writes replayed on the simulator, so the expected calls replay
against the state the agent actually faced. Expected calls are built with the policy's
constructors, so matching rules are those of every other support case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
from pydantic import ValidationError

from casemill.case.model import Environment, ExpectedCall
from casemill.domains.support import policy
from casemill.domains.support.sandbox import SupportSandbox
from casemill.domains.support.state import Customer, Order, SupportState, zip_as_text
from casemill.domains.support.tools import TOOLS_BY_NAME
from casemill.mining.model import Conversation, LoggedCall

AUTH = re.compile(r"Authenticated customer:\s*(\S+)\s*\(([^,()]+),\s*([^()\s]+)\)")
SUPPORT_TOOLS = frozenset(TOOLS_BY_NAME)
INTENTS = {
    "refund_items": "refund",
    "cancel_order": "cancel",
    "change_shipping_address": "change_address",
    "exchange_item": "exchange",
    "escalate_to_human": "escalate",
}


def is_support(conversation: Conversation) -> bool:
    """All its calls are support tools; without calls, a system turn names the customer."""
    called = False
    for m in conversation.messages:
        for c in m.calls:
            if c.tool not in SUPPORT_TOOLS:
                return False
            called = True
    return called or any(m.role == "system" and _auth(m.content) for m in conversation.messages)


def _auth(text: str) -> bool:
    return "Authenticated customer:" in text and AUTH.search(text) is not None


def without_instructions(conversation: Conversation) -> Conversation:
    """The conversation without the agent's own instructions: a support case opens with the one
    system turn naming the signed-in customer (the agent under test brings its instructions)."""
    kept = [m for m in conversation.messages if m.role != "system" or _auth(m.content)]
    if len(kept) == len(conversation.messages):
        return conversation
    return conversation.with_messages(kept)


def zips_as_text(conversation: Conversation) -> Conversation:
    """The conversation with the zip code of each address change written as text where the
    log has a JSON number (the support tools take text: so do the expected call and its replay;
    the order's own address is read the same way, see `Address`)."""
    messages, changed = [], False
    for m in conversation.messages:
        calls = m.calls
        for i, call in enumerate(calls):
            address = (
                call.arguments.get("address") if call.tool == "change_shipping_address" else None
            )
            if isinstance(address, dict) and (texted := zip_as_text(address)) is not address:
                if calls is m.calls:
                    calls = list(calls)
                calls[i] = replace(call, arguments={**call.arguments, "address": texted})
        if calls is not m.calls:
            m, changed = replace(m, calls=calls), True
        messages.append(m)
    return conversation.with_messages(messages) if changed else conversation


def _order_key(value: Any) -> str:
    return str(value).strip().lstrip("#").strip()


def _loads(text: str | None) -> Any:
    try:
        return orjson.loads(text) if text else None
    except orjson.JSONDecodeError:
        return None


@dataclass
class Rebuilt:
    state: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    # states of the conversation parsed so far, by `id()` (see `phrases`): each as
    # `SupportState.parse` makes it (None: it does not parse); the semantic check of a case
    # holding the state may take one over (`take_parsed`)
    parsed: dict[int, SupportState | None] = field(default_factory=dict)

    def take_parsed(self, state: dict[str, Any]) -> SupportState | None:
        """The parsed `state`, handed over (it is forgotten here), or None if not parsed yet."""
        return self.parsed.pop(id(state), None)


def initial_state(conversation: Conversation) -> Rebuilt:
    orders: dict[str, dict] = {}
    models: dict[str, Order] = {}
    customers: dict[str, dict] = {}
    written: set[str] = set()
    problems: list[str] = []
    for m in conversation.messages:
        if m.role == "system" and "Authenticated customer:" in m.content:
            for auth in AUTH.finditer(m.content):
                customers.setdefault(
                    auth.group(1),
                    {"id": auth.group(1), "name": auth.group(2).strip(), "email": auth.group(3)},
                )
        for call in m.calls:
            if call.error:
                continue
            if call.tool == "get_order":
                _observe_order(call, orders, models, written, problems)
            elif call.tool == "get_customer":
                value = _loads(call.result)
                if isinstance(value, dict) and value.get("id") and not value.get("error"):
                    try:
                        customers[value["id"]] = Customer.model_validate(value).model_dump(
                            mode="json"
                        )
                    except ValidationError:
                        problems.append(f"get_customer result for {value['id']} is not a customer")
            elif call.tool in INTENTS and call.arguments.get("order_id"):
                written.add(_order_key(call.arguments["order_id"]))
    for order in orders.values():
        customers.setdefault(
            order["customer_id"], {"id": order["customer_id"], "name": "", "email": ""}
        )
    state = {"customers": customers, "orders": orders}
    return Rebuilt(state, problems, {id(state): _parsed(customers, models)})


def _parsed(customers: dict[str, dict], orders: dict[str, Order]) -> SupportState | None:
    """`SupportState.parse` of the rebuilt state, from the orders already validated (each order
    in the state is the dump of its model, which validates back to an equal model)."""
    try:
        return SupportState.model_validate({"customers": customers, "orders": orders})
    except ValidationError:
        return None


def _observe_order(
    call: LoggedCall, orders: dict, models: dict[str, Order], written: set[str], problems: list[str]
) -> None:
    value = _loads(call.result)
    if not isinstance(value, dict) or value.get("error") or not value.get("id"):
        return
    key = _order_key(value["id"])
    if key in orders or key in written:
        return
    try:
        model = models[key] = Order.model_validate(value)
        orders[key] = model.model_dump(mode="json")
    except ValidationError as exc:
        problems.append(
            f"get_order result for {key} is not an order ({exc.error_count()} problems)"
        )


def state_before(initial: dict[str, Any], prior: list[LoggedCall]) -> Rebuilt:
    """The initial state with `prior` successful writes replayed on the simulator."""
    if not prior:
        return Rebuilt(initial)
    sandbox = SupportSandbox(Environment(state=initial), faults=False)
    problems = []
    for call in prior:
        result = sandbox.call(call.tool, call.arguments)
        if not result.ok:
            problems.append(f"replaying the logged {call.tool} failed ({result.error})")
    state = sandbox.final_state()
    return Rebuilt(state, problems, {id(state): sandbox.state})  # its dump parses back equal


def expected_call(call: LoggedCall) -> ExpectedCall:
    """The support policy's expected call for a logged one; a call whose arguments are of a
    shape the policy does not take (`item_ids` that is no list, ...) as it was logged, for the
    semantic check to name what is wrong with it."""
    try:
        return _policy_call(call)
    except (TypeError, ValueError, AttributeError):
        return ExpectedCall(tool=call.tool, params=dict(call.arguments))


def _policy_call(call: LoggedCall) -> ExpectedCall:
    a = call.arguments
    if call.tool == "refund_items":
        return policy.refund_call(
            a.get("order_id", ""),
            list(a.get("item_ids") or []),
            a.get("reason", ""),
            a.get("amount"),
        )
    if call.tool == "cancel_order":
        return policy.cancel_call(a.get("order_id", ""))
    if call.tool == "change_shipping_address":
        return policy.address_call(a.get("order_id", ""), a.get("address") or {})
    if call.tool == "exchange_item":
        return policy.exchange_call(
            a.get("order_id", ""), a.get("item_id", ""), a.get("new_variant_id", "")
        )
    if call.tool == "escalate_to_human":
        return policy.escalate_call(a.get("reason", "customer_request"), a.get("order_id"))
    return ExpectedCall(tool=call.tool, params=dict(a))


def phrases(
    calls: list[LoggedCall],
    state: dict[str, Any],
    parsed: dict[int, SupportState | None] | None = None,
) -> list[str]:
    """The convention's `reply_contains` vocabulary for these writes. `parsed`: states already
    parsed, by `id()` (the caller keeps them alive), to share between drafts of one
    conversation."""
    out: list[str] = []
    parsed = {} if parsed is None else parsed
    for call in calls:
        a = call.arguments
        if call.tool == "refund_items":
            amount = a.get("amount")
            if amount is None:
                amount = _refund_total(a, state, parsed)
            if isinstance(amount, int | float):
                out.append(f"{amount:.2f}")
            out.append("refund")
        elif call.tool == "cancel_order":
            out.append("cancelled")
        elif call.tool == "change_shipping_address":
            address = a.get("address")
            city = address.get("city") if isinstance(address, dict) else None
            if city:
                out.append(str(city))
        elif call.tool == "exchange_item":
            out.append("exchange")
        elif call.tool == "escalate_to_human":
            out.append("human")
    return list(dict.fromkeys(out))


def _refund_total(
    arguments: dict[str, Any], state: dict[str, Any], parsed: dict[int, SupportState | None]
) -> float | None:
    """What a refund that names no amount pays back: its items' totals, when the state holds
    them all (the state is parsed on first need, into `parsed`)."""
    if id(state) not in parsed:
        try:
            parsed[id(state)] = SupportState.parse(state)
        except ValidationError:
            parsed[id(state)] = None
    known = parsed[id(state)]
    order_id, item_ids = arguments.get("order_id", ""), arguments.get("item_ids") or []
    if known is None or not isinstance(order_id, str | int) or not isinstance(item_ids, list):
        return None
    order = known.orders.get(_order_key(order_id))
    if order is None:
        return None
    items = [order.item(str(i)) for i in item_ids]
    return sum(i.total for i in items if i is not None) if all(items) else None


def intents(calls: list[LoggedCall]) -> list[str]:
    return sorted({INTENTS[c.tool] for c in calls if c.tool in INTENTS})


def reads_needed(calls: list[LoggedCall]) -> int:
    """One order lookup per order the writes touch."""
    return len({_order_key(c.arguments["order_id"]) for c in calls if c.arguments.get("order_id")})
