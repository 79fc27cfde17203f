"""Goals for a simulated customer (`user_scenario`): the conversation holds only the system turn
naming the signed-in customer; the simulator plays the customer from the goal."""

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
from seedlib.make import get_order, never, no_writes, seed
from seedlib.world import order, world

FORT_WORTH = {"street1": "1200 Elm St", "city": "Fort Worth", "state": "TX", "zip": "76102"}


def cases() -> list[Case]:
    return [
        seed(
            "C1019",
            world(
                "C1019", order("W1071", "C1019", "delivered", "P100-OS-white", "P109-OS-natural")
            ),
            None,
            scenario="You are Samir Aziz. Your order W1071 arrived and the mug in it is cracked; "
            "the tote bag is fine. You want a refund for the mug only. You do not know what you "
            "paid. If the agent offers to refund the whole order, say no.",
            title="simulated customer: refund the cracked mug only",
            reference=(
                "I've refunded the mug on W1071: 14.50 back to your card. The tote bag is "
                "unchanged."
            ),
            policy=Intent("refund", "W1071", ("I1",), "damaged"),
            intents=["refund"],
            calls=[refund_call("W1071", ["I1"], "damaged")],
            forbid=[
                never("refund_items", "the tote bag is fine", order_id="W1071", item_ids=["I2"])
            ],
            difficulty="medium",
            labels=["multi_item_order"],
        ),
        seed(
            "C1020",
            world(
                "C1020",
                order("W1072", "C1020", "processing", "P110-OS-blue"),
                order("W1972", "C1021", "processing", "P110-OS-blue"),
            ),
            None,
            scenario="You are Tara Oneill. You ordered a yoga mat a few days ago and want to "
            "cancel it because you received one as a present. You do not remember the order "
            "number; if asked, say you only have one order.",
            title="simulated customer: cancel the only order, id unknown",
            reference=(
                "I found your yoga mat order W1072; it hadn't shipped, so it's now cancelled."
            ),
            policy=Intent("cancel", "W1072"),
            intents=["cancel"],
            calls=[cancel_call("W1072")],
            forbid=[never("cancel_order", "another customer's order", order_id="W1972")],
            reads=1,
            difficulty="medium",
            labels=["no_order_id", "other_customers"],
        ),
        seed(
            "C1021",
            world("C1021", order("W1073", "C1021", "pending", "P118-OS-red")),
            None,
            scenario="You are Umar Siddiqui. Your order W1073 should go to your new apartment "
            "instead: 1200 Elm St, Fort Worth, TX 76102. Give the order id and the whole new "
            "address in your first message, exactly as written here.",
            title="simulated customer: new shipping address before shipping",
            reference="Done: W1073 will ship to 1200 Elm St, Fort Worth, TX 76102.",
            policy=Intent("change_address", "W1073", address=FORT_WORTH),
            intents=["change_address"],
            calls=[address_call("W1073", FORT_WORTH)],
        ),
        seed(
            "C1022",
            world("C1022", order("W1074", "C1022", "delivered", "P104-10-blue")),
            None,
            scenario="You are Vera Novak. The trail running shoes from order W1074 are half a "
            "size too big. You want to exchange them for a size 9 in the same colour. You are "
            "not interested in a refund.",
            title="simulated customer: exchange shoes for a smaller size",
            reference=(
                "I've arranged an exchange of your running shoes on W1074 for a size 9 in blue."
            ),
            policy=Intent("exchange", "W1074", ("I1",), new_variant_id="P104-9-blue"),
            intents=["exchange"],
            calls=[exchange_call("W1074", "I1", "P104-9-blue")],
            forbid=[never("refund_items", "the shoes are not damaged", order_id="W1074")],
        ),
        seed(
            "C1023",
            world("C1023", order("W1075", "C1023", "delivered", "P107-OS-white")),
            None,
            scenario="You are Wen Li. You were charged twice on your card statement and you "
            "only want to discuss it with a human agent. Insist on a human if the agent tries "
            "to handle it.",
            title="simulated customer: insists on a human",
            reference=(
                "I've passed you to a human colleague who will look at the double charge with you."
            ),
            policy=Intent("escalate"),
            intents=["escalate"],
            outcome="escalate",
            calls=[escalate_call("customer_request")],
            reads=0,
            forbid=[
                never("refund_items", "a billing question is not a damaged item", order_id="W1075")
            ],
        ),
        seed(
            "C1024",
            world(
                "C1024",
                order(
                    "W1076",
                    "C1024",
                    "delivered",
                    "P100-OS-blue",
                    "P112-OS-amber",
                    placed="2026-09-21",
                    delivered="2026-09-26",
                ),
                order("W1077", "C1024", "delivered", "P100-OS-white", "P117-OS-steel"),
            ),
            None,
            scenario="You are Ximena Cruz. The white mug you received recently is cracked. You "
            "do not say the order number at first; if the agent asks which order, say it is "
            "W1077, the one with the French press.",
            title="simulated customer: ambiguous order, answered when asked, then refund",
            reference="Thanks! I've refunded the white mug on W1077: 14.50 back to your card.",
            policy=Intent("refund", "W1077", ("I1",), "damaged"),
            intents=["refund"],
            calls=[refund_call("W1077", ["I1"], "damaged")],
            forbid=[
                never("refund_items", "the mug in the other order is fine", order_id="W1076"),
                never(
                    "refund_items", "the French press is fine", order_id="W1077", item_ids=["I2"]
                ),
            ],
            reads=2,
            replies=2,
            difficulty="hard",
            labels=["ambiguous_order", "no_order_id"],
        ),
        seed(
            "C1025",
            world("C1025", order("W1078", "C1025", "shipped", "P124-L-olive")),
            None,
            scenario="You are Yusuf Demir. You want to cancel order W1078 because you found the "
            "rain jacket cheaper elsewhere. Push back once if refused, then accept the answer.",
            title="simulated customer: cancel a shipped order, refused",
            reference="I'm sorry, W1078 has already shipped, so I cannot cancel it.",
            phrases=["shipped"],
            policy=Intent("cancel", "W1078"),
            intents=["cancel"],
            outcome="refuse",
            forbid=[never("cancel_order", "the order has already shipped", order_id="W1078")],
            difficulty="medium",
        ),
        seed(
            "C1026",
            world("C1026", order("W1079", "C1026", "processing", "P121-OS-clear")),
            None,
            scenario="You are Zoe Bennett. You want to know whether your order W1079 has "
            "shipped yet. You do not want to change anything about it.",
            title="simulated customer: status question",
            reference="W1079 is still processing and hasn't shipped yet.",
            policy=Intent("status", "W1079"),
            intents=["status"],
            calls=[get_order("W1079")],
            phrases=["processing"],
            forbid=[no_writes("a status question needs no write")],
        ),
    ]
