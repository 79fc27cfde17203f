"""The optional named-entity layer: person names in free text that nothing announces and the
first-name lexicon misses (a single surname, a name of another language), found by a spaCy
pipeline's `PERSON` entities.

Off by default. On with `casemill mine --names-model en_core_web_sm` (or any installed spaCy
pipeline package) after `pip install 'casemill[ner]'` and the model's package. The model is
loaded from an installed package only (`spacy.load` of a package name): nothing is downloaded
at run time. spaCy is used directly rather than through Presidio's `SpacyRecognizer`: Presidio
adds its own imports and start-up on top of the same pipeline and finds the same `PERSON`
entities. Without the layer, the mine summary says that uncued names in text are not searched
(`summary_note`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from casemill.errors import UserError

# texts the pipeline reads at once; a text longer than this is cut (instructions repeated in
# every conversation are read once: `persons` remembers them)
MAX_CHARS = 20_000


@lru_cache(maxsize=2)
def pipeline(model: str) -> Any:
    """The spaCy pipeline of the installed package `model`, with only what finds entities."""
    try:
        import spacy
    except ImportError:
        raise UserError(
            "--names-model needs spaCy: pip install 'casemill[ner]', then the model's package"
        ) from None
    try:
        return spacy.load(model, exclude=["parser", "lemmatizer", "attribute_ruler", "tagger"])
    except OSError:
        raise UserError(
            f"spaCy model {model!r} is not installed as a package; install it (models are never "
            "downloaded while mining), or mine without --names-model"
        ) from None


@lru_cache(maxsize=256)
def _persons_of(model: str, text: str) -> tuple[str, ...]:
    doc = pipeline(model)(text[:MAX_CHARS])
    return tuple(  # (a word in capitals is a code, JFK, not a name)
        e.text
        for e in doc.ents
        if e.label_ == "PERSON" and any(c.isalpha() for c in e.text) and not e.text.isupper()
    )


def persons(model: str, texts: list[str]) -> list[str]:
    """The person names `model` finds in `texts` (texts without a capital letter are skipped:
    a name in them is not found by this layer either)."""
    found: list[str] = []
    for text in texts:
        if text and not text.islower() and any(ch.isupper() for ch in text):
            found += _persons_of(model, text)
    return found


def summary_note(redacted: bool, model: str | None) -> str:
    """What the mine summary says about names in free text that nothing announces."""
    if not redacted:
        return ""
    if model:
        return f"searched by the named-entity layer ({model})"
    return (
        "not searched: named-entity layer off (--names-model); full names starting with a "
        "known first name are found"
    )
