"""Whether an override's value is one Hydra's override grammar reads, and if not, why.

Hydra parses every override before it composes anything, and stops the launch on the first it cannot read. An
unquoted value may hold letters, digits, whitespace and `_-/\\+.$%*@?|:`; `[...]` and `{...}` nest lists and
mappings whose items may be quoted; `${...}` is an interpolation; `\\` escapes the next character. Anything else
(`<`, `>`, `#`, `!`, `&`, `;`, `~`, `^`, a backquote, a letter outside ASCII, a quote inside an unquoted word) is a
lexer error, and a comma outside brackets makes a sweep, which a single run's compose refuses.
"""

from __future__ import annotations

import re

_PLAIN = re.compile(r"[A-Za-z0-9_\-/\\+.$%*@?|: \t]")
_SWEEPS = ("choice", "range", "interval", "glob")  # a sweep: one run per value
_FUNCTIONS = _SWEEPS + ("sort", "shuffle", "tag", "int", "float", "str", "bool", "json_str", "extend_list")
_CLOSE = {"[": "]", "{": "}", "(": ")"}


def value_problem(text: str) -> str | None:
    """None when Hydra reads the value; else what is wrong, in words a user can act on."""
    if _whole_quote(text):
        return None
    stack: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            i += 2
            continue
        if text.startswith("${", i):
            end = _interpolation_end(text, i)
            if end < 0:
                return "an interpolation `${` is not closed, or holds another (Hydra's override grammar nests none)"
            i = end
            continue
        if ch in "'\"":
            end = _quoted_item_end(text, i, bool(stack))
            if end < 0:
                return (
                    f"the quote {ch} sits inside an unquoted value (Hydra takes a quote only around a whole value "
                    "or list item)"
                )
            i = end
            continue
        problem = _character_problem(text, i, stack)
        if problem is not None:
            return problem
        i += 1
    if stack:
        return f"the {stack[-1]} is not closed"
    return None


def _character_problem(text: str, i: int, stack: list[str]) -> str | None:
    """What is wrong with the unquoted character at `i` (brackets and calls kept on `stack`); None when fine."""
    ch = text[i]
    if ch in "[{":
        stack.append(ch)
    elif ch == "(":
        called = re.search(r"(\w+)\s*$", text[:i])
        if not called or called.group(1) not in _FUNCTIONS:
            return "`(` is Hydra's function syntax; quote the value to keep parentheses in it"
        if called.group(1) in _SWEEPS and not stack:
            return f"{called.group(1)}(...) is a sweep (one run per value), which verl's compose refuses"
        stack.append(ch)
    elif ch in "]})":
        if not stack or _CLOSE[stack.pop()] != ch:
            return f"the {ch} closes no bracket"
    elif ch == "," and not stack:
        return (
            "a comma outside brackets makes a sweep (one run per item), which verl's compose refuses; write "
            "[a,b] for a list or quote the value for a string"
        )
    elif ch == "=" and not stack:
        return "a second `=` in the value; quote the value to keep it"
    elif ch not in ",=" and not _PLAIN.match(ch):
        return f"the character {ch!r} is not allowed in an unquoted value; quote the value"
    return None


def _whole_quote(text: str) -> bool:
    return len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" and _quoted_item_end(text, 0, True) == len(text)


def _quoted_item_end(text: str, start: int, in_brackets: bool) -> int:
    """The index after a quoted item that starts at `start`, or -1 when the quote is not a whole item: the whole
    value at the top level, or an item (or mapping key or value) inside brackets."""
    before = text[:start].rstrip()[-1:]
    if (in_brackets and before not in ("[", ",", "{", ":")) or (not in_brackets and start):
        return -1
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            rest = text[i + 1 :].lstrip()
            whole = (not rest or rest[0] in ",]}:") if in_brackets else not rest
            return i + 1 if whole else -1
        i += 1
    return -1


def _interpolation_end(text: str, start: int) -> int:
    """The index after `${...}`: Hydra's lexer ends an interpolation at its first `}` (a nested one does not lex)."""
    end = text.find("}", start + 2)
    if end < 0 or "${" in text[start + 2 : end]:
        return -1
    return end + 1


__all__ = ["value_problem"]
