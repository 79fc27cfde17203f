"""A name written after what announces one: the customer giving it ("my name is ..."), a
title ("Mrs. ..."), a letter's sign-off ("Regards, ..."), a relative ("my wife ...")."""

from __future__ import annotations

import re

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
