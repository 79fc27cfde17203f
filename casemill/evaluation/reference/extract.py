"""Rule-based reading of a support conversation: regexes and keyword lists, nothing learned.

`read_request(messages)` finds the signed-in customer (from the system turn), the order ids the
customer wrote, and the intents (refund, cancel, change_address, exchange, escalate, status) with
the clause each was asked in. Item names, damage words, amounts, addresses and variants are read
from the text by the small functions below, which the agent calls once it has the order.
Instructions inside the customer's text are read as words like any others: nothing here obeys
them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from casemill.evaluation.reference.text import (
    DAMAGE_WORDS,
    SENTENCE_RE,
    clean_turn,
)

CUSTOMER_RE = re.compile(r"Authenticated customer:\s*(C\d+)")
CUSTOMER_ID_RE = re.compile(r"\b(C\d{4,})\b")
# W + 4 digits, optionally '#', lower case, a hyphen or a space; letter O read as zero
ORDER_RE = re.compile(r"(?<![A-Za-z0-9])#?\s?[Ww][- ]?([0-9Oo]{4})(?![0-9A-Za-z])")

SPLIT_RE = re.compile(r"\s+but\s+|\s*\bthough\b\s*", re.IGNORECASE)

INTENT_PATTERNS: dict[str, re.Pattern[str]] = {
    "escalate": re.compile(
        r"\b(?:escalat\w*|(?:speak|talk|chat)\s+(?:to|with)\s+(?:a\s+|an\s+|your\s+|the\s+)?(?:human|person|"
        r"manager|supervisor|someone|agent|representative|rep)|human\s+(?:agent|being)|real\s+person|"
        r"live\s+agent|(?:get|transfer|connect|put|pass)\s+(?:me|this|it)\s+(?:to|through\s+to|with)\s+"
        r"(?:a\s+|your\s+|the\s+)?(?:human|person|manager|supervisor|someone)|a\s+human|"
        r"(?:get|want|need)\s+(?:\w+\s+)?(?:a|the|your)\s+(?:manager|supervisor)|exception)\b",
        re.IGNORECASE,
    ),
    "cancel": re.compile(
        r"\b(?:cancel(?:l?ed|l?ing|lation)?|stop\s+(?:the\s+|my\s+)?(?:order|it|shipment)\b)",
        re.IGNORECASE,
    ),
    "change_address": re.compile(
        r"\b(?:(?:shipping|delivery|new)\s+address|(?:change|update|correct|fix)\s+(?:\S+\s+){0,3}?"
        r"address|address\s+(?:to|change)|change\s+where|"
        r"(?:ship|send|deliver|redirect)\s+(?:it|them|the\s+order|my\s+order|the\s+package|order\s+\S+|\S*W\d{4})\s+"
        r"(?:to|instead\s+to)|moved\s+to|go\s+to\s+(?=\d)|new\s+apartment)\b",
        re.IGNORECASE,
    ),
    "exchange": re.compile(r"\b(?:exchange|swap|trade|switch)\w*\b", re.IGNORECASE),
    "refund": re.compile(
        r"\b(?:refund\w*|money\s+back|reimburs\w*|my\s+money|credit\s+(?:me|back)|\S+\s+back\s+be)\b",
        re.IGNORECASE,
    ),
    "status": re.compile(
        r"\b(?:where\b|status|track\w*|shipped\s+yet|arrived?\s+yet|any\s+update|on\s+its\s+way|"
        r"(?:has|have|did)\s+(?:\S+\s+){0,2}(?:shipped|arrived?)\b|"
        r"has\s+(?:it|my\s+order|order\s+\S+)\s+shipped|(?:whether|if)\s+.{0,30}\s+(?:has\s+)?shipped|"
        r"when\s+will\s+(?:it|my\s+order|order\s+\S+|the\s+\w+)\s+(?:arrive|ship|come))",
        re.IGNORECASE,
    ),
}
NEGATION_RE = re.compile(
    r"\b(?:don'?t|do\s+not|no\s+need\s+to|not|no|never|no\s+longer|instead\s+of|rather\s+than|without)"
    r"(?:\s+\w+){0,3}\s*$",
    re.IGNORECASE,
)
AFFIRM_RE = re.compile(
    r"^\W*(?:yes|yeah|yep|sure|ok|okay|alright|please\s+do|go\s+ahead|that\s+works|sounds\s+good|deal|fine)\b",
    re.IGNORECASE,
)
NO_FAULT_RE = re.compile(
    r"\b(?:nothing\s+(?:is\s+)?(?:actually\s+|really\s+)?wrong|(?:i\s+)?(?:just\s+)?changed\s+my\s+mind|"
    r"in\s+perfect\s+condition|(?:is|are|seems?|seem)\s+intact|works?\s+(?:fine|perfectly))\b",
    re.IGNORECASE,
)
EXCEPTION_RE = re.compile(r"\bexception\b", re.IGNORECASE)

DAMAGE_RE = re.compile(
    r"\b(?:" + "|".join(re.escape(w) for w in sorted(DAMAGE_WORDS, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
DAMAGE_NEGATION_RE = re.compile(
    r"\b(?:nothing|not|no|isn'?t|wasn'?t|aren'?t|weren'?t|never|without\s+any)\b(?:\s+\w+){0,2}\s*$",
    re.IGNORECASE,
)
FINE_RE = re.compile(
    r"\b(?:(?:is|are|was|were|arrived|came|seem|seems)\s+(?:fine|ok|okay|perfect|great|intact|good|all\s+right)|survived)\b",
    re.IGNORECASE,
)
PRONOUN_RE = re.compile(r"\b(?:it|they|them|one|both)\b", re.IGNORECASE)


STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "for",
        "with",
        "to",
        "in",
        "on",
        "my",
        "your",
        "this",
        "that",
        "set",
        "pack",
        "pair",
        "piece",
        "pcs",
        "oz",
        "ml",
        "inch",
        "cm",
        "new",
        "one",
        "item",
        "order",
        "size",
        "color",
        "colour",
    ]
)


@dataclass(frozen=True)
class Clause:
    text: str
    turn: int


@dataclass
class Mention:
    """One intent as the customer asked it (`conflict`: cancel and `others` on one order)."""

    kind: str
    clause: Clause
    order_id: str | None = None
    others: tuple[str, ...] = ()
    not_orders: tuple[str, ...] = ()  # "my other order": not these


@dataclass
class Request:
    customer_id: str | None
    customer_turns: list[str]  # typos fixed, sentences that try to steer the agent left out
    clauses: list[Clause]
    order_ids: list[str]
    mentions: list[Mention] = field(default_factory=list)
    raw_text: str = ""  # everything the customer wrote, as written

    @property
    def text(self) -> str:
        return "\n".join(self.customer_turns)


def customer_id_of(messages: list[dict[str, Any]]) -> str | None:
    for message in messages:
        if message.get("role") == "system":
            match = CUSTOMER_RE.search(str(message.get("content") or ""))
            if match:
                return match.group(1)
    return None


def normalize_order_id(digits: str) -> str:
    return "W" + digits.replace("O", "0").replace("o", "0")


def order_ids_in(text: str) -> list[str]:
    """Order ids in `text`, in order of appearance, each once."""
    seen: list[str] = []
    for match in ORDER_RE.finditer(text):
        if sum(ch.isdigit() for ch in match.group(1)) < 3:
            continue
        order_id = normalize_order_id(match.group(1))
        if order_id not in seen:
            seen.append(order_id)
    return seen


def split_clauses(turns: list[str]) -> list[Clause]:
    out = []
    for index, turn in enumerate(turns):
        for sentence in SENTENCE_RE.split(turn):
            for part in SPLIT_RE.split(sentence):
                if part and part.strip():
                    out.append(Clause(part.strip(), index))
    return out


def intents_in(clause: Clause) -> list[tuple[int, str]]:
    """(position, kind) of each intent asked for (not negated) in one clause."""
    found = []
    for kind, pattern in INTENT_PATTERNS.items():
        for match in pattern.finditer(clause.text):
            if NEGATION_RE.search(clause.text[: match.start()]):
                continue
            found.append((match.start(), kind))
            break
    return sorted(found)


def negated_intents_in(clause: Clause) -> set[str]:
    out = set()
    for kind, pattern in INTENT_PATTERNS.items():
        for match in pattern.finditer(clause.text):
            if NEGATION_RE.search(clause.text[: match.start()]):
                out.add(kind)
    return out


def read_request(messages: list[dict[str, Any]], *, find_order_ids: Any = order_ids_in) -> Request:
    """The customer, the order ids and the intents of a conversation (see the module doc).

    Intents asked in any turn stand (a later "anything else?" adds to them); a negated intent
    ("don't cancel") withdraws an earlier one. A last turn that only agrees ("yes, that works")
    accepts what the assistant proposed just before, so the proposal is read as part of the
    request. Damage words with no intent word at all read as a refund request; asking for an
    exception to the policy is a request for a human. A cancellation and another change of the
    same order contradict each other: the agent asks which one is meant."""
    turns = customer_turns(messages)
    customer_id = customer_id_of(messages)
    raw = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    if customer_id is None:
        found = CUSTOMER_ID_RE.search(raw)
        customer_id = found.group(1) if found else None
    clauses = split_clauses(turns)
    request = Request(customer_id, turns, clauses, find_order_ids("\n".join(turns)), raw_text=raw)
    mentions: list[Mention] = []
    for clause in clauses:
        withdrawn = negated_intents_in(clause)
        mentions = [m for m in mentions if m.kind not in withdrawn or m.clause.turn == clause.turn]
        mentions.extend(Mention(kind, clause) for _, kind in intents_in(clause))
    for turn in range(len(turns)):
        if not any(m.clause.turn == turn for m in mentions):
            mentions.extend(_implied([c for c in clauses if c.turn == turn]))
    mentions = _assign_orders(mentions, clauses, find_order_ids)
    mentions += _damage_beside_other_requests(mentions, clauses, find_order_ids)
    mentions.sort(key=lambda m: clauses.index(m.clause))
    if any(m.kind == "escalate" for m in mentions) and EXCEPTION_RE.search(request.text):
        mentions = [m for m in mentions if m.kind in ("escalate", "status")]
    request.mentions = _resolve_conflicts(mentions)
    return request


def _damage_beside_other_requests(
    mentions: list[Mention], clauses: list[Clause], find_order_ids: Any
) -> list[Mention]:
    """Damage stated outright about an order no request is about yet ("the mug in W1009 was
    cracked. Also, cancel W2002") reads as a refund request for it too."""
    covered = {m.order_id for m in mentions if m.kind in ("refund", "exchange", "conflict")}
    out: list[Mention] = []
    for clause in clauses:
        if (
            not damage_in(clause.text)
            or intents_in(clause)
            or any(m.clause == clause for m in mentions)
        ):
            continue
        [mention] = _assign_orders([Mention("refund", clause)], clauses, find_order_ids)
        if mention.order_id not in covered:
            covered.add(mention.order_id)
            out.append(mention)
    return out


def _implied(clauses: list[Clause]) -> list[Mention]:
    """A turn with no intent word: words about an item's condition (damage words, even negated:
    "nothing is wrong, I changed my mind") read as a refund request, a full new address as an
    address change."""
    from casemill.evaluation.reference.slots import address_in

    damaged = next((c for c in clauses if DAMAGE_RE.search(c.text)), None)
    if damaged is not None:
        return [Mention("refund", damaged)]
    addressed = next((c for c in clauses if address_in(c.text)), None)
    return [Mention("change_address", addressed)] if addressed is not None else []


CONFLICTS_WITH_CANCEL = frozenset({"refund", "exchange", "change_address"})


def _resolve_conflicts(mentions: list[Mention]) -> list[Mention]:
    """Cancel plus another change of the same order becomes one `conflict` mention; a status
    question about an order the customer also wants changed is answered by that change."""
    out: list[Mention] = []
    for mention in mentions:
        same = [m for m in mentions if m.order_id == mention.order_id and m is not mention]
        kinds = {m.kind for m in same}
        if mention.order_id and mention.kind == "status" and kinds - {"status"}:
            continue
        if mention.order_id and (
            (mention.kind == "cancel" and kinds & CONFLICTS_WITH_CANCEL)
            or (mention.kind in CONFLICTS_WITH_CANCEL and "cancel" in kinds)
        ):
            if not any(m.kind == "conflict" and m.order_id == mention.order_id for m in out):
                others = tuple(sorted((kinds | {mention.kind}) & CONFLICTS_WITH_CANCEL))
                out.append(Mention("conflict", mention.clause, mention.order_id, others))
            continue
        out.append(mention)
    return out


def damage_in(text: str) -> re.Match[str] | None:
    """The first damage word in `text` that is not negated ("nothing is wrong", "not broken")."""
    for match in DAMAGE_RE.finditer(text):
        before = text[max(0, match.start() - 30) : match.start()]
        if not DAMAGE_NEGATION_RE.search(before):
            return match
    return None


def customer_turns(messages: list[dict[str, Any]]) -> list[str]:
    """The customer's turns, typos fixed; an agreeing last turn brings the proposal it agrees
    to along (the assistant text just before it)."""
    turns: list[str] = []
    last_assistant = ""
    for message in messages:
        role, text = message.get("role"), str(message.get("content") or "")
        if role == "assistant" and text.strip():
            last_assistant = text
        elif role == "user":
            if AFFIRM_RE.search(text) and last_assistant and len(text) < 80:
                turns.append(clean_turn(last_assistant))
            turns.append(clean_turn(text))
            last_assistant = ""
    return turns


OTHER_ORDER_RE = re.compile(
    r"\b(?:other|another|second|different)\s+(?:\w+\s+)?order\b", re.IGNORECASE
)
NO_ID_RE = re.compile(
    r"\b(?:don'?t|do\s+not|can'?t)\s+(?:have|know|remember|find)\s+(?:the|my)\s+(?:order\s+)?(?:number|id)",
    re.IGNORECASE,
)
OTHER_PERSON_RE = re.compile(
    r"\b(?:neighbou?r|coworker|co-worker|colleague|my\s+ex|friend|belongs\s+to|roommate|sister|brother)\b",
    re.IGNORECASE,
)


def _free_id_clause(clause: Clause, mentions: list[Mention]) -> bool:
    """A later clause of the same turn whose order id may complete an earlier request: it asks
    for nothing itself and does not name someone else's order."""
    return not any(m.clause == clause for m in mentions) and not OTHER_PERSON_RE.search(clause.text)


def _assign_orders(
    mentions: list[Mention], clauses: list[Clause], find_order_ids: Any
) -> list[Mention]:
    out: list[Mention] = []
    seen: set[tuple[str, str | None]] = set()
    for mention in mentions:
        index = clauses.index(mention.clause)
        own = find_order_ids(mention.clause.text)
        before = [i for c in clauses[:index] for i in find_order_ids(c.text)]
        other = OTHER_ORDER_RE.search(mention.clause.text)
        if other and not own and not NEGATION_RE.search(mention.clause.text[: other.start()]):
            mention.order_id = None  # "my other order": not the one named before
            mention.not_orders = tuple(dict.fromkeys(before + own))
            out.append(mention)
            continue
        turn = mention.clause.turn
        # "I don't have the order number": an id later in the same turn is not this request's
        no_id = any(NO_ID_RE.search(c.text) for c in clauses if c.turn == turn)
        after = [
            i
            for c in clauses[index + 1 :]
            if c.turn > turn or (not no_id and _free_id_clause(c, mentions))
            for i in find_order_ids(c.text)
        ]
        mention.order_id = (own or before[-1:] or after[:1] or [None])[0]
        key = (mention.kind, mention.order_id)
        if key not in seen:
            seen.add(key)
            out.append(mention)
    return out
