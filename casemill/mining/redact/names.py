"""A name written after what announces one: the customer giving it ("my name is ..."), a
title ("Mrs. ..."), a letter's sign-off ("Regards, ..."), a relative ("my wife ..."), a
recipient ("send it to ..."); and a full name without a cue, by a lexicon of first names
(`uncued_names`). Names a lexicon misses (and single names) without a cue are the optional
named-entity layer's (`entities`)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

# what a name follows in text: the customer giving it, a title, a letter's sign-off
NAME_HINTS = (
    "my name is",
    "this is",
    "i am",
    "i'm",
    "mr.",
    "mrs.",
    "ms.",
    "dr.",
    "mr",
    "mrs",
    "ms",
    "miss",
    "sincerely,",
    "regards,",
    "name's",
    "named",
    "my wife",
    "my husband",
    "my partner",
    "my son",
    "my daughter",
    "my mother",
    "my father",
    "my mom",
    "my dad",
    "my brother",
    "my sister",
)
# up to two words after a hint: letters of any script, with inner apostrophes and hyphens
# (O'Brien, Garcia-Lopez); `_is_name_word` says which are a name's
_LETTERS = r"[^\W\d_](?:[^\W\d_]|['’-](?=[^\W\d_]))*"
_NAME_AFTER = re.compile(rf"\s+({_LETTERS})(?:\s+({_LETTERS}))?")


def _is_name_word(word: str) -> bool:
    """A name's word: capitalised and not all capitals (McDonald, José, Łukasz, O'Brien), or
    of a script without capitals (王伟)."""
    if len(word) < 2:
        return False
    head = word[0]
    if head.isupper():
        return not word.isupper()
    return not head.islower()


def name_after(text: str, at: int) -> tuple[int, str] | None:
    """Where the name a hint ending at `at` is followed by starts, and the name: one or two
    name words (`_is_name_word`), the first not a word such as Sorry or Hello."""
    m = _NAME_AFTER.match(text, at)
    if m is None or not _is_name_word(first := m.group(1)) or first in _NOT_NAMES:
        return None
    second = m.group(2)
    end = m.end(2) if second is not None and _is_name_word(second) else m.end(1)
    return m.start(1), text[m.start(1) : end]


_NOT_NAMES = frozenset(
    [
        "Dr",
        "Mr",
        "Mrs",
        "Ms",
        "Miss",
        "Sorry",
        "Not",
        "Just",
        "Trying",
        "Looking",
        "Calling",
        "Writing",
        "Here",
        "Happy",
        "Glad",
        "Still",
        "Going",
        "Unable",
        "Very",
        "So",
        "The",
        "A",
        "An",
        "Hi",
        "Hello",
        "Back",
        "Done",
        "Ready",
        "Sure",
        "Fine",
        "Good",
        "Ok",
        "Okay",
        "Afraid",
        "Interested",
    ]
)


# A full name in text without a cue: a first name of `FIRST_NAMES` (written capitalised)
# followed by a capitalised word that is no place's or company's word (`_NOT_SURNAMES`):
# "please send it to Philippa Drinkwater", "it's under Tom Baker's name".
FIRST_NAMES_FILE = Path(__file__).with_name("first_names.txt")
# first names that are also places or everyday words written capitalised (Charlotte Douglas
# airport, Will Call, May Day), never taken as a name's start without a cue
NOT_FIRST_NAMES = frozenset(
    [
        "april",
        "august",
        "austin",
        "bill",
        "chase",
        "china",
        "dakota",
        "dale",
        "dallas",
        "denver",
        "earl",
        "faith",
        "florence",
        "frank",
        "georgia",
        "glen",
        "grace",
        "grant",
        "guy",
        "hope",
        "india",
        "israel",
        "jackson",
        "jordan",
        "joy",
        "june",
        "king",
        "lane",
        "mark",
        "may",
        "miles",
        "orlando",
        "paris",
        "phoenix",
        "prince",
        "ray",
        "rich",
        "rose",
        "ruby",
        "santa",
        "savannah",
        "sky",
        "summer",
        "sydney",
        "victor",
        "victoria",
        "virginia",
        "will",
        "winter",
        "carolina",
    ]
)
_NOT_SURNAMES = frozenset(
    [
        "airport",
        "airlines",
        "airline",
        "airways",
        "international",
        "county",
        "city",
        "street",
        "avenue",
        "road",
        "beach",
        "park",
        "lake",
        "river",
        "valley",
        "hills",
        "heights",
        "springs",
        "station",
        "terminal",
        "center",
        "centre",
        "hotel",
        "bank",
        "university",
        "college",
        "hospital",
        "inc",
        "ltd",
        "llc",
        "group",
        "express",
    ]
)
_CAPITALISED = r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+"
UNCUED = re.compile(rf"({_CAPITALISED}(?:-{_CAPITALISED})?) ({_CAPITALISED}(?:['’-][A-Za-zÀ-ÿ]+)?)")


@lru_cache(maxsize=1)
def first_names() -> frozenset[str]:
    """The first names (lowered) that start a name without a cue."""
    words = FIRST_NAMES_FILE.read_text(encoding="utf-8").split()
    return frozenset(words) - NOT_FIRST_NAMES


def uncued_names(text: str) -> list[tuple[int, str, str]]:
    """(where, "name", name) of each first name of the lexicon followed by a capitalised word
    that is no place's or company's (`_NOT_SURNAMES`); a possessive's `'s` is left out."""
    found = []
    lexicon = first_names()
    for m in UNCUED.finditer(text):
        start = m.start()
        if start and (text[start - 1].isalnum() or text[start - 1] in "_-"):
            continue
        first, last = m.group(1), m.group(2)
        if first.split("-")[0].lower() not in lexicon:
            continue
        for tail in ("'s", "’s"):
            last = last.removesuffix(tail)
        if last.lower() in _NOT_SURNAMES or len(last) < 2:
            continue
        found.append((start, "name", f"{first} {last}"))
    return found


def write_first_names() -> None:
    """Write `FIRST_NAMES_FILE` afresh: the first names of Faker's locales of the languages
    support logs are most often written in."""
    from faker import Faker  # imported here: mining never needs it

    names: set[str] = set()
    for locale in ("en_US", "en_GB", "en_IE", "en_NZ", "en_AU", "en_CA", "de_DE", "de_AT",
                   "fr_FR", "es_ES", "it_IT", "nl_NL", "pl_PL", "pt_PT", "sv_SE"):  # fmt: skip
        for provider in Faker(locale).providers:
            for attr in ("first_names", "first_names_male", "first_names_female"):
                pool = getattr(provider, attr, None) or ()
                names.update(n.lower() for n in pool if " " not in n)
    FIRST_NAMES_FILE.write_text("\n".join(sorted(names)) + "\n", encoding="utf-8")
