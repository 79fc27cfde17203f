"""Simulated tau2-bench retail tools on a sandboxed copy of a case's environment slice.

The tools follow the retail policy (`policy.md` of the benchmark) and the shapes of `db.json`:
writes check the order's status, the items and their counts, that new items are available
variants of the same product, the payment method and gift-card balances, then change the state
the way the benchmark's database records it (status `cancelled`, `return requested`, `exchange
requested`, `pending (item modified)`; refunds and payments appended to `payment_history`;
gift-card balances adjusted). A write the policy forbids answers a `policy` error and changes
nothing. A lookup that finds nothing answers `{"error": "not_found", ...}` as its result (tau2's
tools answer the agent the same way), so an expected lookup of a wrong id replays cleanly.
"""

from __future__ import annotations

import ast
import copy
import operator
from collections import Counter
from typing import Any

from casemill.case.model import Environment
from casemill.domains.base import SpecSandbox, ToolResult

CANCEL_REASONS = ("no longer needed", "ordered by mistake")
ADDRESS_KEYS = ("address1", "address2", "city", "state", "country", "zip")
_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _not_found(what: str) -> ToolResult:
    return ToolResult(ok=True, content={"error": "not_found", "message": f"{what} not found"})


def _policy(message: str) -> ToolResult:
    return ToolResult.fail("policy", message)


def evaluate(expression: str) -> float:
    """+ - * / and parentheses over numbers; anything else is refused."""

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = walk(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        raise ValueError("only numbers, + - * / and parentheses are allowed")

    return walk(ast.parse(expression, mode="eval"))


class Tau2RetailSandbox(SpecSandbox):
    def __init__(
        self, environment: Environment, specs: dict[str, dict[str, Any]], *, faults: bool = True
    ):
        super().__init__(environment, specs, faults=faults)
        state = self.state
        self.users: dict[str, Any] = state.get("users") or {}
        self.orders: dict[str, Any] = state.get("orders") or {}
        self.products: dict[str, Any] = state.get("products") or {}
        self.absent: list[str] = state.get("absent_ids") or []

    def final_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {
            "users": self.users,
            "orders": self.orders,
            "products": self.products,
        }
        if self.absent:
            state["absent_ids"] = self.absent
        return copy.deepcopy(state)

    def comparable_state(self) -> dict[str, Any]:
        return copy.deepcopy(
            {"users": self.users, "orders": self.orders, "products": self.products}
        )

    # -- helpers ----------------------------------------------------------------------------
    def _variant(self, item_id: str) -> tuple[str, dict[str, Any]] | None:
        for product_id, product in self.products.items():
            if item_id in (product.get("variants") or {}):
                return product_id, product["variants"][item_id]
        return None

    def _payment(self, order: dict[str, Any], payment_method_id: str) -> dict[str, Any] | None:
        user = self.users.get(order["user_id"]) or {}
        return (user.get("payment_methods") or {}).get(payment_method_id)

    def _items_problem(self, order: dict[str, Any], item_ids: list[str]) -> str | None:
        have = Counter(i["item_id"] for i in order["items"])
        for item_id, count in Counter(item_ids).items():
            if have[item_id] < count:
                return f"{count} of item {item_id} not found in order {order['order_id']}"
        return None

    def _swap_problem(
        self, order: dict[str, Any], item_ids: list[str], new_item_ids: list[str]
    ) -> tuple[str | None, float]:
        if len(item_ids) != len(new_item_ids):
            return "the number of items to change and of new items should match", 0.0
        problem = self._items_problem(order, item_ids)
        if problem:
            return problem, 0.0
        by_id = {i["item_id"]: i for i in order["items"]}
        diff = 0.0
        for old_id, new_id in zip(item_ids, new_item_ids, strict=True):
            old = by_id[old_id]
            variant = (self.products.get(old["product_id"]) or {}).get("variants", {}).get(new_id)
            if variant is None or not variant.get("available"):
                return f"new item {new_id} not found or not available", 0.0
            diff += variant["price"] - old["price"]
        return None, round(diff, 2)

    def _swap(
        self,
        order_id: str,
        status: str,
        verb: str,
        item_ids: list[str],
        new_item_ids: list[str],
        payment_method_id: str,
    ) -> ToolResult | tuple[dict[str, Any], dict[str, Any], float]:
        """The order, the payment method and the price difference of swapping `item_ids` for
        `new_item_ids` paid by `payment_method_id`, or the refusal (the order's status, the
        items, the method, its balance)."""
        order = self._order(order_id, status, verb)
        if isinstance(order, ToolResult):
            return order
        problem, diff = self._swap_problem(order, item_ids, new_item_ids)
        method = self._payment(order, payment_method_id)
        if problem is None and method is None:
            problem = f"payment method {payment_method_id} not found"
        problem = problem or self._balance_problem(method, diff)
        return _policy(problem) if problem else (order, method, diff)

    def _balance_problem(self, method: dict[str, Any], amount: float) -> str | None:
        if method.get("source") == "gift_card" and method.get("balance", 0) < amount:
            return "insufficient gift card balance to pay for the price difference"
        return None

    # -- reads ------------------------------------------------------------------------------
    def _t_calculate(self, expression: str) -> ToolResult:
        try:
            return ToolResult(ok=True, content=str(round(evaluate(expression), 2)))
        except (ValueError, SyntaxError, ZeroDivisionError) as exc:
            return ToolResult.fail("invalid_params", f"cannot calculate {expression!r}: {exc}")

    def _t_find_user_id_by_email(self, email: str) -> ToolResult:
        found = next(
            (u for u, v in self.users.items() if str(v.get("email", "")).lower() == email.lower()),
            None,
        )
        return ToolResult(ok=True, content=found) if found else _not_found("user")

    def _t_find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> ToolResult:  # noqa: A002
        for user_id, user in self.users.items():
            name, address = user.get("name") or {}, user.get("address") or {}
            if (
                str(name.get("first_name", "")).lower() == first_name.lower()
                and str(name.get("last_name", "")).lower() == last_name.lower()
                and address.get("zip") == zip
            ):
                return ToolResult(ok=True, content=user_id)
        return _not_found("user")

    def _t_get_user_details(self, user_id: str) -> ToolResult:
        user = self.users.get(user_id)
        return ToolResult(ok=True, content=copy.deepcopy(user)) if user else _not_found("user")

    def _t_get_order_details(self, order_id: str) -> ToolResult:
        order = self.orders.get(order_id)
        return ToolResult(ok=True, content=copy.deepcopy(order)) if order else _not_found("order")

    def _t_get_product_details(self, product_id: str) -> ToolResult:
        product = self.products.get(product_id)
        return (
            ToolResult(ok=True, content=copy.deepcopy(product))
            if product
            else _not_found("product")
        )

    def _t_get_item_details(self, item_id: str) -> ToolResult:
        found = self._variant(item_id)
        return ToolResult(ok=True, content=copy.deepcopy(found[1])) if found else _not_found("item")

    # -- writes -----------------------------------------------------------------------------
    def _order(self, order_id: str, status: str, verb: str) -> dict[str, Any] | ToolResult:
        order = self.orders.get(order_id)
        if order is None:
            return ToolResult.fail("not_found", f"order {order_id} not found")
        if order["status"] != status:
            return _policy(
                f"order {order_id} is {order['status']}: only {status} orders can be {verb}"
            )
        return order

    def _t_cancel_pending_order(self, order_id: str, reason: str) -> ToolResult:
        order = self._order(order_id, "pending", "cancelled")
        if isinstance(order, ToolResult):
            return order
        if reason not in CANCEL_REASONS:
            return _policy(f"invalid reason {reason!r}; allowed: {', '.join(CANCEL_REASONS)}")
        refunds = []
        for payment in order.get("payment_history") or []:
            refunds.append(
                {
                    "transaction_type": "refund",
                    "amount": payment["amount"],
                    "payment_method_id": payment["payment_method_id"],
                }
            )
            method = self._payment(order, payment["payment_method_id"])
            if method is not None and method.get("source") == "gift_card":
                method["balance"] = round(method.get("balance", 0) + payment["amount"], 2)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"] = [*(order.get("payment_history") or []), *refunds]
        return ToolResult(ok=True, content=copy.deepcopy(order))

    def _t_return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> ToolResult:
        order = self._order(order_id, "delivered", "returned")
        if isinstance(order, ToolResult):
            return order
        method = self._payment(order, payment_method_id)
        original = (order.get("payment_history") or [{}])[0].get("payment_method_id")
        if method is None or (
            payment_method_id != original and method.get("source") != "gift_card"
        ):
            return _policy(
                "the refund must go to the original payment method or an existing gift card"
            )
        problem = self._items_problem(order, item_ids)
        if problem:
            return _policy(problem)
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return ToolResult(ok=True, content=copy.deepcopy(order))

    def _t_exchange_delivered_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> ToolResult:
        checked = self._swap(
            order_id, "delivered", "exchanged", item_ids, new_item_ids, payment_method_id
        )
        if isinstance(checked, ToolResult):
            return checked
        order, _, diff = checked
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = diff
        return ToolResult(ok=True, content=copy.deepcopy(order))

    def _t_modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> ToolResult:
        checked = self._swap(
            order_id, "pending", "modified", item_ids, new_item_ids, payment_method_id
        )
        if isinstance(checked, ToolResult):
            return checked
        order, method, diff = checked
        kind = "payment" if diff > 0 else "refund"
        order["payment_history"] = [
            *(order.get("payment_history") or []),
            {"transaction_type": kind, "amount": abs(diff), "payment_method_id": payment_method_id},
        ]
        if method.get("source") == "gift_card":
            method["balance"] = round(method.get("balance", 0) - diff, 2)
        for old_id, new_id in zip(item_ids, new_item_ids, strict=True):
            item = next(i for i in order["items"] if i["item_id"] == old_id)
            variant = self.products[item["product_id"]]["variants"][new_id]
            item.update(
                item_id=new_id, price=variant["price"], options=copy.deepcopy(variant["options"])
            )
        order["status"] = "pending (item modified)"
        return ToolResult(ok=True, content=copy.deepcopy(order))

    def _t_modify_pending_order_address(self, order_id: str, **address: str) -> ToolResult:
        order = self._order(order_id, "pending", "modified")
        if isinstance(order, ToolResult):
            return order
        order["address"] = {k: address[k] for k in ADDRESS_KEYS}
        return ToolResult(ok=True, content=copy.deepcopy(order))

    def _t_modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> ToolResult:
        order = self._order(order_id, "pending", "modified")
        if isinstance(order, ToolResult):
            return order
        history = order.get("payment_history") or []
        method = self._payment(order, payment_method_id)
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            return _policy("only an order with a single payment can change its payment method")
        if method is None or payment_method_id == history[0]["payment_method_id"]:
            return _policy("the new payment method must be another of the user's payment methods")
        amount = history[0]["amount"]
        problem = self._balance_problem(method, amount)
        if problem:
            return _policy(problem)
        old = self._payment(order, history[0]["payment_method_id"]) or {}
        order["payment_history"] = [
            *history,
            {
                "transaction_type": "payment",
                "amount": amount,
                "payment_method_id": payment_method_id,
            },
            {
                "transaction_type": "refund",
                "amount": amount,
                "payment_method_id": history[0]["payment_method_id"],
            },
        ]
        if method.get("source") == "gift_card":
            method["balance"] = round(method.get("balance", 0) - amount, 2)
        if old.get("source") == "gift_card":
            old["balance"] = round(old.get("balance", 0) + amount, 2)
        return ToolResult(ok=True, content=copy.deepcopy(order))

    def _t_modify_user_address(self, user_id: str, **address: str) -> ToolResult:
        user = self.users.get(user_id)
        if user is None:
            return ToolResult.fail("not_found", f"user {user_id} not found")
        user["address"] = {k: address[k] for k in ADDRESS_KEYS}
        return ToolResult(ok=True, content=copy.deepcopy(user))

    def _t_transfer_to_human_agents(self, summary: str) -> ToolResult:
        return ToolResult(ok=True, content="Transfer successful")
