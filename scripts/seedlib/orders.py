"""Order-level seeds: cancellations, shipping address changes and status questions."""

from __future__ import annotations

from casemill.case.model import Case
from casemill.domains.support.policy import Intent, address_call, cancel_call
from seedlib.make import get_order, list_orders, never, no_writes, seed
from seedlib.world import order, world

SHIPPED = "the order has already shipped"
STATUS_ONLY = "a status question needs no write"


def _addr(street: str, city: str, state: str, zip_code: str) -> dict[str, str]:
    return {"street1": street, "city": city, "state": state, "zip": zip_code}


def cancellations() -> list[Case]:
    return [
        seed(
            "C1025",
            world("C1025", order("W1025", "C1025", "pending", "P108-OS-blue", "P109-OS-natural")),
            "Please cancel order W1025, I placed it by mistake.",
            title="cancel a pending order",
            reference="Order W1025 is cancelled; you'll get the full amount back on your card.",
            policy=Intent("cancel", "W1025"),
            intents=["cancel"],
            calls=[cancel_call("W1025")],
        ),
        seed(
            "C1026",
            world("C1026", order("W1026", "C1026", "processing", "P110-OS-purple")),
            "Can you stop order #W1026 before it ships? I don't need the yoga mat anymore.",
            title="cancel a processing order, id with #",
            reference=(
                "Order W1026 hadn't shipped yet, so I've cancelled it. The yoga mat won't be sent."
            ),
            policy=Intent("cancel", "W1026"),
            intents=["cancel"],
            calls=[cancel_call("W1026")],
        ),
        seed(
            "C1027",
            world(
                "C1027",
                order("W1027", "C1027", "pending", "P120-M-indigo"),
                order("W1028", "C1027", "pending", "P122-OS-grey"),
            ),
            "Please cancel W1028, the one with the beanie. Keep the jacket order as it is.",
            title="cancel one of two pending orders, keep the other",
            reference="W1028 with the beanie is cancelled. Your jacket order W1027 stays as it is.",
            policy=Intent("cancel", "W1028"),
            intents=["cancel"],
            calls=[cancel_call("W1028")],
            forbid=[never("cancel_order", "the customer keeps this order", order_id="W1027")],
            difficulty="medium",
        ),
        seed(
            "C1028",
            world("C1028", order("W1029", "C1028", "shipped", "P115-OS-green")),
            "Cancel W1029 please, I changed my mind about the backpack.",
            title="cancel refused: order already shipped",
            reference="I'm sorry, W1029 has already shipped, so I cannot cancel it anymore.",
            phrases=["shipped"],
            policy=Intent("cancel", "W1029"),
            intents=["cancel"],
            outcome="refuse",
            forbid=[never("cancel_order", SHIPPED, order_id="W1029")],
        ),
        seed(
            "C1029",
            world("C1029", order("W1030", "C1029", "delivered", "P114-OS-rust")),
            "Cancel my order W1030. The pillow cover came yesterday but I don't want it anymore.",
            title="cancel refused: order already delivered, and no refund for a change of mind",
            reference=(
                "W1030 was already delivered, so I cannot cancel it, and refunds are only for "
                "items that arrived damaged, defective or wrong."
            ),
            phrases=["delivered"],
            policy=Intent("cancel", "W1030"),
            intents=["cancel"],
            outcome="refuse",
            forbid=[
                never("cancel_order", "delivered orders cannot be cancelled", order_id="W1030"),
                never("refund_items", "not damaged", order_id="W1030"),
            ],
            difficulty="medium",
        ),
        seed(
            "C1030",
            world(
                "C1030",
                order("W1031", "C1030", "processing", "P115-OS-black"),
                order("W1931", "C1031", "pending", "P115-OS-black"),
            ),
            "I'd like to cancel the backpack I ordered a couple of days ago, I found one locally.",
            title="cancel without an order id: the customer's only order, found by listing",
            reference=(
                "I found your backpack order W1031; it hadn't shipped yet, so it's now cancelled."
            ),
            policy=Intent("cancel", "W1031"),
            intents=["cancel"],
            calls=[cancel_call("W1031")],
            forbid=[never("cancel_order", "another customer's order", order_id="W1931")],
            category="efficiency",
            difficulty="medium",
            labels=["no_order_id", "other_customers"],
        ),
        seed(
            "C1031",
            world("C1031", order("W1084", "C1031", "processing", "P117-OS-steel")),
            "Hi there! So I ordered a French press last week as a birthday present for my dad, "
            "but it turns out my brother already got him the exact same one (of course he did). "
            "Could you cancel W1084 for me? Thanks so much, and sorry for the hassle!",
            title="cancel a processing order from a chatty message",
            reference=(
                "No hassle at all! W1084 hadn't shipped yet, so it's cancelled and the French "
                "press won't be sent."
            ),
            policy=Intent("cancel", "W1084"),
            intents=["cancel"],
            calls=[cancel_call("W1084")],
            category="robustness",
            labels=["verbose"],
        ),
    ]


def address_changes() -> list[Case]:
    decatur = _addr("410 Church St", "Decatur", "GA", "30030")
    portland = _addr("88 Harbor Rd", "Portland", "OR", "97205")
    davis = _addr("77 Lake St", "Davis", "CA", "95616")
    monterey = _addr("5 Ocean Ave", "Monterey", "CA", "93940")
    memphis = _addr("300 Beale St", "Memphis", "TN", "38103")
    return [
        seed(
            "C1032",
            world("C1032", order("W1033", "C1032", "pending", "P117-OS-steel")),
            "Please ship order W1033 to my sister's place instead: 410 Church St, Decatur, "
            "GA 30030.",
            title="address change on a pending order",
            reference="Done: W1033 will ship to 410 Church St, Decatur, GA 30030.",
            policy=Intent("change_address", "W1033", address=decatur),
            intents=["change_address"],
            calls=[address_call("W1033", decatur)],
        ),
        seed(
            "C1033",
            world("C1033", order("W1034", "C1033", "processing", "P103-L-navy", "P122-OS-blue")),
            "I'm moving next week. Can you send #W1034 to 88 Harbor Rd, Portland, OR 97205?",
            title="address change on a processing order",
            reference=(
                "W1034 hasn't shipped yet, so I've updated it to 88 Harbor Rd, Portland, OR 97205."
            ),
            policy=Intent("change_address", "W1034", address=portland),
            intents=["change_address"],
            calls=[address_call("W1034", portland)],
        ),
        seed(
            "C1034",
            world(
                "C1034",
                order("W1035", "C1034", "processing", "P118-OS-red"),
                order("W1036", "C1034", "processing", "P123-OS-natural"),
                order("W1936", "C1035", "processing", "P118-OS-black"),
            ),
            "Please change the shipping address on W1036 only, not my other order, to "
            "77 Lake St, Davis, CA 95616.",
            title="address change on one of two open orders",
            reference=(
                "W1036 will now go to 77 Lake St, Davis, CA 95616; your other order keeps its "
                "address."
            ),
            policy=Intent("change_address", "W1036", address=davis),
            intents=["change_address"],
            calls=[address_call("W1036", davis)],
            forbid=[
                never(
                    "change_shipping_address", "the other order keeps its address", order_id="W1035"
                ),
                never("change_shipping_address", "another customer's order", order_id="W1936"),
            ],
            difficulty="medium",
            labels=["other_customers"],
        ),
        seed(
            "C1035",
            world("C1035", order("W1037", "C1035", "shipped", "P124-M-olive")),
            "Order W1037 needs to go to 5 Ocean Ave, Monterey, CA 93940 instead, I won't be home.",
            title="address change refused: order already shipped",
            reference="I'm sorry, W1037 has already shipped, so I cannot change its address now.",
            phrases=["shipped"],
            policy=Intent("change_address", "W1037", address=monterey),
            intents=["change_address"],
            outcome="refuse",
            forbid=[never("change_shipping_address", SHIPPED, order_id="W1037")],
        ),
        seed(
            "C1036",
            world("C1036", order("W1038", "C1036", "delivered", "P116-OS-white")),
            "Can you update the address on W1038 to 300 Beale St, Memphis, TN 38103? "
            "I typed my old one.",
            title="address change refused: order already delivered",
            reference="W1038 was already delivered, so I cannot change its shipping address.",
            phrases=["delivered"],
            policy=Intent("change_address", "W1038", address=memphis),
            intents=["change_address"],
            outcome="refuse",
            forbid=[never("change_shipping_address", "delivered already", order_id="W1038")],
        ),
    ]


def status_questions() -> list[Case]:
    return [
        seed(
            "C1037",
            world("C1037", order("W1039", "C1037", "shipped", "P124-L-olive")),
            "Where is my order W1039?",
            title="status: shipped order",
            reference="Order W1039 has shipped and is on its way to you.",
            policy=Intent("status", "W1039"),
            intents=["status"],
            calls=[get_order("W1039")],
            phrases=["shipped"],
            forbid=[no_writes(STATUS_ONLY)],
        ),
        seed(
            "C1038",
            world("C1038", order("W1040", "C1038", "processing", "P101-OS-sage")),
            "Has #W1040 shipped yet? It's been a few days since I ordered.",
            title="status: processing order",
            reference="W1040 is still processing; it hasn't shipped yet.",
            policy=Intent("status", "W1040"),
            intents=["status"],
            calls=[get_order("W1040")],
            phrases=["processing"],
            forbid=[no_writes(STATUS_ONLY)],
        ),
        seed(
            "C1039",
            world(
                "C1039",
                order("W1041", "C1039", "delivered", "P110-OS-blue"),
                order("W1941", "C1040", "shipped", "P110-OS-blue"),
            ),
            "Did order W1041 arrive yet? I've been travelling and can't check the porch.",
            title="status: delivered order",
            reference="Yes, W1041 was delivered on 2026-11-03.",
            policy=Intent("status", "W1041"),
            intents=["status"],
            calls=[get_order("W1041")],
            phrases=["delivered"],
            forbid=[no_writes(STATUS_ONLY)],
            labels=["other_customers"],
        ),
        seed(
            "C1040",
            world(
                "C1040",
                order("W1042", "C1040", "shipped", "P119-6-red"),
                order("W1942", "C1041", "processing", "P119-6-yellow"),
            ),
            "Hi, what's the status of my order? I don't have the number handy.",
            title="status without an order id: the only order, found by listing",
            reference="Your order W1042 with the kids raincoat has shipped and is on its way.",
            policy=Intent("status", "W1042"),
            intents=["status"],
            calls=[list_orders("C1040")],
            phrases=["shipped"],
            forbid=[no_writes(STATUS_ONLY)],
            category="efficiency",
            difficulty="medium",
            labels=["no_order_id", "other_customers"],
        ),
        seed(
            "C1041",
            world("C1041", order("W1043", "C1041", "shipped", "P113-OS-clear")),
            "w1043 any update?? is it on its way",
            title="status: terse lower-case message",
            reference="Yes, W1043 has shipped and is on its way to you.",
            policy=Intent("status", "W1043"),
            intents=["status"],
            calls=[get_order("W1043")],
            phrases=["shipped"],
            forbid=[no_writes(STATUS_ONLY)],
            category="robustness",
            labels=["lowercase_id"],
        ),
        seed(
            "C1032",
            world(
                "C1032",
                order("W1085", "C1032", "shipped", "P118-OS-black"),
                order("W1086", "C1032", "delivered", "P101-OS-natural"),
                order("W1087", "C1032", "pending", "P109-OS-natural"),
            ),
            "Where's W1085? I have a few orders going, this is the one with the speaker.",
            title="status: named order among several, one lookup is enough",
            reference="W1085 with the speaker has shipped and is on its way.",
            policy=Intent("status", "W1085"),
            intents=["status"],
            calls=[get_order("W1085")],
            phrases=["shipped"],
            forbid=[no_writes(STATUS_ONLY)],
            category="efficiency",
            difficulty="medium",
        ),
    ]


def _too_late(who: str, oid: str, variant: str, say: str, title: str, reference: str, **kw) -> Case:
    """A cancellation the policy refuses: the order has shipped (the customer does not know)."""
    return seed(
        who,
        world(who, order(oid, who, "shipped", variant)),
        say,
        title=title,
        reference=reference,
        phrases=["shipped"],
        policy=Intent("cancel", oid),
        intents=["cancel"],
        outcome="refuse",
        forbid=[never("cancel_order", SHIPPED, order_id=oid)],
        **kw,
    )


def too_late_to_cancel() -> list[Case]:
    """Cancellations asked for after the order shipped, in the customer's own words."""
    return [
        _too_late(
            "C1042",
            "W1101",
            "P118-OS-black",
            "Please cancel order W1101. The speaker was a gift for a party that got called off.",
            "cancel refused: shipped speaker, the party was called off",
            "I'm sorry, W1101 has already shipped, so I cannot cancel it anymore.",
        ),
        _too_late(
            "C1043",
            "W1102",
            "P106-OS-brass",
            "Hi, I need to cancel W1102, the brass desk lamp. I found a cheaper one nearby.",
            "cancel refused: shipped lamp, found cheaper",
            "Sorry, W1102 has already shipped, so I cannot cancel it now.",
        ),
        _too_late(
            "C1044",
            "W1103",
            "P102-M-black",
            "Cancel #W1103 please, I ordered the t-shirt in the wrong size.",
            "cancel refused: shipped t-shirt in the wrong size, id with #",
            "I'm sorry, W1103 has already shipped, so I cannot cancel it anymore.",
        ),
        _too_late(
            "C1045",
            "W1104",
            "P117-OS-steel",
            "can u cancel w1104? dont need the french press anymore",
            "cancel refused: terse, lower-case id",
            "Sorry, W1104 has already shipped, so I cannot cancel it.",
            category="robustness",
        ),
    ]


def cases() -> list[Case]:
    return [*cancellations(), *too_late_to_cancel(), *address_changes(), *status_questions()]
