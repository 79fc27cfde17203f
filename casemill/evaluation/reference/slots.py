"""Slots of a request, read from the customer's words once the order is known: which items
(by a word of their name), which of them are damaged and why, an amount or share asked back, a
new address, the variant wanted in an exchange. Regexes and keyword lists, nothing learned."""

from __future__ import annotations

import re
from typing import Any

from casemill.evaluation.reference.extract import (
    DAMAGE_WORDS,
    FINE_RE,
    PRONOUN_RE,
    STOPWORDS,
    Clause,
    damage_in,
)


def stem(word: str) -> str:
    """A plural's singular, roughly (`glasses` -> `glass`, `mugs` -> `mug`)."""
    word = word.lower()
    if word.endswith("es") and word[:-2].endswith(("ss", "sh", "ch", "x")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def item_words(name: str) -> set[str]:
    return {
        stem(w) for w in re.findall(r"[a-z]+", name.lower()) if len(w) >= 3 and w not in STOPWORDS
    }


def _has_word(text: str, word: str) -> bool:
    return re.search(rf"\b{re.escape(word)}(?:s|es)?\b", text, re.IGNORECASE) is not None


def match_items(text: str, items: list[dict[str, Any]]) -> tuple[list[str], bool]:
    """Items named in `text` by a word of their name; (ids, ambiguous). The item whose name
    matches more words wins over one that matches fewer of the same; a tie is ambiguous."""
    matched = {
        i["item_id"]: {w for w in item_words(i["name"]) if _has_word(text, w)} for i in items
    }
    matched = {k: v for k, v in matched.items() if v}
    keep = [k for k, v in matched.items() if not any(v < other for other in matched.values())]
    ambiguous = any(matched[a] == matched[b] for a in keep for b in keep if a < b)
    return keep, ambiguous


def damaged_items(
    clauses: list[Clause], items: list[dict[str, Any]]
) -> tuple[dict[str, str], bool, str | None]:
    """Items said to be damaged (id -> refund reason), whether that was ambiguous, and the
    reason heard anywhere. A later turn that names the items (the answer to "which item?")
    wins over an earlier, ambiguous one."""
    per_turn: dict[int, tuple[dict[str, str], bool]] = {}
    heard, last = None, []
    for clause in clauses:
        ids, amb = match_items(clause.text, items)
        found = damage_in(clause.text)
        if found:
            reason = DAMAGE_WORDS[found.group(0).lower()]
            heard = heard or reason
            fine = set()
            for fine_match in FINE_RE.finditer(clause.text):
                part = re.split(r",|\band\b", clause.text[: fine_match.end()])[-1]
                fine |= set(match_items(part, items)[0])
            targets = [i for i in ids if i not in fine] or (
                last if PRONOUN_RE.search(clause.text) else []
            )
            out, ambiguous = per_turn.setdefault(clause.turn, ({}, False))
            for target in targets:
                out.setdefault(target, reason)
            per_turn[clause.turn] = (out, ambiguous or (amb and len(targets) > 1))
        elif ids and clause.turn in per_turn and not per_turn[clause.turn][0]:
            per_turn[clause.turn] = ({i: heard or "" for i in ids}, amb)
        if ids:
            last = ids
    for turn in sorted(per_turn, reverse=True):
        out, ambiguous = per_turn[turn]
        if out and not ambiguous:
            return out, False, heard
    merged: dict[str, str] = {}
    for out, _ in per_turn.values():
        merged.update(out)
    return merged, any(a for _, a in per_turn.values()), heard


# -- money, addresses, variants -----------------------------------------------------------
ASKED_AMOUNT_RES = (
    re.compile(
        r"\bpartial\s+refund\s+(?:of\s+|for\s+)?(?:just\s+|only\s+)?\$?\s?(\d+(?:\.\d{1,2})?)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\brefund\s+(?:me\s+)?(?:of\s+)?(?:just\s+|only\s+)?\$\s?(\d+(?:\.\d{1,2})?)",
        re.IGNORECASE,
    ),
    re.compile(r"\brefund\s+(?:me\s+)?(?:of\s+)?(?:just\s+|only\s+)?(\d+\.\d{2})\b", re.IGNORECASE),
    re.compile(r"\$?\s?(\d+\.\d{2})\s+(?:back|refund(?:ed)?|credit(?:ed)?)\b", re.IGNORECASE),
    re.compile(r"\$\s?(\d+(?:\.\d{1,2})?)\s+(?:back|refund(?:ed)?|credit(?:ed)?)\b", re.IGNORECASE),
    re.compile(r"\bpartial\b[^.$\d]{0,40}\$?\s?(\d+\.\d{2}|\d+)\b", re.IGNORECASE),
)


FRACTION_RE = re.compile(
    r"\b(?:refund|back|credit)\w*\s+(?:me\s+)?(half|a\s+third|a\s+quarter|(\d{1,2})\s*%)",
    re.IGNORECASE,
)
FRACTIONS = {"half": 0.5, "a third": 1 / 3, "a quarter": 0.25}


def asked_fraction(text: str) -> float | None:
    """A share of the price the customer asks back ("refund half of what I paid")."""
    match = FRACTION_RE.search(text)
    if match is None:
        return None
    if match.group(2):
        return int(match.group(2)) / 100
    return FRACTIONS[re.sub(r"\s+", " ", match.group(1).lower())]


def asked_amount(text: str) -> float | None:
    """An amount the customer asks to get back ("a partial refund of 5.00", "$5 back")."""
    best: tuple[int, float] | None = None
    for pattern in ASKED_AMOUNT_RES:
        match = pattern.search(text)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), float(match.group(1).replace(",", "")))
    return best[1] if best else None


ADDRESS_RE = re.compile(
    r"(?<![A-Za-z0-9])(?P<street1>\d+[A-Za-z]?\s+[A-Za-z0-9 .'-]+?)\s*,\s*"
    r"(?:(?P<street2>(?i:apt|apartment|suite|ste|unit|floor|fl|#)\.?\s*[A-Za-z0-9-]+)\s*,\s*)?"
    r"(?P<city>[A-Za-z][A-Za-z .'-]*?)(?:\s*,\s*(?P<state>[A-Z]{2})\s*,?\s*|\s*,\s*|\s+)"
    r"(?P<zip>\d{5}(?:-\d{4})?)\b",
)


def address_in(text: str) -> dict[str, str] | None:
    """A US-style address: `12 Oak Street, [Apt 4,] Springfield, IL 62704`."""
    found = None
    for match in ADDRESS_RE.finditer(text):
        found = match  # the last address written is the new one
    if found is None:
        return None
    street1 = re.sub(r"^(?:to|at|is)\s+", "", found.group("street1").strip(), flags=re.IGNORECASE)
    street1 = re.split(r"\b(?:to|at|is)\s+(?=\d)", street1)[-1].strip()
    address = {"street1": street1}
    if found.group("street2"):
        address["street2"] = found.group("street2").strip()
    address["city"] = found.group("city").strip()
    if found.group("state"):
        address["state"] = found.group("state")
    address["zip"] = found.group("zip")
    return address


VARIANT_RE = re.compile(r"\b(P\d{2,}(?:-[A-Za-z0-9]+)+)\b")
SIZES = {
    "xxs": "XXS",
    "xs": "XS",
    "s": "S",
    "m": "M",
    "l": "L",
    "xl": "XL",
    "xxl": "XXL",
    "small": "S",
    "medium": "M",
    "large": "L",
    "extra large": "XL",
    "x-large": "XL",
}
SIZE_RE = re.compile(
    r"(?<!too\s)(?<!too\s\s)\b(?:size\s+(\d+(?:\.5)?|xxs|xs|s|m|l|xl|xxl)|(small|medium|large|extra\s+large|x-large))\b",
    re.IGNORECASE,
)
COLOURS = frozenset(
    [
        "black",
        "white",
        "red",
        "blue",
        "green",
        "yellow",
        "orange",
        "purple",
        "pink",
        "brown",
        "grey",
        "gray",
        "navy",
        "beige",
        "teal",
        "silver",
        "gold",
        "olive",
        "maroon",
        "cream",
        "charcoal",
        "tan",
        "brass",
        "indigo",
        "clear",
        "natural",
    ]
)
THE_X_ONE_RE = re.compile(r"\b(?:the|a|an|in)\s+([a-z]+)\s+one\b", re.IGNORECASE)


def _is_size(token: str) -> bool:
    """A size token of a variant id: S, XL, OS (one size), 9, 10.5."""
    if re.fullmatch(r"\d+(?:\.5)?", token):
        return True
    return token.upper() in SIZES.values() or (token.isupper() and len(token) <= 3)


def wanted_variant(text: str, current: str | None) -> str | None:
    """The variant the customer wants: an id they wrote, or their current variant id with the
    size or colour they name swapped in (`P100-M-blue` + "size L" -> `P100-L-blue`)."""
    ids = [v for v in VARIANT_RE.findall(text) if v != current]
    if ids or not current:
        return ids[-1] if ids else None
    parts = current.split("-")
    sizes = []
    for match in SIZE_RE.finditer(text):
        raw = (match.group(1) or match.group(2)).lower()
        sizes.append(SIZES.get(re.sub(r"\s+", " ", raw), raw.upper()))
    colours = [w.lower() for w in re.findall(r"[A-Za-z]+", text) if w.lower() in COLOURS]
    colours += [
        m.group(1).lower() for m in THE_X_ONE_RE.finditer(text) if m.group(1).lower() not in SIZES
    ]
    for index, part in enumerate(parts[1:], start=1):
        if _is_size(part):
            new = next((z for z in sizes if z != part.upper()), None)
            if new:
                parts[index] = new if not part.islower() else new.lower()
        elif part.isalpha():
            new = next((c for c in colours if c != part.lower()), None)
            if new:
                parts[index] = new if part.islower() else new.capitalize()
    wanted = "-".join(parts)
    return wanted if wanted != current else None
