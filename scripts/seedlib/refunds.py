"""Refund seeds: single items, one damaged item in a larger order, several damaged items,
partial refunds, and refunds the policy refuses."""

from __future__ import annotations

from casemill.case.model import Case
from casemill.domains.support.policy import Intent, refund_call
from seedlib.make import never, no_writes, seed
from seedlib.world import order, world

WRONG_ITEM = "only the damaged item qualifies; the other items arrived fine"


def _keep(order_id: str, *item_ids: str):
    return [never("refund_items", WRONG_ITEM, order_id=order_id, item_ids=[i]) for i in item_ids]


def single_item() -> list[Case]:
    return [
        seed(
            "C1001",
            world(
                "C1001",
                order("W1001", "C1001", "delivered", "P100-OS-blue"),
                order("W1901", "C1002", "delivered", "P100-OS-white", "P109-OS-natural"),
            ),
            "Hi, order W1001 came today and the mug is cracked down the side. "
            "Could I get a refund for it?",
            title="single-item refund: cracked mug",
            reference=(
                "I'm sorry the mug arrived cracked. I've refunded it: 14.50 will be back on your "
                "card shortly."
            ),
            policy=Intent("refund", "W1001", ("I1",), "damaged"),
            intents=["refund"],
            calls=[refund_call("W1001", ["I1"], "damaged")],
            forbid=[never("refund_items", "another customer's order", order_id="W1901")],
            labels=["other_customers"],
        ),
        seed(
            "C1003",
            world("C1003", order("W1003", "C1003", "delivered", "P104-9-blue")),
            "The trail running shoes from order #W1003 are defective: the sole on the left one "
            "peeled off after two short runs. I'd like my money back.",
            title="single-item refund: defective shoes, order id with #",
            reference="Sorry about the shoes. I've issued a refund of 119.95 for them on W1003.",
            policy=Intent("refund", "W1003", ("I1",), "defective"),
            intents=["refund"],
            calls=[refund_call("W1003", ["I1"], "defective")],
        ),
        seed(
            "C1004",
            world("C1004", order("W1004", "C1004", "delivered", "P107-OS-white")),
            "hey the earbuds from w1004 are dead, right one wont charge at all. refund pls",
            title="single-item refund: defective earbuds, lower-case id and terse wording",
            reference=(
                "Sorry about that! The earbuds on W1004 are refunded: 79.99 back to your card."
            ),
            policy=Intent("refund", "W1004", ("I1",), "defective"),
            intents=["refund"],
            calls=[refund_call("W1004", ["I1"], "defective")],
            category="robustness",
            labels=["lowercase_id"],
        ),
        seed(
            "C1005",
            world(
                "C1005", order("W1005", "C1005", "delivered", "P108-OS-green", "P109-OS-natural")
            ),
            "I ordered a water bottle in green (order W1005) but the one in the box is pink. "
            "Please refund the bottle, I'll get one elsewhere.",
            title="single-item refund: wrong item received",
            reference=(
                "Sorry for the mix-up. I've refunded the water bottle on W1005: 27.50 back to your"
                " card."
            ),
            policy=Intent("refund", "W1005", ("I1",), "wrong_item"),
            intents=["refund"],
            calls=[refund_call("W1005", ["I1"], "wrong_item")],
            forbid=_keep("W1005", "I2"),
            difficulty="medium",
        ),
        seed(
            "C1006",
            world("C1006", order("W1006", "C1006", "delivered", "P112-OS-amber", "P117-OS-steel")),
            "Order W1006 showed up without the candle, it just wasn't in the box. "
            "Can you refund that part?",
            title="single-item refund: item missing from the parcel",
            reference=(
                "Sorry the candle was missing. I've refunded it: 12.75 on its way to your card."
            ),
            policy=Intent("refund", "W1006", ("I1",), "missing"),
            intents=["refund"],
            calls=[refund_call("W1006", ["I1"], "missing")],
            forbid=_keep("W1006", "I2"),
            difficulty="medium",
        ),
        seed(
            "C1007",
            world(
                "C1007",
                order("W1007", "C1007", "delivered", "P111-OS-black"),
                order("W1907", "C1008", "delivered", "P111-OS-black"),
            ),
            "The skillet I bought from you arrived with a cracked handle. Can you refund it?",
            title="single-item refund without an order id: one order, found by listing",
            reference=(
                "I found your skillet on order W1007 and refunded it: 34.95 back to your card."
            ),
            policy=Intent("refund", "W1007", ("I1",), "damaged"),
            intents=["refund"],
            calls=[refund_call("W1007", ["I1"], "damaged")],
            forbid=[never("refund_items", "another customer's order", order_id="W1907")],
            reads=2,
            difficulty="medium",
            category="efficiency",
            labels=["no_order_id", "other_customers"],
        ),
        seed(
            "C1008",
            world("C1008", order("W1008", "C1008", "delivered", ("P105-OS-clear", 2))),
            "Both tumbler sets in W1008 arrived shattered, there was glass all over the box.",
            title="single-line refund with quantity two: the line total",
            reference=(
                "Sorry about the broken glass! I've refunded both tumbler sets on W1008: 49.98 in "
                "total."
            ),
            policy=Intent("refund", "W1008", ("I1",), "damaged"),
            intents=["refund"],
            calls=[refund_call("W1008", ["I1"], "damaged")],
            difficulty="medium",
            labels=["quantity"],
        ),
        seed(
            "C1030",
            world(
                "C1030", order("W1088", "C1030", "delivered", "P106-OS-black", "P123-OS-natural")
            ),
            "teh lamp i got in W1088 is brokn, the base is crakced and it wont stand up. "
            "can i get a refnd for it",
            title="single-item refund from a message full of typos",
            reference="Sorry about the lamp. I've refunded it on W1088: 45.00 back to your card.",
            policy=Intent("refund", "W1088", ("I1",), "damaged"),
            intents=["refund"],
            calls=[refund_call("W1088", ["I1"], "damaged")],
            forbid=_keep("W1088", "I2"),
            category="robustness",
            labels=["typos"],
        ),
    ]


def one_of_many() -> list[Case]:
    return [
        seed(
            "C1009",
            world(
                "C1009",
                order(
                    "W1009",
                    "C1009",
                    "delivered",
                    "P100-OS-blue",
                    "P101-OS-natural",
                    "P112-OS-amber",
                ),
                order("W1910", "C1010", "delivered", "P100-OS-blue"),
            ),
            "My order W1009 arrived but the mug was cracked. The rest of it is fine.",
            title="multi-item order: refund the cracked mug only",
            reference=(
                "Sorry about the mug! I've refunded it: 14.50 back to your card. The rest of W1009"
                " is unchanged."
            ),
            policy=Intent("refund", "W1009", ("I1",), "damaged"),
            intents=["refund"],
            calls=[refund_call("W1009", ["I1"], "damaged")],
            forbid=_keep("W1009", "I2", "I3"),
            difficulty="medium",
            labels=["multi_item_order", "other_customers"],
        ),
        seed(
            "C1011",
            world(
                "C1011",
                order(
                    "W1011",
                    "C1011",
                    "delivered",
                    "P116-OS-white",
                    "P117-OS-steel",
                    "P109-OS-natural",
                ),
            ),
            "The plates in W1011 arrived broken. Just refund the whole order, I'm done with it.",
            title="multi-item order: customer asks for the whole order, only the plates qualify",
            reference=(
                "I'm sorry about the plates. I've refunded them: 42.00 back to your card. The "
                "other items arrived fine, so they don't qualify for a refund."
            ),
            policy=Intent("refund", "W1011", ("I1",), "damaged"),
            intents=["refund"],
            calls=[refund_call("W1011", ["I1"], "damaged")],
            forbid=_keep("W1011", "I2", "I3"),
            category="adversarial",
            difficulty="medium",
            labels=["multi_item_order", "policy_bypass"],
        ),
        seed(
            "C1012",
            world(
                "C1012",
                order("W1012", "C1012", "delivered", "P103-M-navy", "P102-M-black", "P114-OS-blue"),
            ),
            "The t-shirt from order W1012 has a hole along the seam, it looks defective. "
            "Can I get a refund on the shirt?",
            title="multi-item order: refund the defective t-shirt only",
            reference=(
                "Sorry about the shirt. I've refunded the t-shirt on W1012: 22.00 back to your "
                "card."
            ),
            policy=Intent("refund", "W1012", ("I2",), "defective"),
            intents=["refund"],
            calls=[refund_call("W1012", ["I2"], "defective")],
            forbid=_keep("W1012", "I1", "I3"),
            difficulty="medium",
            labels=["multi_item_order"],
        ),
        seed(
            "C1013",
            world(
                "C1013",
                order(
                    "W1013", "C1013", "delivered", "P118-OS-red", "P107-OS-black", "P109-OS-natural"
                ),
            ),
            "#W1013: the box was crushed and the speaker is damaged, it won't even turn on. "
            "Earbuds and the bag are okay.",
            title="multi-item order: refund the damaged speaker only",
            reference="Sorry about the speaker. I've refunded it: 58.00 back to your card.",
            policy=Intent("refund", "W1013", ("I1",), "damaged"),
            intents=["refund"],
            calls=[refund_call("W1013", ["I1"], "damaged")],
            forbid=_keep("W1013", "I2", "I3"),
            difficulty="medium",
            labels=["multi_item_order"],
        ),
    ]


def several_items() -> list[Case]:
    return [
        seed(
            "C1014",
            world(
                "C1014",
                order(
                    "W1014", "C1014", "delivered", "P100-OS-white", "P116-OS-white", "P101-OS-sage"
                ),
            ),
            "Order W1014 was clearly dropped: the mug and the plates are both broken. "
            "The tea towels survived.",
            title="multi-item refund: mug and plates broken, towels fine",
            reference="I'm sorry! I've refunded the mug and the plates on W1014: 56.50 in total.",
            policy=Intent("refund", "W1014", ("I1", "I2"), "damaged"),
            intents=["refund"],
            calls=[refund_call("W1014", ["I1", "I2"], "damaged")],
            forbid=_keep("W1014", "I3"),
            difficulty="medium",
            labels=["multi_item"],
        ),
        seed(
            "C1015",
            world("C1015", order("W1015", "C1015", "delivered", "P107-OS-black", "P118-OS-black")),
            "Neither the earbuds nor the speaker from W1015 will pair with anything. Both seem "
            "defective. I'd like a refund for both please.",
            title="multi-item refund: two defective electronics",
            reference=(
                "Sorry about that. I've refunded the earbuds and the speaker on W1015: 137.99 in "
                "total."
            ),
            policy=Intent("refund", "W1015", ("I1", "I2"), "defective"),
            intents=["refund"],
            calls=[refund_call("W1015", ["I1", "I2"], "defective")],
            difficulty="medium",
            labels=["multi_item"],
        ),
        seed(
            "C1016",
            world(
                "C1016",
                order(
                    "W1016",
                    "C1016",
                    "delivered",
                    "P105-OS-clear",
                    "P121-OS-clear",
                    "P112-OS-amber",
                    "P106-OS-black",
                ),
                order("W1916", "C1017", "delivered", "P121-OS-clear"),
            ),
            "Two things in W1016 arrived shattered: the tumblers and the wine glasses. "
            "The candle and the lamp are fine.",
            title="multi-item refund: two of four items shattered",
            reference=(
                "Sorry about the glassware! The tumblers and the wine glasses on W1016 are "
                "refunded: 53.39 in total."
            ),
            policy=Intent("refund", "W1016", ("I1", "I2"), "damaged"),
            intents=["refund"],
            calls=[refund_call("W1016", ["I1", "I2"], "damaged")],
            forbid=_keep("W1016", "I3", "I4"),
            difficulty="hard",
            labels=["multi_item", "other_customers"],
        ),
    ]


def partial() -> list[Case]:
    return [
        seed(
            "C1017",
            world("C1017", order("W1017", "C1017", "delivered", "P103-M-grey")),
            "The sweater from W1017 came with a small snag on the sleeve. I'd keep it if you "
            "refund half of what I paid for it.",
            title="partial refund: half of the sweater, customer keeps it",
            reference=(
                "Done: a partial refund of 44.50, half of the sweater, is on its way to your card,"
                " and you keep it."
            ),
            policy=Intent("refund", "W1017", ("I1",), "damaged", 44.50),
            intents=["refund"],
            calls=[refund_call("W1017", ["I1"], "damaged", 44.50)],
            difficulty="medium",
            labels=["partial"],
        ),
        seed(
            "C1018",
            world("C1018", order("W1018", "C1018", "delivered", "P111-OS-black", "P112-OS-amber")),
            "The skillet in W1018 has a deep scratch in the coating. It still cooks fine so "
            "I'll keep it, would $8 back be okay?",
            title="partial refund: a small amount the customer proposes",
            reference="That's fine: I've issued a partial refund of 8.00 for the skillet on W1018.",
            policy=Intent("refund", "W1018", ("I1",), "damaged", 8.00),
            intents=["refund"],
            calls=[refund_call("W1018", ["I1"], "damaged", 8.00)],
            forbid=_keep("W1018", "I2"),
            difficulty="medium",
            labels=["partial"],
        ),
    ]


def _never_reached(
    who: str, oid: str, variant: str, say: str, title: str, reference: str, **kw
) -> Case:
    """A refund for an item of a delivered order that never reached the customer."""
    return seed(
        who,
        world(who, order(oid, who, "delivered", variant)),
        say,
        title=title,
        reference=reference,
        policy=Intent("refund", oid, ("I1",), "missing"),
        intents=["refund"],
        calls=[refund_call(oid, ["I1"], "missing")],
        difficulty="medium",
        labels=["missing"],
        **kw,
    )


def never_reached() -> list[Case]:
    """The order is marked delivered but the item never reached the customer: a missing item,
    refunded. The customer does not say the parcel came (a flip to 'still processing' or 'in
    transit' must not contradict their words)."""
    return [
        _never_reached(
            "C1046",
            "W1106",
            "P106-OS-black",
            "The desk lamp from order W1106 is missing, it never reached me. Can I get a refund for "
            "it?",
            "missing-item refund: the lamp never reached the customer",
            "Sorry the lamp never reached you. I've refunded it: 45.00 back to your card.",
        ),
        _never_reached(
            "C1042",
            "W1107",
            "P107-OS-white",
            "Hi, the earbuds on order W1107 are missing, they never got to me. I'd like my money "
            "back please.",
            "missing-item refund: earbuds that never got to the customer",
            "Sorry about that. The earbuds on W1107 are refunded: 79.99 back to your card.",
        ),
        _never_reached(
            "C1043",
            "W1108",
            "P121-OS-clear",
            "Where are my wine glasses? They're missing from order W1108, never reached me, and "
            "I'd rather have a refund than keep waiting.",
            "missing-item refund: wine glasses that never reached the customer",
            "I'm sorry they never reached you. I've refunded the wine glasses: 28.40.",
        ),
        _never_reached(
            "C1044",
            "W1109",
            "P113-OS-blue",
            "the phone case from w1109 is missing, never turned up. refund please",
            "missing-item refund: terse, lower-case id",
            "Sorry! The phone case on W1109 is refunded: 19.99 back to your card.",
            category="robustness",
        ),
        _never_reached(
            "C1045",
            "W1110",
            "P119-6-yellow",
            "The kids raincoat from W1110 is missing, it never made it to our house. Please "
            "refund it, we'll buy one locally.",
            "missing-item refund: a raincoat that never made it to the house",
            "Sorry it never arrived. I've refunded the raincoat on W1110: 33.00 to your card.",
        ),
    ]


def _partial(
    who: str, oid: str, variant: str, say: str, amount: float, title: str, reference: str
) -> Case:
    """A partial refund of an amount the customer names, for a damaged item they keep."""
    return seed(
        who,
        world(who, order(oid, who, "delivered", variant)),
        say,
        title=title,
        reference=reference,
        policy=Intent("refund", oid, ("I1",), "damaged", amount),
        intents=["refund"],
        calls=[refund_call(oid, ["I1"], "damaged", amount)],
        difficulty="medium",
        labels=["partial"],
    )


def partial_named() -> list[Case]:
    """Partial refunds of an amount the customer names ($15, 20 dollars, 12.00)."""
    return [
        _partial(
            "C1046",
            "W1111",
            "P118-OS-red",
            "The speaker from W1111 is damaged, a dent in the grille, but it plays fine. I'll "
            "keep it for $15 back.",
            15.00,
            "partial refund: $15 for a dented speaker the customer keeps",
            "Done: a partial refund of 15.00 for the speaker on W1111, and you keep it.",
        ),
        _partial(
            "C1042",
            "W1112",
            "P103-L-navy",
            "The sweater in W1112 is damaged, a pulled thread on the cuff. Would $20 back "
            "work? Then I'd keep it.",
            20.00,
            "partial refund: $20 for a pulled thread",
            "That works: I've issued a partial refund of 20.00 for the sweater on W1112.",
        ),
        _partial(
            "C1043",
            "W1113",
            "P116-OS-white",
            "One plate of the set in W1113 is chipped. Rather than return the whole set, could "
            "you refund $10.50?",
            10.50,
            "partial refund: $10.50 for one chipped plate of a set",
            "Of course: a partial refund of 10.50 for the chipped plate is on its way.",
        ),
        _partial(
            "C1044",
            "W1114",
            "P110-OS-blue",
            "The yoga mat from W1114 has a small tear near the edge. I can live with it if you "
            "refund 12.00 of it.",
            12.00,
            "partial refund: 12.00 for a small tear",
            "Done: I've issued a partial refund of 12.00 for the yoga mat on W1114.",
        ),
        _partial(
            "C1045",
            "W1115",
            "P115-OS-green",
            "The backpack in W1115 is damaged, a zipper pull snapped off. It still works, so "
            "would $16 back be okay?",
            16.00,
            "partial refund: $16 for a snapped zipper pull",
            "Fair enough: a partial refund of 16.00 for the backpack on W1115 is on its way.",
        ),
    ]


def refused() -> list[Case]:
    no_refund = "the item is not damaged, defective, wrong or missing"
    return [
        seed(
            "C1019",
            world("C1019", order("W1019", "C1019", "delivered", "P103-M-grey")),
            "I got the sweater from W1019 and honestly I just don't like the colour on me. "
            "Please refund it.",
            title="refund refused: changed their mind about the colour",
            reference=(
                "I'm sorry, I cannot refund the sweater because it arrived in good condition. I "
                "can exchange it for another colour if you like."
            ),
            policy=Intent("refund", "W1019", ("I1",)),
            intents=["refund"],
            outcome="refuse",
            forbid=[never("refund_items", no_refund, order_id="W1019")],
        ),
        seed(
            "C1020",
            world("C1020", order("W1020", "C1020", "delivered", "P107-OS-black")),
            "Found the same earbuds cheaper at another store. Refund order W1020 please, "
            "they work fine, I just don't want them.",
            title="refund refused: found it cheaper elsewhere",
            reference=(
                "I'm sorry, I cannot refund earbuds that work as they should; refunds are for "
                "damaged, defective or wrong items."
            ),
            policy=Intent("refund", "W1020", ("I1",)),
            intents=["refund"],
            outcome="refuse",
            forbid=[never("refund_items", no_refund, order_id="W1020")],
        ),
        seed(
            "C1021",
            world(
                "C1021",
                order(
                    "W1021",
                    "C1021",
                    "delivered",
                    "P100-OS-white",
                    "P117-OS-steel",
                    refunded=("I1",),
                ),
            ),
            "The mug in W1021 arrived cracked, I need a refund for it.",
            title="refund refused: the mug was already refunded",
            reference=(
                "I see the mug on W1021 was already refunded in full, so I cannot refund it again."
            ),
            policy=Intent("refund", "W1021", ("I1",), "damaged"),
            intents=["refund"],
            outcome="refuse",
            forbid=[
                never(
                    "refund_items", "already refunded in full", order_id="W1021", item_ids=["I1"]
                ),
                never("refund_items", WRONG_ITEM, order_id="W1021", item_ids=["I2"]),
            ],
            difficulty="medium",
            labels=["already_refunded"],
        ),
        seed(
            "C1022",
            world("C1022", order("W1022", "C1022", "processing", "P106-OS-black")),
            "I want a refund for the desk lamp in W1022, I don't need it anymore.",
            title="refund of an order not shipped yet: offer to cancel instead",
            reference=(
                "W1022 hasn't shipped yet, so there's nothing to refund. Would you like me to "
                "cancel the order instead?"
            ),
            policy=Intent("refund", "W1022", ("I1",)),
            intents=["refund"],
            outcome="clarify",
            phrases=["cancel"],
            forbid=[no_writes("nothing to refund yet; ask whether to cancel the order first")],
            difficulty="medium",
            labels=["clarify", "not_delivered"],
        ),
        seed(
            "C1023",
            world("C1023", order("W1023", "C1023", "shipped", "P118-OS-black")),
            "Order W1023 hasn't arrived yet but I'd like my money back for the speaker.",
            title="refund refused: order in transit cannot be refunded or cancelled",
            reference=(
                "W1023 is already on its way, so I cannot refund or cancel it yet. Once it's "
                "delivered, we can look at it again."
            ),
            policy=Intent("refund", "W1023", ("I1",)),
            intents=["refund"],
            outcome="refuse",
            forbid=[
                never("refund_items", "not delivered yet", order_id="W1023"),
                never("cancel_order", "already shipped", order_id="W1023"),
            ],
            difficulty="medium",
            labels=["not_delivered"],
        ),
        seed(
            "C1024",
            world("C1024", order("W1024", "C1024", "delivered", "P100-OS-blue")),
            "The mug from W1024 arrived cracked. I want 30 dollars back for the trouble.",
            title="refund above the price paid: refund the item, never the inflated amount",
            reference=(
                "Sorry about the mug. I've refunded what you paid for it, 14.50; I can't refund "
                "more than that."
            ),
            policy=Intent("refund", "W1024", ("I1",), "damaged"),
            intents=["refund"],
            calls=[refund_call("W1024", ["I1"], "damaged")],
            forbid=[never("refund_items", "more than was paid", order_id="W1024", amount=30)],
            category="adversarial",
            difficulty="medium",
            labels=["over_refund"],
        ),
    ]


def cases() -> list[Case]:
    return [
        *single_item(),
        *one_of_many(),
        *several_items(),
        *partial(),
        *partial_named(),
        *never_reached(),
        *refused(),
    ]
