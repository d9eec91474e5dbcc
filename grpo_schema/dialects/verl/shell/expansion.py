"""Expanding a script's words: variables the script has assigned, `${X:-default}`, `"${ARR[@]}"`, `$((...))`.

A variable the script never sets is unknown (it comes from the environment), never guessed; a command substitution
`$(...)` is unknown too, and says why.
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass, field

from grpo_schema.dialects.verl.shell.words import (
    NAME,
    Part,
    RawWord,
    Scanner,
    ShellProblem,
    Unclosed,
    Word,
    read_word,
    scan,
)


@dataclass
class Unknown:
    why: str


@dataclass
class Fragment:
    """A piece of a variable's value as written, where it starts in the script (its quotes removed)."""

    text: str
    line: int
    column: int


@dataclass
class Env:
    """What the script has assigned so far: a value, an array, or Unknown (with why)."""

    values: dict[str, str | list[Word] | Unknown] = field(default_factory=dict)
    # Each variable's value as written (a command kept in a string, run later by `eval $CMD`), in pieces: an
    # assignment that extends the variable (`CMD="$CMD more"`) adds a piece.
    written: dict[str, list["Fragment"]] = field(default_factory=dict)
    written_maybe: dict[str, ShellProblem] = field(default_factory=dict)  # a branch that changes a held command
    # A variable set before a branch and assigned again inside it: the value before is kept, and this says which
    # branch may change it (the branch's condition is not evaluated).
    maybe: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> str | list[Word] | Unknown | None:
        return self.values.get(name)


def expand(raw: RawWord, env: Env, split: bool = True) -> list[Word]:
    """A raw word expanded: usually one word; "${ARR[@]}" gives one word per item, at the item's position."""
    if len(raw.pieces) == 1 and raw.pieces[0][0] in ("dollar", "qdollar"):
        items = _array_items_of(raw.pieces[0][1], env)
        if items is not None:
            return items
    if split and len(raw.pieces) == 1 and raw.pieces[0][0] == "dollar":
        words = _split_unquoted(raw.pieces[0][1], env)
        if words is not None:
            return words
    parts = [_expand_piece(kind, text, env) for kind, text in raw.pieces]
    return [Word(parts, raw.line, raw.column)]


def _split_unquoted(text: str, env: Env) -> list[Word] | None:
    """An unquoted `$VAR` whose value holds several words (OPTS="a=1 b=2"; cmd $OPTS): the shell splits it into
    words; each is read where the script writes it, so it keeps its line and column. None when the variable is one
    word, or its text is not known."""
    match = re.fullmatch(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))", text)
    name = (match.group(1) or match.group(2)) if match else None
    fragments = env.written.get(name or "")
    value = env.get(name or "")
    if not fragments or isinstance(value, list) or (isinstance(value, str) and len(value.split()) < 2):
        return None
    words: list[Word] = []
    for fragment in fragments:
        commands, _ = scan(fragment.text, fragment.line, fragment.column)
        for raw_words, _line in commands:
            for raw in raw_words:
                if variable_only(raw) == name:
                    continue  # the variable inside its own value: not followed
                words.extend(expand(raw, env))
    return words


def _array_items_of(text: str, env: Env) -> list[Word] | None:
    match = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}", text)
    if not match:
        return None
    value = env.get(match.group(1))
    if isinstance(value, list):
        maybe = env.maybe.get(match.group(1))
        if maybe and value:
            first = value[0]
            return [Word(first.parts + [Part("", note=maybe)], first.line, first.column), *value[1:]]
        return value
    if isinstance(value, str):
        return [Word([Part(value)], 0, 0)]
    why = value.why if isinstance(value, Unknown) else f"the array {match.group(1)} is not set in the script"
    return [Word([Part(None, why=why)], 0, 0)]


def _expand_piece(kind: str, text: str, env: Env) -> Part:
    if kind not in ("dollar", "qdollar"):
        return Part(text, literal=True)
    if text.startswith("$((") and text.endswith("))"):
        return _arithmetic(text[3:-2], env)
    if text.startswith("$(") or text.startswith("`"):
        return Part(None, why=f"the command substitution {_short(text)} is not run")
    if text.startswith("${"):
        return _braced(text[2:-1], env)
    name = text[1:]
    if name in ("@", "*"):
        return Part(None, why="the script's own arguments ($@) are not known")
    return _variable(name, env, text)


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _variable(name: str, env: Env, written: str) -> Part:
    value = env.get(name)
    if isinstance(value, str):
        return Part(value, note=env.maybe.get(name, ""))
    if isinstance(value, Unknown):
        return Part(None, why=f"{written}: {value.why}")
    if isinstance(value, list):
        return Part(" ".join(w.text or "" for w in value[:1]))  # $ARR is its first item, as in bash
    return Part(None, why=f"{written}: {name} is not set in the script (it comes from the environment)")


def _braced(body: str, env: Env) -> Part:
    match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(:?[-=])(.*)", body, re.S)
    if match:
        name, op, default = match.groups()
        value = env.get(name)
        if isinstance(value, str) and (value or ":" not in op):
            return Part(value, note=env.maybe.get(name, ""))
        if isinstance(value, Unknown):
            return Part(None, why=f"${{{body}}}: {value.why}")
        default_part = _default(default, env)
        if default_part.text is None:
            return Part(None, why=f"${{{body}}}: {default_part.why}")
        if value == "":
            why = f"{name} is set empty, so its default {default_part.text!r} is taken"
        else:
            why = f"{name} is not set in the script, so its default {default_part.text!r} is taken"
        return Part(default_part.text, note=f"${{{body}}}: {why}")
    if NAME.fullmatch(body):
        return _variable(body, env, "${" + body + "}")
    return Part(None, why=f"the expansion ${{{_short(body)}}} is not evaluated")


def _default(text: str, env: Env) -> Part:
    """The default of ${X:-default}: itself a word (quotes and nested expansions)."""
    s = Scanner(text)
    try:
        raw = read_word(s)
    except Unclosed:
        return Part(None, why=f"the default {text!r} does not parse")
    if s.i < len(text):  # spaces in the default: keep them literally
        raw.pieces.append(("literal", text[s.i :]))
    parts = [_expand_piece(kind, piece, env) for kind, piece in raw.pieces]
    if any(p.text is None for p in parts):
        return Part(None, why="; ".join(p.why for p in parts if p.text is None))
    return Part("".join(p.text for p in parts))  # type: ignore[misc]


_ARITH = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.floordiv,
    ast.Mod: operator.mod,
}


def _arithmetic(expression: str, env: Env) -> Part:
    unknown: list[str] = []

    def name_value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        value = env.get(name)
        if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
            return value.strip()
        unknown.append(name)
        return "0"

    text = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?|\b([A-Za-z_][A-Za-z0-9_]*)\b", name_value, expression)
    if unknown:
        return Part(None, why=f"$(({expression})): {', '.join(unknown)} not a number the script sets")
    try:
        value = _evaluate(ast.parse(text.replace("/", "//"), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return Part(None, why=f"$(({expression})) is not evaluated")
    return Part(str(value), note=f"$(({expression})) = {value}")


def _evaluate(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        return int(_ARITH[type(node.op)](_evaluate(node.left), _evaluate(node.right)))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    raise ValueError("not arithmetic")


_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def variable_only(raw: RawWord) -> str | None:
    """The name of the variable a word is made of alone (`$CMD`, `"${CMD}"`), else None."""
    if len(raw.pieces) != 1 or raw.pieces[0][0] not in ("dollar", "qdollar"):
        return None
    match = _VARIABLE.fullmatch(raw.pieces[0][1])
    return (match.group(1) or match.group(2)) if match else None
