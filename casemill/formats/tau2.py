"""tau2-bench tasks (`tasks.json`) with their database (`db.json`) as the environment.

Tasks of the retail domain are imported; those of other tau2 domains are quarantined with the
reason (`casemill.formats.tau2_domains`). Field mapping, task by task, into the `tau2-retail` domain (`casemill.domains.tau2_retail`):

| tau2 | case |
| --- | --- |
| `id` | `provenance.source.conversation_id` (file and line of the task too) |
| `user_scenario.instructions` (reason for | `user_scenario` (no scripted conversation) |
|   call, known and unknown info, task      |   |
|   instructions, persona)                  |   |
| `evaluation_criteria.actions[]`           | `expected.tool_calls` in order, with the |
|   (`name`, `arguments`)                   |   matching rules below |
| `evaluation_criteria.communicate_info` | `expected.reply_contains` (verbatim) |
| `db.json` | `environment.state`: the task's user(s), all their orders, the products |
|           |   of those orders' items and of any product or item the actions name; ids |
|           |   looked up on purpose that do not exist go to `absent_ids` |
| `description`, `nl_assertions`, `reward_basis`, `issues` | `provenance.notes` |
| `split_tasks.json` beside the tasks (when present) | `split:train` / `split:test` labels |

Matching rules: order, product and item ids by `id` (`#W123` == `w123`); `item_ids` as a set of
ids, except when the call pairs them with `new_item_ids` position by position (then both exact);
names, e-mail, address lines and cancel reasons ignoring case; the free-text `summary` of a
transfer and the `expression` of `calculate` by presence only; everything else exact.

Outcome: a `transfer_to_human_agents` action -> escalate; any other write -> resolve; no write ->
resolve when the agent must communicate facts, refuse otherwise. Tasks with no write action also
forbid every write (tau2 checks that the database is unchanged). `optimal_steps` = actions + 1.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from casemill.domains.tau2_retail import NAME as DOMAIN
from casemill.domains.tau2_retail.specs import is_read_tool
from casemill.errors import UserError
from casemill.formats.common import case_data, import_records, named_calls, require
from casemill.formats.records import SourceRecord, read_records
from casemill.formats.result import FieldProblem, ImportResult
from casemill.formats.tau2_domains import check_domain, domain_notes, per_domain

FORMAT = "tau2"
CASEFOLD = {
    "first_name",
    "last_name",
    "email",
    "address1",
    "address2",
    "city",
    "state",
    "country",
    "reason",
}
ID_PARAMS = {"order_id", "product_id", "item_id"}
ANY_PARAMS = {"summary", "expression"}
INTENTS = {
    "cancel_pending_order": "cancel",
    "return_delivered_order_items": "refund",
    "exchange_delivered_order_items": "exchange",
    "modify_pending_order_items": "exchange",
    "modify_pending_order_address": "change_address",
    "modify_user_address": "change_address",
    "transfer_to_human_agents": "escalate",
}
USER_ID_RE = re.compile(r"\b[a-z]+_[a-z]+_\d{4}\b")
ORDER_RE = re.compile(r"#?\b(W\d{7})\b")


class Tau2Db:
    """`db.json` with the lookups the importer needs."""

    def __init__(self, data: dict[str, Any], path: str):
        self.path = path
        self.users: dict[str, Any] = data.get("users") or {}
        self.orders: dict[str, Any] = data.get("orders") or {}
        self.products: dict[str, Any] = data.get("products") or {}
        self.product_of_variant = {
            v: pid for pid, p in self.products.items() for v in p.get("variants") or {}
        }

    @classmethod
    def load(cls, path: str | Path) -> Tau2Db:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UserError(f"{path}: no such file (the tau2 database, db.json)") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UserError(f"{path}: not a JSON database: {exc}") from None
        if not isinstance(data, dict) or not all(
            isinstance(data.get(k), dict) for k in ("users", "orders", "products")
        ):
            raise UserError(f"{path}: expected an object with 'users', 'orders' and 'products'")
        return cls(data, str(path))

    def users_named(self, first: str, last: str, zip_code: str) -> list[str]:
        return [
            u
            for u, v in self.users.items()
            if (v.get("name") or {}).get("first_name") == first
            and (v.get("name") or {}).get("last_name") == last
            and (v.get("address") or {}).get("zip") == zip_code
        ]

    def users_in_text(self, text: str) -> list[str]:
        found = [u for u in USER_ID_RE.findall(text) if u in self.users]
        if found:
            return found
        low = text.lower()
        named = [
            u
            for u, v in self.users.items()
            if f"{v['name']['first_name']} {v['name']['last_name']}".lower() in low
            and v["address"]["zip"] in text
        ]
        if named:
            return named
        return [
            self.orders[f"#{o}"]["user_id"]
            for o in ORDER_RE.findall(text)
            if f"#{o}" in self.orders
        ]


def rules(params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    paired = "new_item_ids" in params
    for name in params:
        if name in ID_PARAMS:
            out[name] = {"kind": "id"}
        elif name == "item_ids" and not paired:
            out[name] = {"kind": "set", "ids": True}
        elif name in CASEFOLD:
            out[name] = {"kind": "casefold"}
        elif name in ANY_PARAMS:
            out[name] = {"kind": "any"}
    return out


def scenario_text(instructions: Any, persona: Any) -> str:
    if isinstance(instructions, str):
        parts = [instructions.strip()]
    elif isinstance(instructions, dict):
        labels = (
            ("reason_for_call", "Reason for call"),
            ("known_info", "Known info"),
            ("unknown_info", "Unknown info"),
            ("task_instructions", "Task instructions"),
        )
        parts = [
            f"{title}: {instructions[key].strip()}"
            for key, title in labels
            if isinstance(instructions.get(key), str) and re.search(r"\w", instructions[key])
        ]
    else:
        raise FieldProblem(
            "user_scenario.instructions",
            f"expected an object or a string, got {type(instructions).__name__}",
        )
    if isinstance(persona, str) and persona.strip():
        parts.insert(0, f"Persona: {persona.strip()}")
    text = "\n".join(p for p in parts if p)
    if not text:
        raise FieldProblem("user_scenario.instructions", "the user scenario is empty")
    return text


def _actions(criteria: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    actions = criteria.get("actions") or []
    if not isinstance(actions, list):
        raise FieldProblem(
            "evaluation_criteria.actions", f"expected a list, got {type(actions).__name__}"
        )
    return named_calls(actions, "evaluation_criteria.actions", "arguments")


def _ids(args: dict[str, Any]) -> list[tuple[str, str]]:
    out = [
        (k, str(args[k]))
        for k in ("user_id", "order_id", "product_id", "item_id")
        if isinstance(args.get(k), str)
    ]
    out += [("item", str(v)) for k in ("item_ids", "new_item_ids") for v in args.get(k) or []]
    return out


def _task_users(db: Tau2Db, actions: list[tuple[str, dict[str, Any]]], text: str) -> list[str]:
    """The users a task concerns: named by its actions (ids, look-ups, orders), else by its
    scenario text."""
    users: list[str] = []
    for name, args in actions:
        if isinstance(args.get("user_id"), str) and args["user_id"] in db.users:
            users.append(args["user_id"])
        if name == "find_user_id_by_email":
            users += [u for u, v in db.users.items() if v.get("email") == args.get("email")]
        if name == "find_user_id_by_name_zip":
            users += db.users_named(args.get("first_name"), args.get("last_name"), args.get("zip"))
        if isinstance(args.get("order_id"), str) and args["order_id"] in db.orders:
            users.append(db.orders[args["order_id"]]["user_id"])
    if not users:
        users = db.users_in_text(text)
    if not users:
        raise FieldProblem(
            "user_scenario",
            "cannot tell which user the task concerns: no action names one and the scenario "
            "names none found in the database",
        )
    return list(dict.fromkeys(users))


def customer_facts(state: dict[str, Any], text: str) -> dict[str, Any]:
    """What the task's customer knows and may say when asked: of the first user of the slice,
    the name, zip code, email and user id the scenario gives (a scenario that says the customer
    does not remember their email gives no email), and the order ids it names."""
    users = state.get("users") or {}
    if not users:
        return {}
    user = next(iter(users.values()))
    name = user.get("name") if isinstance(user.get("name"), dict) else {}
    full = " ".join(str(name.get(k, "")) for k in ("first_name", "last_name")).strip()
    facts: dict[str, Any] = {}
    if full and full.lower() in text.lower():
        facts["name"] = full
    address = user.get("address") if isinstance(user.get("address"), dict) else {}
    if address.get("zip") and str(address["zip"]) in text:
        facts["zip"] = str(address["zip"])
    for key, value in (("email", user.get("email")), ("user_id", next(iter(users)))):
        if isinstance(value, str) and value in text:
            facts[key] = value
    orders = [o for o in (state.get("orders") or {}) if o in text]
    if orders:
        facts["order_ids"] = orders
    return facts


def slice_environment(
    db: Tau2Db, actions: list[tuple[str, dict[str, Any]]], text: str
) -> dict[str, Any]:
    """The part of the database a task touches (see the module's table)."""
    users = _task_users(db, actions, text)
    orders = [o for u in users for o in db.users[u].get("orders") or [] if o in db.orders]
    products = [i["product_id"] for o in orders for i in db.orders[o].get("items") or []]
    absent = []
    for _, args in actions:
        for kind, value in _ids(args):
            if kind == "product_id" and value in db.products:
                products.append(value)
            elif kind in ("item", "item_id") and value in db.product_of_variant:
                products.append(db.product_of_variant[value])
            elif kind == "order_id" and value in db.orders:
                orders.append(value)
            known = (
                value in db.users
                or value in db.orders
                or value in db.products
                or value in db.product_of_variant
            )
            if not known:
                absent.append(value)
    users += [db.orders[o]["user_id"] for o in orders if db.orders[o]["user_id"] not in users]
    state: dict[str, Any] = {
        "users": {u: db.users[u] for u in dict.fromkeys(users)},
        "orders": {o: db.orders[o] for o in dict.fromkeys(orders)},
        "products": {p: db.products[p] for p in dict.fromkeys(products) if p in db.products},
    }
    if absent:
        state["absent_ids"] = list(dict.fromkeys(absent))
    return state


def _outcome(
    actions: list[tuple[str, dict[str, Any]]], info: list[str], notes: list[str]
) -> tuple[str, list[dict[str, Any]]]:
    writes = [n for n, _ in actions if not is_read_tool(n)]
    if "transfer_to_human_agents" in writes:
        outcome, why = "escalate", "a transfer_to_human_agents action is expected"
    elif writes:
        outcome, why = "resolve", "write actions are expected"
    elif info:
        outcome, why = "resolve", "no write action; the agent must communicate facts"
    else:
        outcome, why = (
            "refuse",
            "no write action and nothing to communicate: the request must not be carried out",
        )
    notes.append(f"outcome '{outcome}' inferred: {why}")
    forbidden = []
    if not writes:
        forbidden.append(
            {
                "any_write": True,
                "reason": "tau2 checks the database is unchanged: this task expects no write",
            }
        )
    return outcome, forbidden


def _source_notes(task: dict[str, Any], criteria: dict[str, Any], notes: list[str]) -> None:
    description = task.get("description") or {}
    if isinstance(description, dict):
        for key in ("purpose", "relevant_policies", "notes"):
            if description.get(key):
                notes.append(f"tau2 {key}: {description[key]}")
    for assertion in criteria.get("nl_assertions") or []:
        notes.append(f"tau2 nl_assertion: {assertion}")
    if criteria.get("reward_basis"):
        notes.append("tau2 reward_basis: " + ", ".join(map(str, criteria["reward_basis"])))
    for issue in task.get("issues") or []:
        if isinstance(issue, dict) and issue.get("title"):
            notes.append(f"tau2 open issue {issue.get('id', '')}: {issue['title']}")


def _info(criteria: dict[str, Any]) -> list[str]:
    info = criteria.get("communicate_info") or []
    if not isinstance(info, list) or not all(
        isinstance(i, str | int | float) and not isinstance(i, bool) for i in info
    ):
        raise FieldProblem("evaluation_criteria.communicate_info", "expected a list of strings")
    return [str(i) for i in info]


def _difficulty(actions: list[tuple[str, dict[str, Any]]]) -> str:
    writes = sum(1 for n, _ in actions if not is_read_tool(n))
    if writes >= 2 or len(actions) >= 8:
        return "hard"
    return "easy" if len(actions) <= 3 else "medium"


class _Mapper:
    def __init__(self, db: Tau2Db, splits: dict[str, list[str]]):
        self.db = db
        self.splits = splits

    def __call__(self, record: SourceRecord) -> dict[str, Any]:
        task: dict[str, Any] = record.value
        task_id = str(require(task, "id", (str, int)))
        check_domain(task)
        if task.get("initial_state"):
            raise FieldProblem(
                "initial_state", "tau2 initial_state (actions run before the task) is not supported"
            )
        scenario = require(task, "user_scenario", dict)
        text = scenario_text(scenario.get("instructions"), scenario.get("persona"))
        criteria = require(task, "evaluation_criteria", dict)
        actions, info = _actions(criteria), _info(criteria)
        notes: list[str] = []
        state = slice_environment(self.db, actions, text)
        outcome, forbidden = _outcome(actions, info, notes)
        if any("new_item_ids" in a for _, a in actions):
            notes.append(
                "item_ids paired with new_item_ids are matched exactly (position pairs the items)"
            )
        _source_notes(task, criteria, notes)
        notes.append(
            f"environment: slice of {Path(self.db.path).name} ({len(state['users'])} users, "
            f"{len(state['orders'])} orders, {len(state['products'])} products)"
        )
        splits = sorted(n for n, ids in self.splits.items() if n != "base" and task_id in ids)
        return case_data(
            record,
            FORMAT,
            domain=DOMAIN,
            state=state,
            user_scenario=text,
            expected={
                "tool_calls": [{"tool": n, "params": a, "match": rules(a)} for n, a in actions],
                "forbidden_calls": forbidden,
                "outcome": outcome,
                "reply_contains": info,
                "optimal_steps": len(actions) + 1,
            },
            intents=list(dict.fromkeys(INTENTS[n] for n, _ in actions if n in INTENTS))
            or ["status"],
            labels=[f"split:{n}" for n in splits],
            difficulty_=_difficulty(actions),
            source_id=task_id,
            notes=notes,
            customer={"facts": facts} if (facts := customer_facts(state, text)) else None,
        )


def _splits(tasks_path: Path) -> dict[str, list[str]]:
    path = tasks_path.with_name("split_tasks.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return (
        {str(k): [str(i) for i in v] for k, v in data.items() if isinstance(v, list)}
        if isinstance(data, dict)
        else {}
    )


def import_tau2(path: str | Path, environment: str | Path | None = None) -> ImportResult:
    """Import tau2-bench retail tasks; `environment` is the database (default: `db.json` beside
    them). Tasks of another tau2 domain are quarantined (`casemill.formats.tau2_domains`); the
    notes say, per tau2 domain, what became of its tasks."""
    path = Path(path)
    db = Tau2Db.load(environment or path.with_name("db.json"))
    result, kept = import_records(FORMAT, path, _Mapper(db, _splits(path)), read_records(path))
    counts = per_domain(result, kept)
    notes = domain_notes(counts)
    if result.cases:
        notes.append(
            f"tau2 retail tasks imported into the {DOMAIN} domain: tool specifications inferred "
            f"from the benchmark's expected actions; environment sliced from {db.path}; tools "
            "simulated for running agents, but no replay check (checked by schema and references)"
        )
    return replace(result, notes=tuple(notes), source_domains=counts)
