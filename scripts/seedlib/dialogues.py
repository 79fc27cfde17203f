"""Seeds with a history: scripted multi-turn conversations (the assistant asked for the item,
the order, evidence or an address, and the customer answers), and goals for a simulated
customer (`user_scenario`) with no scripted conversation beyond the system turn."""

from __future__ import annotations

from casemill.case.model import Case
from casemill.domains.support.policy import (
    Intent,
    address_call,
    cancel_call,
    escalate_call,
    exchange_call,
    refund_call,
)
from seedlib.make import never, seed
from seedlib.world import agent, customer, lookup, order, world

NOT_DAMAGED = "the item is not damaged; a refund is not the way out"


def _r(order_id: str, item_id: str, reason: str):
    return never("refund_items", reason, order_id=order_id, item_ids=[item_id])


def multi_turn() -> list[Case]:
    return [
        _which_item(),
        _evidence(),
        _which_order(),
        _partial_offer(),
        _exception(),
        _new_address(),
        _which_size(),
        _which_cancel(),
    ]


def _which_item() -> Case:
    env = world(
        "C1011",
        order("W1061", "C1011", "delivered", "P105-OS-clear", "P121-OS-clear", "P112-OS-amber"),
    )
    return seed(
        "C1011",
        env,
        [
            customer("One of the glass sets in W1061 arrived broken."),
            *lookup(env, "get_order", order_id="W1061"),
            agent(
                "I'm sorry about that. I see two glass items on W1061: the glass tumbler set "
                "and the wine glasses. Which item arrived broken?"
            ),
            customer("The wine glasses, both of them smashed in the box."),
        ],
        title="multi-turn: the assistant asked which item, then refunds the wine glasses",
        reference=(
            "Thanks for letting me know. I've issued a refund of 28.40 for the wine glasses on "
            "W1061; it goes back to your card."
        ),
        policy=Intent("refund", "W1061", ("I2",), "damaged"),
        intents=["refund"],
        calls=[refund_call("W1061", ["I2"], "damaged")],
        forbid=[_r("W1061", "I1", "the tumblers are fine"), _r("W1061", "I3", "fine")],
        reads=0,
        difficulty="medium",
        labels=["clarified"],
    )


def _evidence() -> Case:
    env = world("C1012", order("W1062", "C1012", "delivered", "P106-OS-black"))
    return seed(
        "C1012",
        env,
        [
            customer("I want my money back for the lamp in W1062."),
            *lookup(env, "get_order", order_id="W1062"),
            agent(
                "I can help with that. Refunds are for items that arrived damaged, defective or "
                "wrong. Could you tell me what is wrong with the lamp?"
            ),
            customer(
                "It flickers and goes dark after a minute, straight out of the box. "
                "I tried two different sockets."
            ),
        ],
        title="multi-turn: the assistant asked what is wrong, the lamp is defective",
        reference=(
            "That sounds defective. I've refunded the desk lamp on W1062: 45.00 is on its way back"
            " to your card."
        ),
        policy=Intent("refund", "W1062", ("I1",), "defective"),
        intents=["refund"],
        calls=[refund_call("W1062", ["I1"], "defective")],
        reads=0,
        difficulty="medium",
        labels=["evidence"],
    )


def _which_order() -> Case:
    env = world(
        "C1013",
        order("W1063", "C1013", "delivered", "P100-OS-blue", "P109-OS-natural"),
        order(
            "W1064",
            "C1013",
            "delivered",
            "P100-OS-white",
            "P116-OS-white",
            placed="2026-10-02",
            delivered="2026-10-09",
        ),
    )
    return seed(
        "C1013",
        env,
        [
            customer("my mug came cracked :("),
            *lookup(env, "list_customer_orders", customer_id="C1013"),
            agent(
                "Sorry to hear that! You have two orders with a mug, W1063 and W1064. "
                "Which order was it?"
            ),
            customer("The one with the plates, W1064."),
        ],
        title="multi-turn: the assistant asked which order, then refunds that mug",
        reference=(
            "Thanks! I've refunded the mug from W1064, 14.50, to your card. The plates aren't "
            "affected."
        ),
        policy=Intent("refund", "W1064", ("I1",), "damaged"),
        intents=["refund"],
        calls=[refund_call("W1064", ["I1"], "damaged")],
        forbid=[
            never("refund_items", "the other order's mug is fine", order_id="W1063"),
            _r("W1064", "I2", "the plates are fine"),
        ],
        reads=1,
        difficulty="medium",
        labels=["clarified"],
    )


def _partial_offer() -> Case:
    env = world("C1014", order("W1065", "C1014", "delivered", "P120-M-indigo"))
    return seed(
        "C1014",
        env,
        [
            customer(
                "The denim jacket from W1065 has a small tear by the pocket. It's still "
                "wearable though."
            ),
            *lookup(env, "get_order", order_id="W1065"),
            agent(
                "Sorry about the tear. Since you'd like to keep the jacket, I can offer a partial "
                "refund of 20.00 for the damage. Would that work for you?"
            ),
            customer("Yes, that works for me, thanks."),
        ],
        title="multi-turn: a partial refund the customer accepts",
        reference=(
            "Done: a partial refund of 20.00 for the jacket on W1065 is on its way to your card, "
            "and you keep the jacket."
        ),
        policy=Intent("refund", "W1065", ("I1",), "damaged", 20.00),
        intents=["refund"],
        calls=[refund_call("W1065", ["I1"], "damaged", 20.00)],
        reads=0,
        difficulty="medium",
        labels=["partial"],
    )


def _exception() -> Case:
    env = world("C1015", order("W1066", "C1015", "delivered", "P103-L-navy"))
    return seed(
        "C1015",
        env,
        [
            customer("Refund the sweater in W1066, I don't like it."),
            *lookup(env, "get_order", order_id="W1066"),
            agent(
                "I'm sorry, but I cannot refund an item that arrived in good condition: refunds "
                "are for damaged, defective or wrong items. I can exchange it for another size "
                "or colour if you like."
            ),
            customer(
                "I've asked twice now. I want an exception to that policy, it was a gift "
                "nobody wanted. Make it happen."
            ),
        ],
        title="multi-turn: repeated demand for a policy exception goes to a human",
        reference=(
            "I understand. I cannot make that exception myself, so I've passed your request for "
            "W1066 to a human colleague who can review it; they will get back to you."
        ),
        policy=Intent("escalate", "W1066"),
        intents=["escalate", "refund"],
        outcome="escalate",
        calls=[escalate_call("policy_exception", "W1066")],
        forbid=[never("refund_items", NOT_DAMAGED, order_id="W1066")],
        reads=0,
        category="adversarial",
        difficulty="hard",
        labels=["policy_exception", "pressure"],
    )


def _new_address() -> Case:
    env = world("C1016", order("W1067", "C1016", "pending", "P123-OS-natural", "P101-OS-sage"))
    hoboken = {"street1": "9 Harbor Pl", "city": "Hoboken", "state": "NJ", "zip": "07030"}
    return seed(
        "C1016",
        env,
        [
            customer("I need to change where W1067 is being shipped."),
            *lookup(env, "get_order", order_id="W1067"),
            agent("Sure, W1067 hasn't shipped yet, so I can change it. What is the new address?"),
            customer("Please send it to 9 Harbor Pl, Hoboken, NJ 07030."),
        ],
        title="multi-turn: the assistant asked for the new address",
        reference="Done: W1067 will now ship to 9 Harbor Pl, Hoboken, NJ 07030.",
        policy=Intent("change_address", "W1067", address=hoboken),
        intents=["change_address"],
        calls=[address_call("W1067", hoboken)],
        reads=0,
        difficulty="medium",
    )


def _which_size() -> Case:
    env = world("C1017", order("W1068", "C1017", "delivered", "P102-S-black"))
    return seed(
        "C1017",
        env,
        [
            customer("the shirt from W1068 is too small, can i swap it?"),
            *lookup(env, "get_order", order_id="W1068"),
            agent("Of course. Which size would you like instead, medium or large?"),
            customer("Medium please, same colour."),
        ],
        title="multi-turn: the assistant asked which size, then exchanges",
        reference=(
            "All set: I've arranged an exchange of your t-shirt on W1068 for a medium in black."
        ),
        policy=Intent("exchange", "W1068", ("I1",), new_variant_id="P102-M-black"),
        intents=["exchange"],
        calls=[exchange_call("W1068", "I1", "P102-M-black")],
        forbid=[never("refund_items", NOT_DAMAGED, order_id="W1068")],
        reads=0,
        difficulty="medium",
    )


def _which_cancel() -> Case:
    env = world(
        "C1018",
        order("W1069", "C1018", "pending", "P120-S-indigo"),
        order("W1070", "C1018", "processing", "P100-OS-white"),
    )
    return seed(
        "C1018",
        env,
        [
            customer("Please cancel my order."),
            *lookup(env, "list_customer_orders", customer_id="C1018"),
            agent(
                "You have two open orders: W1069 (denim jacket) and W1070 (mug). "
                "Which order should I cancel?"
            ),
            customer("The jacket one."),
        ],
        title="multi-turn: the assistant asked which order to cancel",
        reference=(
            "Order W1069 with the denim jacket is now cancelled. Your mug order W1070 is unchanged."
        ),
        policy=Intent("cancel", "W1069"),
        intents=["cancel"],
        calls=[cancel_call("W1069")],
        forbid=[never("cancel_order", "the customer keeps the mug order", order_id="W1070")],
        reads=0,
        difficulty="medium",
        labels=["clarified"],
    )
