"""The keys a release warns are deprecated, read from its warnings' text."""

from __future__ import annotations

import ast
import re

# A deprecation: a key whose setting makes the release warn that it is deprecated (GRPOConfig's or
# TrainingArguments' __post_init__, the trainer's init), with the key the warning says to use instead when the
# release reads that key. Only warnings that open with the key count: "Passing `fsdp` as a string is deprecated"
# and "The value `None` for `top_k` is deprecated" are about a value, not the key.
DEPRECATION_FILES = ("trl/trainer/grpo_config.py", "trl/trainer/base_config.py", "trl/trainer/grpo_trainer.py")
_DEPRECATED = re.compile(
    r"(?:^|[.!]\s+)(?:The\s+|Parameter\s+)?`(?P<key>[A-Za-z_]\w*)(?:=[^`]*)?`"
    r"(?:\s+(?:argument|parameter))?\s+is deprecated"
)
_NAMED = re.compile(r"`([A-Za-z_]\w*)")


def _message(node: ast.AST, env: dict[str, str]) -> str:
    """A warning's text, with f-string names bound by an enclosing `for old, new in ((...), ...)` loop."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_message(v, env) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return env.get(node.value.id, "{?}") if isinstance(node.value, ast.Name) else "{?}"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _message(node.left, env) + _message(node.right, env)
    return ""


def _warnings(body: list[ast.stmt], env: dict[str, str]) -> list[str]:
    calls = [s.value for s in body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]
    return [
        _message(c.args[0], env)
        for c in calls
        if c.args and ast.unparse(c.func).split(".")[-1] in ("warn", "warning", "warning_once")
    ]


def _loop_bindings(node: ast.For) -> list[dict[str, str]]:
    """[{'old': 'gradient_checkpointing', 'new': 'activation_checkpointing'}, ...] for a loop over literal pairs."""
    if not isinstance(node.target, ast.Tuple) or not all(isinstance(t, ast.Name) for t in node.target.elts):
        return []
    try:
        rows = ast.literal_eval(node.iter)
    except ValueError:
        return []
    names = [t.id for t in node.target.elts]  # type: ignore[attr-defined]
    return [dict(zip(names, row)) for row in rows if isinstance(row, tuple) and len(row) == len(names)]


def source_deprecations(src: str, fields: set[str]) -> dict[str, str | None]:
    """{deprecated key: the key to use instead (None when the release reads none)} from one source file."""
    tree = ast.parse(src)
    found: dict[str, str | None] = {}
    scopes: list[tuple[ast.AST, dict[str, str]]] = [(tree, {})]
    scopes += [(n, env) for n in ast.walk(tree) if isinstance(n, ast.For) for env in _loop_bindings(n)]
    for scope, env in scopes:
        for node in ast.walk(scope):
            if not isinstance(node, ast.If):
                continue
            for text in _warnings(node.body, env):
                match = _DEPRECATED.search(text)
                if match is None or match["key"] not in fields:
                    continue
                after = [k for k in _NAMED.findall(text[match.end() :]) if k in fields and k != match["key"]]
                found[match["key"]] = after[0] if after else found.get(match["key"])
    return found
