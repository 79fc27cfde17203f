"""Wording shared by messages, logs and reports."""

from __future__ import annotations


def count(n: int, word: str, plural: str | None = None) -> str:
    """`n` and `word`, the word singular for one: "1 case", "1,870 cases", "2 log files"."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"
