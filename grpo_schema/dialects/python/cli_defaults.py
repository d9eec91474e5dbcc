"""The defaults a script's own argparse parser declares: what `args.num_generations` is when the script is run
with no option for it.

A value read from the command line stays unknown (the run may pass anything); the default is said beside it, and
the call is judged a second time with the defaults, as an information, never as the verdict.
"""

from __future__ import annotations

import ast
from typing import Any

from grpo_schema.dialects.python.values import Evaluator, Unknown, scope_of

_ACTION_DEFAULTS = {"store_true": False, "store_false": True}


def command_line_defaults(tree: ast.Module) -> dict[str, tuple[str, Any]]:
    """dest -> (option as written, default) of every `parser.add_argument(...)` of the module whose default is a
    static value. A dest declared twice with different defaults (two parsers) is left out: which one the run uses
    is not known."""
    evaluator = Evaluator([scope_of(tree.body)], line=10**9, in_function=True)
    found: dict[str, tuple[str, Any]] = {}
    clashing: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
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
    return {k: v for k, v in found.items() if k not in clashing}


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
