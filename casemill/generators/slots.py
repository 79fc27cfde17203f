"""Protected slots: the spans of customer text that carry the label and must never be edited by
a noise operator (order ids, amounts and other numbers, emails, item and product names and the
words the customer uses for them, customer names, address parts, phrases the expected reply is
checked against, damage words, negations; outside the support domain, every short value of the
environment's records and its words; the words a pack's contract names).

`rewrite_unprotected(text, pattern, fn)` masks the protected spans, lets `fn` edit only the text
between them, and restores the spans verbatim, so a slot can never be altered, whatever `fn` does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from casemill.case.model import Case
from casemill.domains.contract import contract_for

DAMAGE_WORDS = ("cracked", "broken", "shattered", "damaged", "defective", "wrong", "missing")
KEYWORDS = ("cancel", "refund", "exchange", "swap", "return", "address", "human", "status")
NEGATIONS = ("not", "no", "never", "nothing", "none", "neither", "nor", "without")
_STOP = frozenset(
    {
        "the",
        "and",
        "for",
        "with",
        "from",
        "your",
        "you",
        "our",
        "this",
        "that",
        "set",
        "of",
        "a",
        "an",
        "in",
        "on",
        "to",
    }
)
_FIXED = [
    r"#?[Ww]\d{3,}",  # order ids
    r"\b[CcPpIiRrTt]\d+(?:-[\w-]+)?\b",  # customer, product, item, refund, ticket ids
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",  # emails
    # amounts, quantities, zip codes, times and sizes: with a unit glued on (8am, 12oz) or
    # a clock's after a space (3 pm), which carries the meaning as much as the number
    r"\$?\d[\d,]*(?:\.\d+)?(?:[A-Za-z]+|\s?[AaPp]\.?[Mm]\b\.?)?",
    r"\b\w+n't\b",  # don't, isn't, ...
]


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def case_literals(case: Case) -> list[str]:
    """Literal strings of `case` that are protected wherever they occur in its text."""
    out: set[str] = set(DAMAGE_WORDS) | set(NEGATIONS) | set(KEYWORDS)
    st = case.environment.state
    names: list[str] = []
    for cust in (st.get("customers") or {}).values():
        names.append(cust.get("name", ""))
        out.update(_strings(cust.get("address") or {}))
    for order in (st.get("orders") or {}).values():
        names.extend(i.get("name", "") for i in order.get("items", []))
        out.update(_strings(order.get("address") or {}))
    for product in (st.get("products") or {}).values():
        names.append(product.get("name", ""))
        for variant in product.get("variants", []):
            out.update(_strings(variant.get("options") or {}))
    if case.domain != "support":  # a state of records the pack does not know: every short
        # value in it, and its words, may be what the case is about (a name, a city, an id)
        for value in _strings(st):
            if len(value.split()) <= 5:
                names.append(value)
    for name in names:
        out.add(name)
        out.update(w for w in re.findall(r"[A-Za-z]{3,}", name) if w.lower() not in _STOP)
    e = case.expected
    for call in (*e.tool_calls, *e.forbidden_calls):
        out.update(_strings(call.params))
    out.update(e.reply_contains)
    out.update(e.reply_excludes)
    contract = contract_for(case.domain)  # the words a pack's contract says carry labels
    if contract is not None:
        out.update(contract.protected(case))
    return sorted((s for s in out if s and s.strip() and len(s) > 1), key=lambda s: (-len(s), s))


_FIXED_RE = re.compile("|".join(_FIXED), re.IGNORECASE)


def _wordchar(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


class Protector:
    """Finds protected spans: the fixed patterns (ids, emails, numbers, n't words) and each
    literal as a word start, case-insensitively (`mug` protects `mug` and `mugs`)."""

    def __init__(self, literals: Iterable[str]):
        self.literals = tuple(
            sorted({lit.lower() for lit in literals if lit}, key=lambda s: (-len(s), s))
        )
        self._seen: dict[str, tuple[tuple[int, int], ...]] = {}

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The protected spans of `text`, merged and in order (remembered for recent texts:
        every attempt on a case scans the same turns)."""
        hit = self._seen.get(text)
        if hit is None:
            if len(self._seen) >= 64:
                self._seen.clear()
            hit = self._seen[text] = tuple(self._find(text))
        return list(hit)

    def _find(self, text: str) -> list[tuple[int, int]]:
        found = [(m.start(), m.end()) for m in _FIXED_RE.finditer(text) if m.end() > m.start()]
        low = text.lower()
        for lit in self.literals:
            at = low.find(lit)
            while at >= 0:
                if at == 0 or not _wordchar(text[at - 1]):
                    end = at + len(lit)
                    while end < len(text) and _wordchar(text[end]):
                        end += 1
                    found.append((at, end))
                at = low.find(lit, at + 1)
        merged: list[tuple[int, int]] = []
        for a, b in sorted(found):
            if merged and a < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        return merged

    def findall(self, text: str) -> list[str]:
        return [text[a:b] for a, b in self.spans(text)]


def protected_pattern(literals: Iterable[str]) -> Protector:
    return Protector(literals)


_PROTECTORS: dict[str, Protector] = {}


def case_protector(case: Case) -> Protector:
    """`protected_pattern(case_literals(case))`, cached by content id (the literals depend on
    what the case means only), so the attempts on one case share one."""
    protector = _PROTECTORS.get(case.id)
    if protector is None:
        if len(_PROTECTORS) >= 256:
            _PROTECTORS.clear()
        protector = _PROTECTORS[case.id] = Protector(case_literals(case))
    return protector


def rewrite_unprotected(text: str, protector: Protector, fn: Callable[[str], str]) -> str:
    """Apply `fn` to the stretches of `text` between protected spans; spans kept verbatim.

    White space around each stretch is kept; stretches without a letter are left alone."""
    out: list[str] = []
    pos = 0
    for a, b in protector.spans(text):
        out.append(_edit(text[pos:a], fn))
        out.append(text[a:b])
        pos = b
    out.append(_edit(text[pos:], fn))
    return "".join(out)


def _edit(chunk: str, fn: Callable[[str], str]) -> str:
    core = chunk.strip()
    if not any(ch.isalpha() for ch in core):
        return chunk
    lead = chunk[: len(chunk) - len(chunk.lstrip())]
    trail = chunk[len(chunk.rstrip()) :]
    new = fn(core)
    if not new.strip():
        return chunk
    if not lead and new[:1].isalnum() and not core[:1].isalnum():
        new = " " + new  # never glue a new word onto the protected span before
    if not trail and new[-1:].isalnum() and not core[-1:].isalnum():
        new = new + " "
    return lead + new + trail
