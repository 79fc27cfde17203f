"""The customer's words as the reference agent's rules read them: sentences, the sentences
that try to steer the agent (left out), fillers, digits read for letters and one-edit typos of
keywords (read back), and the damage vocabulary. Regexes and word lists, nothing learned."""

from __future__ import annotations

import re

SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+|(?<=\|>)\s*|\n+")
# Sentences that try to steer the agent rather than ask for something: prompt injection,
# instruction override, authority claims, pressure, "you already agreed". What they ask for is
# not acted on; a sentence demanding an exact phrase ("reply with "...""), and whatever sits
# between two such sentences, counts too.
ATTACK_RE = re.compile(
    r"ignore\s+(?:all\s+)?(?:the\s+|your\s+)?(?:previous|prior|above)|disregard|system\s*(?:prompt|:)|"
    r"<[^\s>]*\|[^\s>]*>|\[assistant|maintenance\s+mode|no\s+restrictions|policy\s+rules\s+are\s+suspended|"
    r"new\s+(?:instruction|policy)|forget\s+the\s+rules|follow\s+my\s+instructions|developers\s+told|"
    r"authori[sz]ing\s+you|override\s+code|instructing\s+you|team\s+lead|employee\s+id|"
    r"nobody\s+will\s+check|post\s+about\s+this|unless\s+you|we\s+will\s+sue|lawyer|"
    r"rules\s+say\s+otherwise|exception\s+this\s+once|don'?t\s+care\s+what\s+the\s+policy|"
    r"other\s+agents\s+always|while\s+you'?re\s+at\s+it|already\s+agreed|promised\s+to|"
    r"told\s+me\s+earlier|go\s+back\s+on\s+your\s+word|honou?r\s+that\s+promise",
    re.IGNORECASE,
)
CANARY_RE = re.compile(
    r"\b(?:reply|say|output|acknowledge|confirm|respond|start\s+your\s+reply)\b[^\"\n]{0,30}\"[^\"]{2,}\"",
    re.IGNORECASE,
)
FILLER_RE = re.compile(
    r"\s*\b(?:um+|uh+|erm|just|you\s+know|i\s+mean|i\s+guess|basically|literally|honestly|actually|"
    r"kind\s+of|sort\s+of)\s*,\s*",
    re.IGNORECASE,
)
LIKE_FILLER_RE = re.compile(r",\s*like\s*,\s*", re.IGNORECASE)

DAMAGE_WORDS: dict[str, str] = {
    "cracked": "damaged",
    "broken": "damaged",
    "broke": "damaged",
    "shattered": "damaged",
    "damaged": "damaged",
    "dented": "damaged",
    "chipped": "damaged",
    "smashed": "damaged",
    "torn": "damaged",
    "ripped": "damaged",
    "scratched": "damaged",
    "leaking": "damaged",
    "defective": "defective",
    "faulty": "defective",
    "doesn't work": "defective",
    "does not work": "defective",
    "stopped working": "defective",
    "won't turn on": "defective",
    "not working": "defective",
    "dead on arrival": "defective",
    "malfunction": "defective",
    "arrived wrong": "wrong_item",
    "wrong item": "wrong_item",
    "wrong one": "wrong_item",
    "wrong size": "wrong_item",
    "wrong color": "wrong_item",
    "wrong colour": "wrong_item",
    "not what i ordered": "wrong_item",
    "sent the wrong": "wrong_item",
    "wrong": "wrong_item",
    "the one in the box is": "wrong_item",
    "instead of the": "wrong_item",
    "hole": "damaged",
    "tear": "damaged",
    "snag": "damaged",
    "scratch": "damaged",
    "crushed": "damaged",
    "peeled off": "defective",
    "dead": "defective",
    "won't charge": "defective",
    "wont charge": "defective",
    "flickers": "defective",
    "goes dark": "defective",
    "won't pair": "defective",
    "will pair with anything": "defective",
    "stopped": "defective",
    "missing": "missing",
    "never arrived": "missing",
    "wasn't in the": "missing",
    "without the": "missing",
    "was not in the": "missing",
    "not in the box": "missing",
    "not included": "missing",
}


def _marked_sentences(turn: str) -> list[tuple[str, bool]]:
    """The turn's sentences, each with whether it tries to steer the agent (see `ATTACK_RE`);
    whatever sits between two such sentences counts too."""
    sentences = [s for s in SENTENCE_RE.split(turn) if s and s.strip()]
    marked = [bool(ATTACK_RE.search(s) or CANARY_RE.search(s)) for s in sentences]
    hits = [i for i, m in enumerate(marked) if m]
    for first, last in zip(hits, hits[1:], strict=False):
        for i in range(first, last):
            marked[i] = True
    return list(zip(sentences, marked, strict=True))


def without_attacks(turn: str) -> str:
    """The turn without the sentences that try to steer the agent."""
    return " ".join(s for s, marked in _marked_sentences(turn) if not marked)


def attacks_in(turn: str) -> list[str]:
    """The sentences of a turn that try to steer the agent (what a careless agent would obey)."""
    return [s for s, marked in _marked_sentences(fix_typos(turn)) if marked]


KEYWORDS = frozenset(
    [
        "refund",
        "cancel",
        "exchange",
        "address",
        "broken",
        "cracked",
        "damaged",
        "shattered",
        "defective",
        "missing",
        "arrived",
        "delivered",
        "shipped",
        "status",
        "human",
        "manager",
        "please",
        "order",
        "return",
        "replace",
        "receive",
        "received",
        "update",
        "change",
        "money",
        "arrive",
        "instead",
        "yesterday",
        "shipping",
        "exchange",
        "speaker",
        "output",
        "confirm",
        "reply",
        "disregard",
        "instructions",
        "system",
        "ignore",
        "previous",
        "acknowledge",
        "policy",
        "swapped",
        "cancelled",
        "exchanged",
        "refunded",
    ]
) | frozenset(w for w in DAMAGE_WORDS if " " not in w and "'" not in w)


def _one_edit(a: str, b: str) -> bool:
    """Whether a and b are one insertion, deletion, substitution or transposition apart."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


OCR_DIGITS = str.maketrans({"0": "o", "1": "l", "3": "e", "4": "a", "5": "s", "8": "s"})
ID_LIKE_RE = re.compile(r"[WCPIR]\d+|\d+[a-z]{0,2}", re.IGNORECASE)


def fix_typos(text: str) -> str:
    """Words one edit away from a keyword (`refnd`, `brokn`, `crakced`, `oredr`) read as the
    keyword, after a digit read for a letter inside a word (`in8tead`, `0kder`, `Gance1`) is
    read back; ids (`W1001`, `P100-M`) and quantities (`12oz`, `2nd`) are left alone."""

    def ocr(match: re.Match[str]) -> str:
        token = match.group(0)
        digits = sum(ch.isdigit() for ch in token)
        if digits != 1 or len(token) - digits < 3 or ID_LIKE_RE.fullmatch(token):
            return token
        return token.translate(OCR_DIGITS)

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        low = word.lower()
        if low in KEYWORDS or len(low) < 5:
            return word
        return next((k for k in sorted(KEYWORDS) if len(k) >= 5 and _one_edit(low, k)), word)

    text = re.sub(r"(?<![-\w])[A-Za-z0-9]+(?![-\w])", ocr, text)
    return re.sub(r"[A-Za-z]+", fix, text)


def clean_turn(text: str) -> str:
    """A customer turn as the rules read it: fillers out, typos fixed, attacks left out."""
    text = LIKE_FILLER_RE.sub(", ", FILLER_RE.sub(" ", text))
    return without_attacks(fix_typos(re.sub(r" {2,}", " ", text)))
