"""Counted nouns in messages: "1 prompt", "8 prompts", "1 process", "once".

A message that puts a number before a noun says it through `plural`, so a count of 1 never reads "1 prompts".
"""

from __future__ import annotations

_ES_ENDINGS = ("s", "x", "z", "ch", "sh")


def noun(count: int | float, word: str, many: str | None = None) -> str:
    """`word` for a count of exactly 1, else its plural: `many` when given, else word + "es" after s, x, z, ch
    and sh, else word + "s". The last word of a phrase is the one that changes ("training process")."""
    if count == 1:
        return word
    if many is not None:
        return many
    return word + ("es" if word.endswith(_ES_ENDINGS) else "s")


def plural(count: int | float, word: str, many: str | None = None, *, grouped: bool = False) -> str:
    """ "1 prompt", "8 prompts"; `grouped`: thousands separated ("12,800 tokens")."""
    shown = f"{count:,}" if grouped else f"{count}"
    return f"{shown} {noun(count, word, many)}"


def times(count: int) -> str:
    """ "once", "twice", "3 times"."""
    return {1: "once", 2: "twice"}.get(count, f"{count} times")
