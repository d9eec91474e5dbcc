"""The defaults a script's own argparse parser declares (or the dataclasses it gives HfArgumentParser / TrlParser):
what `args.num_generations` is when the script is run with no option for it.

A value read from the command line stays unknown (the run may pass anything); the default is said beside it, and
the call is judged a second time with the defaults, as an information, never as the verdict.
"""

from __future__ import annotations

import ast
from typing import Any

from grpo_schema.dialects.python.values import Evaluator, Unknown, scope_of

_ACTION_DEFAULTS = {"store_true": False, "store_false": True}


def command_line_defaults(tree: ast.Module) -> dict[str, tuple[str, Any]]:
    """dest -> (option as written, default) of every `parser.add_argument(...)` of the module, and every field of a
    dataclass of its own given to HfArgumentParser / TrlParser, whose default is a static value. A dest declared
    twice with different defaults (two parsers) is left out: which one the run uses is not known."""
    evaluator = Evaluator([scope_of(tree.body)], line=10**9, in_function=True)
    found: dict[str, tuple[str, Any]] = {}
    clashing: set[str] = set()
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
        ):
            continue
        named = _dest(node)
        if named is None:
            continue
        dest, option = named
        keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        if "default" in keywords:
            value = evaluator.value(keywords["default"])
        else:
            action = keywords.get("action")
            value = _ACTION_DEFAULTS.get(action.value) if isinstance(action, ast.Constant) else None
        if isinstance(value, Unknown):
            continue
        if dest in found and found[dest][1] != value:
            clashing.add(dest)
        found[dest] = (option, value)
    for dest, option, value in _dataclass_defaults(tree, evaluator):
        if dest in found and found[dest][1] != value:
            clashing.add(dest)
        found[dest] = (option, value)
    return {k: v for k, v in found.items() if k not in clashing}


_PARSERS = frozenset({"HfArgumentParser", "TrlParser"})


def _parsed_dataclasses(tree: ast.Module) -> list[ast.ClassDef]:
    """The file's own dataclasses given to HfArgumentParser / TrlParser: their fields are command-line options."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called in _PARSERS and node.args:
                first = node.args[0]
                items = first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]
                names |= {item.id for item in items if isinstance(item, ast.Name)}
    return [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name in names]


def _dataclass_defaults(tree: ast.Module, evaluator: Evaluator) -> list[tuple[str, str, Any]]:
    """(dest, option, default) of each field of those dataclasses with a static default (`x: int = 8` or
    `x: int = field(default=8, ...)`)."""
    out = []
    for cls in _parsed_dataclasses(tree):
        for stmt in cls.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value):
                continue
            node = stmt.value
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "field":
                found = next((kw.value for kw in node.keywords if kw.arg == "default"), None)
                if found is None:
                    continue
                node = found
            value = evaluator.value(node)
            if not isinstance(value, Unknown):
                out.append((stmt.target.id, "--" + stmt.target.id, value))
    return out


def _dest(call: ast.Call) -> tuple[str, str] | None:
    """(dest, the option as the command line writes it), as argparse names them."""
    flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    long = next((f for f in flags if f.startswith("--")), None)
    chosen = long or next((f for f in flags if not f.startswith("-")), flags[0] if flags else None)
    for kw in call.keywords:
        if kw.arg == "dest":
            if not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)):
                return None
            return kw.value.value, chosen or kw.value.value
    if chosen is None:
        return None
    return chosen.lstrip("-").replace("-", "_"), chosen


def default_for(value: Unknown, defaults: dict[str, tuple[str, Any]]) -> tuple[str, Any] | None:
    """(option, default) where the unknown value is exactly one argparse attribute (`args.lr`, or a name bound to
    it); None for anything computed from it (`args.lr * 2`) or read elsewhere."""
    read = value.root or value.source
    if value.source != read and not value.source.isidentifier():
        return None
    parts = read.split(".")
    if len(parts) != 2 or not parts[0].isidentifier() or parts[1] not in defaults:
        return None
    return defaults[parts[1]]
