"""Static values of Python expressions: literals, module constants and simple arithmetic on them.

Nothing is imported or run. An expression whose value depends on the run (argparse, a file, a function call,
the hardware) is an `Unknown` with the reason, never a guess.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 40  # nested expressions and names followed
MAX_SIZE = 10_000  # items of a list or characters of a string built by arithmetic
MAX_EXPONENT = 256
_ARITH = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b,
}
_CONVERSIONS = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
}


@dataclass(frozen=True)
class Unknown:
    """A value that cannot be judged statically, and why (the source as written, and what decides it)."""

    source: str
    reason: str
    root: str = ""  # the part of `source` that is unknown, where that is smaller (args.lr in args.lr * 2)

    def within(self, source: str) -> "Unknown":
        """The same unknown, as part of a larger expression (or the value of a name)."""
        return Unknown(source, self.reason, self.root or self.source)

    @property
    def why(self) -> str:
        root = self.root or self.source
        return self.reason if root == self.source else f"{root}: {self.reason}"

    def __str__(self) -> str:
        return f"{self.source} ({self.why})"


@dataclass
class Binding:
    line: int
    value: ast.expr | None  # None: bound another way (import, def, loop, with, unpacking)
    how: str = ""
    conditional: bool = False  # under an if / for / while / try / with: whether it ran is decided at run time


@dataclass
class Scope:
    """The names a scope binds, in source order."""

    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    params: frozenset[str] = frozenset()
    name: str = "the module"

    def add(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)


def scope_of(body: list[ast.stmt], name: str = "the module", params: frozenset[str] = frozenset()) -> Scope:
    scope = Scope(params=params, name=name)
    for stmt in body:
        _bind(scope, stmt, conditional=False)
    return scope


def _bind(scope: Scope, stmt: ast.stmt, conditional: bool) -> None:
    line = stmt.lineno
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        for target in targets:
            if isinstance(target, ast.Name) and value is not None:
                scope.add(target.id, Binding(line, value, conditional=conditional))
            else:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        scope.add(node.id, Binding(line, None, "unpacked from an expression", conditional))
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                scope.add(target.value.id, Binding(line, None, "changed item by item", conditional))
    elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        scope.add(stmt.target.id, Binding(line, None, "changed in place", conditional))
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            bound = alias.asname or alias.name.split(".")[0]
            scope.add(bound, Binding(line, None, "imported", conditional))
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        scope.add(stmt.name, Binding(line, None, "a function or class", conditional))
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        _mutation(scope, stmt.value, line, conditional)
    else:
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                _bind(scope, child, conditional=True)
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
            targets = (
                [stmt.target]
                if isinstance(stmt, (ast.For, ast.AsyncFor))
                else [item.optional_vars for item in stmt.items if item.optional_vars is not None]
            )
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        scope.add(node.id, Binding(line, None, "bound by a loop or with", True))


def _mutation(scope: Scope, call: ast.Call, line: int, conditional: bool) -> None:
    """`config.update(...)`: the dict a name holds is changed after it was written."""
    func = call.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.attr in ("update", "pop", "setdefault", "clear", "append", "extend", "insert", "remove")
    ):
        scope.add(func.value.id, Binding(line, None, f"changed by .{func.attr}()", conditional))


class Evaluator:
    """Values of expressions at one place: `scopes` innermost first, `line` where the expression is read."""

    def __init__(self, scopes: list[Scope], line: int, in_function: bool):
        self.scopes = scopes
        self.line = line
        self.in_function = in_function
        self._following: set[str] = set()

    def value(self, node: ast.expr, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            return Unknown(_source(node), "nested too deeply to follow")
        try:
            return self._value(node, depth + 1)
        except (ArithmeticError, ValueError, TypeError, RecursionError) as exc:
            return Unknown(_source(node), f"its arithmetic fails statically ({type(exc).__name__})")

    def _value(self, node: ast.expr, depth: int) -> Any:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bytes, complex)) or node.value is Ellipsis:
                return Unknown(_source(node), "not a config value")
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node, depth)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return (
                _all_known([self.value(e, depth) for e in node.elts], node)
                if not any(isinstance(e, ast.Starred) for e in node.elts)
                else Unknown(_source(node), "unpacks a value")
            )
        if isinstance(node, ast.Dict):
            return self._dict(node, depth)
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand, depth)
            if isinstance(operand, Unknown):  # `not args.x` is not args.x: the whole expression is what is unknown
                return operand.within(_source(node))
            if isinstance(node.op, ast.USub) and _number(operand):
                return -operand
            if isinstance(node.op, ast.UAdd) and _number(operand):
                return +operand
            if isinstance(node.op, ast.Not):
                return not operand
            return Unknown(_source(node), "an operation this reader does not evaluate")
        if isinstance(node, ast.BinOp):
            return self._binop(node, depth)
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, depth)
        if isinstance(node, ast.IfExp):
            test = self.value(node.test, depth)
            if isinstance(test, Unknown):
                return Unknown(_source(node), "which branch is taken is decided at run time")
            return self.value(node.body if test else node.orelse, depth)
        if isinstance(node, ast.Attribute):
            return Unknown(_source(node), _attribute_reason(node))
        return Unknown(_source(node), "computed at run time")

    def _name(self, node: ast.Name, depth: int) -> Any:
        name = node.id
        if name in self._following:
            return Unknown(name, "defined in terms of itself")
        for index, scope in enumerate(self.scopes):
            if name in scope.params:
                return Unknown(name, f"a parameter of {scope.name}: given by its caller at run time")
            bindings = scope.bindings.get(name)
            if not bindings:
                continue
            innermost = index == 0
            # Where the read is in straight-line code of this scope, the last binding before it is the one.
            ordered = innermost and not (self.in_function and scope.name == "the module")
            candidates = [b for b in bindings if b.line <= self.line] if ordered else bindings
            if not candidates:
                return Unknown(name, f"not yet defined at line {self.line}")
            last = candidates[-1]
            if not ordered and len(candidates) > 1:
                return Unknown(
                    name, f"bound {len(candidates)} times in {scope.name}: which one holds is decided at run time"
                )
            if last.value is None:
                return Unknown(name, f"{last.how} (line {last.line})")
            if last.conditional or (ordered and any(b.conditional for b in candidates)):
                value = self._following_value(name, last.value, depth)
                return (
                    value.within(name)
                    if isinstance(value, Unknown)
                    else Unknown(name, f"bound under a condition or loop in {scope.name} (line {last.line})")
                )
            value = self._following_value(name, last.value, depth)
            return value.within(name) if isinstance(value, Unknown) else value
        return Unknown(name, "not defined in this file")

    def _following_value(self, name: str, node: ast.expr, depth: int) -> Any:
        self._following.add(name)
        try:
            return self.value(node, depth)
        finally:
            self._following.discard(name)

    def _dict(self, node: ast.Dict, depth: int) -> Any:
        out: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                merged = self.value(value, depth)
                if not isinstance(merged, dict):
                    return merged if isinstance(merged, Unknown) else Unknown(_source(value), "not a dict")
                out.update(merged)
                continue
            k, v = self.value(key, depth), self.value(value, depth)
            if isinstance(k, Unknown):
                return k
            if isinstance(v, Unknown):
                return v.within(_source(node))
            out[k] = v
        return out

    def _binop(self, node: ast.BinOp, depth: int) -> Any:
        left, right = self.value(node.left, depth), self.value(node.right, depth)
        for side in (left, right):
            if isinstance(side, Unknown):
                return side.within(_source(node))
        op = _ARITH.get(type(node.op))
        if op is None:
            return Unknown(_source(node), "an operator this reader does not evaluate")
        if isinstance(node.op, ast.Pow) and (not _number(right) or abs(right) > MAX_EXPONENT):
            return Unknown(_source(node), "too large a power to evaluate")
        if isinstance(node.op, ast.Mult) and (isinstance(left, (str, list)) or isinstance(right, (str, list))):
            count = right if isinstance(left, (str, list)) else left
            base = left if isinstance(left, (str, list)) else right
            if not isinstance(count, int) or len(base) * max(count, 0) > MAX_SIZE:
                return Unknown(_source(node), "too large a value to build")
        if not (_number(left) and _number(right)) and not (type(left) is type(right) and isinstance(left, (str, list))):
            return Unknown(_source(node), "arithmetic on values of different kinds")
        result = op(left, right)
        if isinstance(result, float) and not math.isfinite(result):
            return Unknown(_source(node), "not a finite number")
        return result

    def _fstring(self, node: ast.JoinedStr, depth: int) -> Any:
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
            elif isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion == -1:
                value = self.value(part.value, depth)
                if isinstance(value, Unknown):
                    return value.within(_source(node))
                parts.append(str(value))
            else:
                return Unknown(_source(node), "a formatted string this reader does not evaluate")
        return "".join(parts)

    def _call(self, node: ast.Call, depth: int) -> Any:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "dict" and not node.args and not _shadowed(func.id, self.scopes):
            out: dict[str, Any] = {}
            for kw in node.keywords:
                value = self.value(kw.value, depth)
                if isinstance(value, Unknown):
                    return value.within(_source(node))
                if kw.arg is None:
                    if not isinstance(value, dict):
                        return Unknown(_source(node), "unpacks what is not a dict")
                    out.update(value)
                else:
                    out[kw.arg] = value
            return out
        if (
            isinstance(func, ast.Name)
            and func.id in _CONVERSIONS
            and not node.keywords
            and node.args
            and not _shadowed(func.id, self.scopes)
        ):
            args = [self.value(a, depth) for a in node.args]
            for arg in args:
                if isinstance(arg, Unknown):
                    return arg.within(_source(node))
            if any(isinstance(a, (str, list, dict)) and len(a) > MAX_SIZE for a in args):
                return Unknown(_source(node), "too large a value")
            return _CONVERSIONS[func.id](*args)
        return Unknown(_source(node), _call_reason(node))

    def _subscript(self, node: ast.Subscript, depth: int) -> Any:
        base = self.value(node.value, depth)
        if isinstance(base, Unknown):
            return base.within(_source(node))
        index = self.value(node.slice, depth)
        if isinstance(index, Unknown):
            return index.within(_source(node))
        try:
            return base[index]
        except (KeyError, IndexError, TypeError):
            return Unknown(_source(node), "the item is not in the value")


def _shadowed(name: str, scopes: list[Scope]) -> bool:
    return any(name in scope.bindings or name in scope.params for scope in scopes)


def _all_known(values: list[Any], node: ast.expr) -> Any:
    for value in values:
        if isinstance(value, Unknown):
            return value.within(_source(node))
    if isinstance(node, ast.Set):
        return sorted(values, key=repr)
    return list(values)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float))  # booleans count: True + 1 is arithmetic Python does


def _attribute_reason(node: ast.Attribute) -> str:
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value  # type: ignore[assignment]
    if isinstance(root, ast.Name) and root.id in (
        "args",
        "cfg",
        "config",
        "opt",
        "opts",
        "options",
        "script_args",
        "training_args",
        "hparams",
        "conf",
        "params",
    ):
        return "read from the command line or a config file at run time"
    if isinstance(root, ast.Name) and root.id in ("os", "sys", "torch"):
        return "read from the environment or the machine at run time"
    return "an attribute read at run time"


def _call_reason(node: ast.Call) -> str:
    name = _source(node.func)
    if name.endswith(("getenv", "environ.get")):
        return "read from the environment at run time"
    if "is_bf16_supported" in name or "is_bfloat16_supported" in name or "cuda" in name:
        return "decided by the hardware at run time"
    if name.endswith(("load", "safe_load", "read_json", "from_yaml", "from_file")) or "OmegaConf" in name:
        return "read from a file at run time"
    return f"the result of calling {name}() at run time"


def _source(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # unparse of a very deep tree: the kind of node is enough
        text = type(node).__name__
    return text if len(text) <= 120 else text[:117] + "..."
