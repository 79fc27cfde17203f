"""The support domain's world state: customers, orders with line items, products, payments,
refunds already made, and escalation tickets.

These models are mutable on purpose: the simulated tools act on a sandboxed copy of the state
(`SupportState.parse(case.environment.state)`), never on the case itself.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

OrderStatus = Literal["pending", "processing", "shipped", "delivered", "cancelled"]
ORDER_STATUSES: tuple[str, ...] = ("pending", "processing", "shipped", "delivered", "cancelled")
NOT_YET_SHIPPED: frozenset[str] = frozenset({"pending", "processing"})


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Address(Model):
    street1: str
    street2: str = ""
    city: str
    state: str = ""
    zip: str
    country: str = "US"

    @model_validator(mode="before")
    @classmethod
    def _zip_text(cls, data: Any) -> Any:
        return zip_as_text(data) if isinstance(data, dict) else data


def zip_as_text(address: dict[str, Any]) -> dict[str, Any]:
    """`address` with a zip code written as a JSON number (as some systems store them) as
    text: a US one padded back to its five digits (02134 stored as 2134). Anything else is
    returned as it is, the same object."""
    code = address.get("zip")
    if type(code) is not int or code < 0:
        return address
    text = str(code)
    if address.get("country", "US") in ("US", "USA") and len(text) < 5:
        text = text.zfill(5)
    return {**address, "zip": text}


class PaymentMethod(Model):
    id: str
    kind: Literal["card", "gift_card", "paypal"] = "card"
    last4: str | None = None


class Customer(Model):
    id: str
    name: str
    email: str
    phone: str | None = None
    address: Address | None = None
    payment_methods: list[PaymentMethod] = Field(default_factory=list)


class Variant(Model):
    id: str
    options: dict[str, str] = Field(default_factory=dict)
    price: float = Field(ge=0)
    available: bool = True


class Product(Model):
    id: str
    name: str
    variants: list[Variant] = Field(default_factory=list)

    def variant(self, variant_id: str) -> Variant | None:
        return next((v for v in self.variants if v.id == variant_id), None)


class LineItem(Model):
    item_id: str
    name: str
    price: float = Field(ge=0, description="unit price paid")
    quantity: int = Field(default=1, ge=1)
    product_id: str | None = None
    variant_id: str | None = None

    @property
    def total(self) -> float:
        return round(self.price * self.quantity, 2)


class Refund(Model):
    id: str
    item_ids: list[str]
    amount: float = Field(ge=0)
    reason: str = ""


class Exchange(Model):
    item_id: str
    from_variant_id: str | None = None
    to_variant_id: str


class Order(Model):
    id: str
    customer_id: str
    status: OrderStatus
    items: list[LineItem] = Field(min_length=1)
    address: Address | None = None
    payment_method_id: str | None = None
    placed_at: str | None = None
    delivered_at: str | None = None
    note: str | None = Field(default=None, description="free text, e.g. a delivery note")
    refunds: list[Refund] = Field(default_factory=list)
    exchanges: list[Exchange] = Field(default_factory=list)
    cancel_reason: str | None = None

    def item(self, item_id: str) -> LineItem | None:
        return next((i for i in self.items if i.item_id == item_id), None)

    def variant_of(self, item: LineItem) -> str | None:
        """The variant a line item is now: the one its last exchange gave, else the one
        ordered."""
        done = [e.to_variant_id for e in self.exchanges if e.item_id == item.item_id]
        return done[-1] if done else item.variant_id

    @property
    def paid(self) -> float:
        return round(sum(i.total for i in self.items), 2)

    def refunded_for(self, item_id: str) -> float:
        """What was already refunded for one line item (a multi-item refund is always a full
        refund of each item; partial refunds name one item)."""
        item = self.item(item_id)
        total = 0.0
        for r in self.refunds:
            if item_id in r.item_ids:
                total += r.amount if len(r.item_ids) == 1 else (item.total if item else 0.0)
        return round(total, 2)

    @property
    def refunded(self) -> float:
        return round(sum(r.amount for r in self.refunds), 2)


class Ticket(Model):
    id: str
    reason: str
    order_id: str | None = None
    customer_id: str | None = None
    summary: str = ""


class SupportState(Model):
    customers: dict[str, Customer] = Field(default_factory=dict)
    orders: dict[str, Order] = Field(default_factory=dict)
    products: dict[str, Product] = Field(default_factory=dict)
    tickets: list[Ticket] = Field(default_factory=list)

    @classmethod
    def parse(cls, state: dict[str, Any]) -> SupportState:
        return cls.model_validate(state)

    def customer_by_email(self, email: str) -> Customer | None:
        """The customer whose email `email` is, ignoring case and surrounding spaces."""
        wanted = email.strip().lower()
        return next((c for c in self.customers.values() if c.email.lower() == wanted), None)

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_defaults=True)

    def comparable(self) -> dict[str, Any]:
        """The state as the state-success check compares it: free text the agent writes
        (ticket reasons and summaries, refund and cancel reasons) is left out, as tau-bench does:
        a ticket counts by its existence."""
        data = self.model_dump(mode="json")
        data["tickets"] = [{"id": t["id"]} for t in data["tickets"]]
        for order in data["orders"].values():
            order.pop("cancel_reason", None)
            for refund in order["refunds"]:
                refund.pop("reason", None)
        return data
