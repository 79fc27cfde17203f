"""Invariant noise: typos, keyboard and OCR errors, spelling mistakes (nlpaug, offline
augmenters), slang, filler, casing and support-domain paraphrases (the project's lexicons).

Every operator edits customer turns only, and only between protected slots (see `slots.py`),
so the expected state stays right as it is. nlpaug draws from the module-level `random` (and
numpy): each call seeds both from the candidate's own `random.Random` right before augmenting,
and SpellingAug's dictionary lists are sorted once, so the output depends on the seed alone.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable
from typing import Any

from casemill.case.model import Case, derive
from casemill.generators.framework import NotApplicable, operator
from casemill.generators.lexicon import lexicon
from casemill.generators.slots import case_protector, rewrite_unprotected

INVARIANT = "expected unchanged: only customer text between protected slots is edited"


def _split(text: str) -> list[str]:
    """Tokens for nlpaug: white-space separated words (its default splits "what's" apart)."""
    return text.split(" ")


def _join(tokens: list[str]) -> str:
    return " ".join(tokens)


@functools.cache
def _augmenter(kind: str, p: float, action: str = "") -> Any:
    import nlpaug.augmenter.char as nac
    import nlpaug.augmenter.word as naw

    words = {"tokenizer": _split, "reverse_tokenizer": _join}
    if kind == "keyboard":
        return nac.KeyboardAug(
            aug_char_p=p, aug_word_p=p, include_special_char=False, include_numeric=False, **words
        )
    if kind == "ocr":
        return nac.OcrAug(aug_char_p=p, aug_word_p=p, **words)
    if kind == "char":
        return nac.RandomCharAug(
            action=action, aug_char_p=p, aug_word_p=p, include_numeric=False, spec_char="", **words
        )
    if kind == "spelling":
        aug = naw.SpellingAug(aug_p=p, tokenizer=_split, reverse_tokenizer=_join)
        for key, values in aug.model.dict.items():  # set order depends on PYTHONHASHSEED
            values.sort()
            aug.model.dict[key] = values
        return aug
    raise ValueError(kind)


def _nlpaug(aug: Any, rng: random.Random) -> Callable[[str], str]:
    def run(text: str) -> str:
        import numpy as np

        seed = rng.getrandbits(32)
        random.seed(seed)
        np.random.seed(seed)
        out = aug.augment(text)
        return out[0] if isinstance(out, list) and out else (out or text)

    return run


def _edit_customer_turns(case: Case, rng: random.Random, fn: Callable[[str], str]) -> list[Case]:
    """Customer turns edited between protected slots; a case with no customer turn but a
    scenario (an imported task a simulated customer plays) has its scenario edited instead."""
    pattern = case_protector(case)
    if case.user_scenario and not any(t.role == "customer" for t in case.conversation):
        new = rewrite_unprotected(case.user_scenario, pattern, fn)
        if new == case.user_scenario:
            raise NotApplicable("no editable scenario text")
        return [derive(case, user_scenario=new, tags=_robust(case))]
    if not case.conversation:
        raise NotApplicable("needs a case with a conversation or a scenario")
    turns = list(case.conversation)
    changed = False
    for index, turn in enumerate(turns):
        if turn.role != "customer":
            continue
        new = rewrite_unprotected(turn.content, pattern, fn)
        if new != turn.content:
            turns[index] = turn.model_copy(update={"content": new})
            changed = True
    if not changed:
        raise NotApplicable("no editable customer text")
    return [derive(case, conversation=tuple(turns), tags=_robust(case))]


def _robust(case: Case) -> Any:
    t = case.tags
    category = "robustness" if t.category == "capability" else t.category
    return t.model_copy(update={"category": category})


@operator(kind="noise", name="keyboard_typo", version="1", label_rule=INVARIANT)
def keyboard_typo(case: Case, rng: random.Random, p: float = 0.08) -> list[Case]:
    """Keyboard-neighbour typos (nlpaug KeyboardAug)."""
    return _edit_customer_turns(case, rng, _nlpaug(_augmenter("keyboard", p), rng))


@operator(kind="noise", name="ocr_noise", version="1", label_rule=INVARIANT)
def ocr_noise(case: Case, rng: random.Random, p: float = 0.08) -> list[Case]:
    """OCR confusions such as 0/o, 1/l (nlpaug OcrAug)."""
    return _edit_customer_turns(case, rng, _nlpaug(_augmenter("ocr", p), rng))


@operator(kind="noise", name="char_noise", version="1", label_rule=INVARIANT)
def char_noise(case: Case, rng: random.Random, p: float = 0.06) -> list[Case]:
    """Random character insertions, swaps or deletions (nlpaug RandomCharAug)."""
    action = rng.choice(["insert", "swap", "delete"])
    return _edit_customer_turns(case, rng, _nlpaug(_augmenter("char", p, action), rng))


@operator(kind="noise", name="spelling_noise", version="1", label_rule=INVARIANT)
def spelling_noise(case: Case, rng: random.Random, p: float = 0.15) -> list[Case]:
    """Common human misspellings (nlpaug SpellingAug and its bundled dictionary)."""
    return _edit_customer_turns(case, rng, _nlpaug(_augmenter("spelling", p), rng))


@functools.lru_cache(maxsize=1024)
def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", re.IGNORECASE)


def _phrase_sub(table: list[tuple[str, list[str]]], rng: random.Random, p: float) -> Callable:
    def run(text: str) -> str:
        for phrase, options in table:
            pat = _phrase_pattern(phrase)
            if not pat.search(text):
                continue
            text = pat.sub(
                lambda m, opts=options: (
                    _cased(rng.choice(opts), m.group(0)) if rng.random() < p else m.group(0)
                ),
                text,
            )
        return text

    return run


def _cased(new: str, old: str) -> str:
    if old[:1].isupper() and new[:1].islower():
        return new[:1].upper() + new[1:]
    return new


@operator(kind="noise", name="slang", version="1", label_rule=INVARIANT)
def slang(case: Case, rng: random.Random, p: float = 0.7) -> list[Case]:
    """Chat slang and abbreviations from the slang lexicon (please -> pls, you -> u)."""
    table = sorted(lexicon("slang").items(), key=lambda kv: -len(kv[0]))
    return _edit_customer_turns(case, rng, _phrase_sub(table, rng, p))


@operator(kind="noise", name="paraphrase", version="1", label_rule=INVARIANT)
def paraphrase(case: Case, rng: random.Random, p: float = 0.8) -> list[Case]:
    """Support-domain paraphrases from the lexicon (I would like -> I'd like)."""
    table = sorted(((k, v) for k, v in lexicon("paraphrases")), key=lambda kv: -len(kv[0]))
    return _edit_customer_turns(case, rng, _phrase_sub(table, rng, p))


_COMMA_GAP = re.compile(r"\s*,\s*")


@operator(kind="noise", name="filler", version="2", label_rule=INVARIANT)
def filler(case: Case, rng: random.Random, inserts: int = 2) -> list[Case]:
    """Hesitations and pleasantries: filler words at clause starts, an opener and a closer."""
    if not case.conversation:
        raise NotApplicable("needs a case with a conversation or a scenario")
    lex = lexicon("filler")
    protector = case_protector(case)
    turns = list(case.conversation)
    customer = [i for i, t in enumerate(turns) if t.role == "customer"]
    if not customer:
        raise NotApplicable("no customer text")
    for index in customer:
        text = _with_fillers(turns[index].content, protector, rng, lex["inserts"], inserts)
        if index == customer[-1]:
            text = f"{rng.choice(lex['openers'])} {text} {rng.choice(lex['closers'])}"
        turns[index] = turns[index].model_copy(update={"content": text})
    return [derive(case, conversation=tuple(turns), tags=_robust(case))]


def _with_fillers(
    text: str, protector: Any, rng: random.Random, words: list[str], count: int
) -> str:
    """`text` with `count` filler words inserted at clause starts (the text's start or after
    punctuation), never inside a protected span, nor between two joined by a comma alone (the
    street, city and zip of an address are protected each, but are one slot)."""
    spans: list[tuple[int, int]] = []
    for a, b in protector.spans(text):
        if spans and _COMMA_GAP.fullmatch(text, spans[-1][1], a):
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    spots = [0] + [
        m.end()
        for m in re.finditer(r"[,.!?;:]\s+", text)
        if not any(a < m.end() < b for a, b in spans)
    ]
    for at in sorted({rng.choice(spots) for _ in range(count)}, reverse=True):
        text = f"{text[:at]}{rng.choice(words)}, {text[at:]}"
    return text


@operator(kind="noise", name="casing", version="1", label_rule=INVARIANT)
def casing(case: Case, rng: random.Random) -> list[Case]:
    """All lower case, all upper case, or no capitals at sentence starts (slots keep theirs)."""
    style = rng.choice(["lower", "upper", "nocaps"])

    def run(text: str) -> str:
        if style == "lower":
            return text.lower()
        if style == "upper":
            return text.upper()
        return re.sub(r"(^|[.!?]\s+)([A-Z])", lambda m: m.group(1) + m.group(2).lower(), text)

    return _edit_customer_turns(case, rng, run)
