"""Shared helpers for the benchmarks: a seeded generator of varied, valid support cases.

`generate_cases(rng, n)` varies the project's seeds (`seeds/*.jsonl`) when there are any, and
builds further cases from the support domain itself: random customers, orders, line items and an
intent whose outcome and expected calls come from the domain policy (`policy.decide`).
"""

from __future__ import annotations

import random
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from casemill.case.model import Case, Environment, Expected, ForbiddenCall, Tags, Turn, derive
from casemill.domains.support.policy import (
    Intent,
    decide,
)
from casemill.domains.support.state import SupportState

ROOT = Path(__file__).resolve().parents[1]

FIRST = ("Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivan", "Jun", "Kofi")
LAST = ("Diaz", "Okafor", "Novak", "Silva", "Tanaka", "Berg", "Haddad", "Moreau", "Kim")
PRODUCTS = (
    ("Ceramic mug 12oz", "mug", 14.5),
    ("Wool scarf", "scarf", 32.0),
    ("Desk lamp", "lamp", 48.99),
    ("Water bottle 1l", "bottle", 19.25),
    ("Notebook A5", "notebook", 7.8),
    ("Phone case", "case", 21.0),
    ("Running socks", "socks", 11.4),
    ("Cotton t-shirt", "t-shirt", 18.0),
)
CITIES = ("Lisbon", "Denver", "Austin", "Portland", "Madison", "Tucson", "Boise", "Raleigh")
DAMAGE = ("cracked", "broken", "shattered", "damaged", "defective")


def _state(rng: random.Random, cid: str, n_orders: int, statuses: list[str]) -> dict:
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    email = name.lower().replace(" ", ".") + "@example.com"
    orders, products = {}, {}
    for k in range(n_orders):
        oid = f"W{rng.randint(1000, 9999)}"
        while oid in orders:
            oid = f"W{rng.randint(1000, 9999)}"
        items = []
        for j, (pname, _word, price) in enumerate(rng.sample(PRODUCTS, rng.randint(1, 3)), 1):
            pid = f"P{100 + PRODUCTS.index((pname, _word, price))}"
            variants = [
                {
                    "id": f"{pid}-{c}",
                    "options": {"color": c},
                    "price": price,
                    "available": c != "red",
                }
                for c in ("blue", "green", "red")
            ]
            products[pid] = {"id": pid, "name": pname, "variants": variants}
            items.append(
                {
                    "item_id": f"I{j}",
                    "name": pname,
                    "price": price,
                    "quantity": rng.choice((1, 1, 1, 2)),
                    "product_id": pid,
                    "variant_id": f"{pid}-blue",
                }
            )
        address = {
            "street1": f"{rng.randint(1, 999)} Main St",
            "city": rng.choice(CITIES),
            "zip": f"{rng.randint(10000, 99999)}",
        }
        orders[oid] = {
            "id": oid,
            "customer_id": cid,
            "status": statuses[k],
            "items": items,
            "address": address,
        }
    customer = {"id": cid, "name": name, "email": email}
    return {"customers": {cid: customer}, "orders": orders, "products": products}


def _phrases(kind: str, decision, order: dict, item: dict | None, city: str) -> tuple[str, ...]:
    if decision.outcome == "refuse":
        return ("cannot",)
    if decision.outcome == "clarify":
        return ("which order",)
    if kind == "refund" and item is not None:
        return (f"{item['price'] * item['quantity']:.2f}", "refund")
    return {
        "cancel": ("cancelled",),
        "change_address": (city,),
        "exchange": ("exchange",),
        "escalate": ("human",),
    }.get(kind, (order["status"],))


def domain_case(rng: random.Random) -> Case:
    """One valid support case built from the domain: the policy decides the label."""
    cid = f"C{rng.randint(1001, 9999)}"
    kind = rng.choice(("refund", "refund", "cancel", "change_address", "exchange", "escalate"))
    status = {"refund": "delivered", "exchange": "delivered"}.get(
        kind, rng.choice(("pending", "processing", "shipped", "delivered"))
    )
    raw = _state(rng, cid, 1, [status])
    state = SupportState.parse(raw)
    order = next(iter(raw["orders"].values()))
    item = rng.choice(order["items"])
    word = next(w for n, w, _p in PRODUCTS if n == item["name"])
    city = rng.choice(CITIES)
    new_address = {"street1": f"{rng.randint(1, 999)} Oak Ave", "city": city, "zip": "54321"}
    intent = Intent(
        kind=kind,
        order_id=order["id"],
        item_ids=(item["item_id"],),
        reason="damaged",
        address=new_address,
        new_variant_id=f"{item['product_id']}-green",
    )
    decision = decide(state, intent)
    ask = {
        "refund": f"My order {order['id']} came and the {word} is {rng.choice(DAMAGE)}. Refund it please.",
        "cancel": f"Please cancel order {order['id']}, I don't need it any more.",
        "change_address": f"Can you ship order {order['id']} to {new_address['street1']}, {city} {new_address['zip']} instead?",
        "exchange": f"The {word} from order {order['id']} is the wrong color, can I get it in green?",
        "escalate": f"I want to talk to a human about order {order['id']}.",
    }[kind]
    customer = raw["customers"][cid]
    system = f"Authenticated customer: {cid} ({customer['name']}, {customer['email']})"
    writes = len(decision.calls)
    forbidden = ()
    if decision.outcome in ("refuse", "clarify"):
        forbidden = (ForbiddenCall(any_write=True, reason=decision.why),)
    return Case(
        domain="support",
        environment=Environment(state=raw),
        conversation=(Turn(role="system", content=system), Turn(role="customer", content=ask)),
        expected=Expected(
            tool_calls=decision.calls,
            forbidden_calls=forbidden,
            outcome=decision.outcome,
            reply_contains=_phrases(kind, decision, order, item, city),
            optimal_steps=(0 if kind == "escalate" else 1) + writes + 1,
        ),
        tags=Tags(
            category=rng.choice(("capability", "robustness")),
            intents=(kind,),
            difficulty=rng.choice(("easy", "medium")),
        ),
    )


def seed_cases() -> list[Case]:
    from casemill.validation import load_cases

    seeds = ROOT / "seeds"
    if not seeds.is_dir():
        return []
    return [item.case for item in load_cases([seeds]).cases]


FILLERS = ("", " Thanks!", " Cheers.", " Thank you so much.", " Have a nice day.", " ASAP please.")


def generate_cases(rng: random.Random, n: int) -> Iterator[Case]:
    """`n` varied valid cases: seed variants (filler appended to the last customer turn, which
    leaves the label unchanged) interleaved with domain-built cases."""
    seeds = seed_cases()
    for k in range(n):
        if seeds and k % 2:
            case = rng.choice(seeds)
            turns = list(case.conversation)
            last = max((i for i, t in enumerate(turns) if t.role == "customer"), default=None)
            if last is None:  # a user-scenario case: vary the scenario instead
                scenario = f"{case.user_scenario or ''}{rng.choice(FILLERS)} (ref {k})"
                yield derive(case, user_scenario=scenario)
                continue
            turn = turns[last]
            text = turn.content + rng.choice(FILLERS) + f" (ref {k})"
            turns[last] = turn.model_copy(update={"content": text})
            yield derive(case, conversation=turns)
        else:
            yield domain_case(rng)


def peak_rss_mb() -> float:
    """This process's peak resident memory, in MB. On Linux its own high-water mark (VmHWM):
    ru_maxrss would also count the memory of the process that started it, which Linux carries
    over into a child's ru_maxrss at exec."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return usage / (1024 * 1024) if sys.platform == "darwin" else usage / 1024


def python_speed(steps: int = 10_000_000, runs: int = 3) -> float:
    """The fastest of `runs` timings (CPU seconds) of a plain CPython loop of `steps` additions:
    a rough yardstick of this machine's interpreter speed, printed beside CPU-bound figures.
    It does not see contention for caches and memory on a shared host, which slows mining far
    more than it slows this loop."""
    best = float("inf")
    for _ in range(runs):
        started, total = time.process_time(), 0
        for i in range(steps):
            total += i
        best = min(best, time.process_time() - started)
    return best
