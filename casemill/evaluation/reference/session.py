"""The reference agent's use of the tools within one episode: reads retried once, writes not.

A read that fails (time-out, server error, a record that comes back corrupted or missing) is
tried once more, which is always safe; when it fails again the agent stops and escalates with
reason `tool_failure`. A write is never retried blindly (a write that timed out may have
happened): its failure is reported and, when transient, escalated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from casemill.domains.base import ToolResult
from casemill.domains.support.state import Order
from casemill.evaluation.agents.base import Episode
from casemill.evaluation.reference.extract import Request

TRANSIENT_TOOL_ERRORS = frozenset({"timeout", "server_error"})


class ToolFailure(Exception):  # noqa: N818 - a control-flow signal inside the agent
    """A read kept failing."""

    def __init__(self, tool: str, kind: str):
        super().__init__(f"{tool}: {kind}")
        self.tool = tool
        self.kind = kind


@dataclass
class Session:
    episode: Episode
    request: Request
    orders: dict[str, Order] = field(default_factory=dict)  # current, as last read
    seen: dict[str, Order] = field(default_factory=dict)  # every order read in this episode
    listing: list[dict[str, Any]] | None = None
    read_retries: int = 1
    escalated: bool = False  # a ticket was opened in this episode
    gave_up: bool = False  # a tool kept failing: nothing more is attempted

    def __post_init__(self) -> None:
        """Orders the conversation already looked up (earlier `tool` turns) need no new read;
        listings are read again (they are short, and a stale one would mislead)."""
        for message in self.episode.messages:
            if message.get("role") != "tool":
                continue
            try:
                content = json.loads(str(message.get("content") or ""))
            except json.JSONDecodeError:
                continue
            order = (
                _order(ToolResult(ok=True, content=content)) if isinstance(content, dict) else None
            )
            if order is not None and "customer_id" in content:
                self.orders[order.id] = self.seen[order.id] = order

    @property
    def customer_id(self) -> str | None:
        return self.request.customer_id

    def get_order(self, order_id: str) -> Order | None:
        """The order, None when it does not exist; `ToolFailure` when the tool keeps failing."""
        if order_id in self.orders:
            return self.orders[order_id]
        for attempt in range(self.read_retries + 1):
            result = self.episode.call("get_order", {"order_id": order_id})
            order = _order(result)
            if order is not None:
                self.orders[order_id] = self.seen[order_id] = order
                return order
            last_try = attempt == self.read_retries
            if result.error == "not_found" and last_try:
                return None
            if last_try:
                raise ToolFailure("get_order", result.error or "corrupted")
        return None  # pragma: no cover

    def list_orders(self) -> list[dict[str, Any]]:
        if self.listing is not None:
            return self.listing
        for attempt in range(self.read_retries + 1):
            result = self.episode.call("list_customer_orders", {"customer_id": self.customer_id})
            content = result.content if isinstance(result.content, dict) else {}
            if result.ok and isinstance(content.get("orders"), list):
                self.listing = [
                    o for o in content["orders"] if isinstance(o, dict) and o.get("order_id")
                ]
                return self.listing
            if attempt == self.read_retries:
                if result.error == "not_found":
                    self.listing = []
                    return self.listing
                raise ToolFailure("list_customer_orders", result.error or "corrupted")
        return []  # pragma: no cover

    def write(self, tool: str, params: dict[str, Any]) -> ToolResult:
        result = self.episode.call(tool, params)
        if result.ok and isinstance(params.get("order_id"), str):
            self.orders.pop(params["order_id"], None)  # the order changed; read it again if needed
        return result


def _order(result: ToolResult) -> Order | None:
    if not result.ok or not isinstance(result.content, dict) or result.content.get("_truncated"):
        return None
    try:
        return Order.model_validate(result.content)
    except ValidationError:
        return None
