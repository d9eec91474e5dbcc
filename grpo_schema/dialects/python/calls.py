"""Every `GRPOConfig(...)` call of a module: what names it goes by, its keyword arguments and their values.

GRPOConfig is recognised however the file imports it: `from trl import GRPOConfig` (aliased or not), `trl.GRPOConfig`
after `import trl [as t]`, TRL's module paths, and Unsloth's generated `UnslothGRPOConfig`. A class the file derives
from GRPOConfig is reported, never guessed at.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Iterator

from grpo_schema.dialects.python.values import Evaluator, Scope, Unknown, scope_of

CLASS_NAMES = frozenset({"GRPOConfig", "UnslothGRPOConfig"})
TRL_MODULES = ("trl", "unsloth", "unsloth_compiled_cache")
POSITIONAL = ("output_dir",)  # GRPOConfig's first dataclass field


@dataclass
class Keyword:
    name: str
    value: Any  # a plain value, or Unknown
    line: int  # of the keyword's name (or the dict key), 1-based
    column: int
    # The value's span as written: where `grpo migrate` edits (end column exclusive, 1-based lines/columns).
    span: tuple[int, int, int, int] | None = None
    key_span: tuple[int, int, int, int] | None = None  # the keyword name or the dict key
    via: str = ""  # '' for a keyword argument, else the `**name` it came from


@dataclass
class Opaque:
    """Part of a call this reader cannot see into (`**kwargs` built at run time, `*args`)."""

    source: str
    reason: str
    line: int
    column: int


@dataclass
class ConfigCall:
    callee: str  # as written
    line: int
    column: int
    end_line: int
    end_column: int
    scope: str  # "the module" or "main()"
    keywords: list[Keyword] = field(default_factory=list)
    opaque: list[Opaque] = field(default_factory=list)
    duplicates: list[Keyword] = field(default_factory=list)  # a keyword given twice: TypeError at run time


@dataclass
class Subclass:
    name: str
    line: int
    column: int


@dataclass
class ModuleReading:
    calls: list[ConfigCall] = field(default_factory=list)
    subclasses: list[Subclass] = field(default_factory=list)
    subclass_calls: list[ConfigCall] = field(default_factory=list)
    imports_unsloth: bool = False
    unsloth_line: int | None = None


def read_module(tree: ast.Module) -> ModuleReading:
    names, modules, reading = _imports(tree)
    module_scope = _with_marimo_cells(tree, scope_of(tree.body))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(_is_config(base, names, modules) for base in node.bases):
            reading.subclasses.append(Subclass(node.name, node.lineno, node.col_offset + 1))
    sub_names = {s.name for s in reading.subclasses}
    for call, scopes in _calls(tree, [module_scope]):
        if _is_config(call.func, names, modules):
            reading.calls.append(_read_call(call, scopes))
        elif isinstance(call.func, ast.Name) and call.func.id in sub_names:
            reading.subclass_calls.append(_bare_call(call, scopes))
    reading.calls.sort(key=lambda c: (c.line, c.column))
    return reading


def _imports(tree: ast.Module) -> tuple[set[str], set[str], ModuleReading]:
    """Names bound to GRPOConfig, names bound to a module that has it, and whether unsloth is imported."""
    names: set[str] = set()
    modules: set[str] = set()
    foreign: set[str] = set()  # GRPOConfig names bound to another project's class (its own dataclass, a module)
    reading = ModuleReading()
    star = False
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ClassDef)
            and node.name in CLASS_NAMES
            and not any(
                (b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "") in CLASS_NAMES
                for b in node.bases
            )
        ):
            foreign.add(node.name)  # `class GRPOConfig:` of the file's own: not TRL's
        if isinstance(node, ast.ImportFrom) and not node.module:  # `from . import GRPOConfig`
            foreign |= {alias.asname or alias.name for alias in node.names if alias.name in CLASS_NAMES}
        if isinstance(node, ast.ImportFrom) and node.module:
            root = node.module.split(".")[0] if node.level == 0 else "."
            if root in ("unsloth", "unsloth_zoo"):
                _saw_unsloth(reading, node.lineno)
            for alias in node.names:
                if alias.name == "*" and root in TRL_MODULES:
                    star = True
                elif alias.name in CLASS_NAMES and (root in TRL_MODULES or root.startswith("unsloth")):
                    names.add(alias.asname or alias.name)
                elif alias.name in CLASS_NAMES:
                    foreign.add(alias.asname or alias.name)  # `from grpo_trainer import GRPOConfig`, `from .configs`
                elif root == "trl" and alias.name in ("trainer", "grpo_config"):
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root in ("unsloth", "unsloth_zoo"):
                    _saw_unsloth(reading, node.lineno)
                if root in TRL_MODULES:
                    modules.add(alias.asname or root)
    if star or not names:  # `from trl import *`, or a notebook whose import cell is elsewhere
        names |= CLASS_NAMES - (foreign if not star else set())
    return names, modules, reading


def _saw_unsloth(reading: ModuleReading, line: int) -> None:
    reading.imports_unsloth = True
    reading.unsloth_line = reading.unsloth_line or line


def _is_config(func: ast.expr, names: set[str], modules: set[str]) -> bool:
    if isinstance(func, ast.Name):
        return func.id in names
    if isinstance(func, ast.Attribute) and func.attr in CLASS_NAMES:
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id in modules
    return False


MARIMO_CELLS = "the marimo notebook's cells"


def _is_marimo_cell(node: ast.stmt) -> bool:
    """`@app.cell` / `@app.cell(hide_code=True)`: a marimo notebook's cell, whose parameters are the names other
    cells define (marimo passes them in; each name is defined by one cell)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr == "cell":
            return True
    return False


def _with_marimo_cells(tree: ast.Module, module: Scope) -> Scope:
    """The module's scope, with a marimo notebook's cell-level names: what each cell defines at its top level
    (never `_private` ones, which marimo keeps to their cell), read as the notebook reads them."""
    cells = [node for node in tree.body if _is_marimo_cell(node)]
    if not cells:
        return module
    shared = scope_of([stmt for cell in cells for stmt in cell.body], name=MARIMO_CELLS)  # type: ignore[attr-defined]
    for name, bindings in shared.bindings.items():
        if not name.startswith("_") and name not in module.bindings:
            module.bindings[name] = bindings
    module.name = MARIMO_CELLS
    return module


def _calls(node: ast.AST, scopes: list[Scope]) -> Iterator[tuple[ast.Call, list[Scope]]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = child.args
            params = frozenset(
                a.arg
                for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, [args.vararg, args.kwarg])]
            )
            if scopes[-1].name == MARIMO_CELLS and _is_marimo_cell(child):
                params = frozenset(p for p in params if p not in scopes[-1].bindings)  # another cell's names
            inner = scope_of(child.body, name=f"{child.name}()", params=params)
            for default in [*args.defaults, *filter(None, args.kw_defaults)]:
                yield from _calls(default, scopes)
            for stmt in child.body:
                yield from _calls(stmt, [inner, *scopes])
            continue
        if isinstance(child, ast.Call):
            yield child, scopes
        yield from _calls(child, scopes)


def _bare_call(call: ast.Call, scopes: list[Scope]) -> ConfigCall:
    return ConfigCall(
        ast.unparse(call.func),
        call.lineno,
        call.col_offset + 1,
        call.end_lineno or call.lineno,
        (call.end_col_offset or 0) + 1,
        scopes[0].name,
    )


def _read_call(call: ast.Call, scopes: list[Scope]) -> ConfigCall:
    out = _bare_call(call, scopes)
    evaluator = Evaluator(scopes, call.lineno, in_function=len(scopes) > 1)
    seen: dict[str, Keyword] = {}

    def add(keyword: Keyword) -> None:
        if keyword.name in seen:
            out.duplicates.append(keyword)
        seen[keyword.name] = keyword
        out.keywords.append(keyword)

    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred) or index >= len(POSITIONAL):
            out.opaque.append(
                Opaque(
                    ast.unparse(arg), "a positional argument this reader cannot name", arg.lineno, arg.col_offset + 1
                )
            )
            continue
        add(Keyword(POSITIONAL[index], evaluator.value(arg), arg.lineno, arg.col_offset + 1, _span(arg)))
    for kw in call.keywords:
        if kw.arg is not None:
            key_span = (kw.lineno, kw.col_offset + 1, kw.lineno, kw.col_offset + 1 + len(kw.arg))
            add(Keyword(kw.arg, evaluator.value(kw.value), kw.lineno, kw.col_offset + 1, _span(kw.value), key_span))
            continue
        for keyword in _splat(kw.value, evaluator, scopes, out):
            add(keyword)
    return out


def _splat(node: ast.expr, evaluator: Evaluator, scopes: list[Scope], call: ConfigCall) -> Iterator[Keyword]:
    """The keywords of `**{...}`, `**dict(...)` or `**NAME` where NAME holds one of those, at the keys' own places."""
    literal = _dict_node(node, scopes, call.line)
    label = f"**{ast.unparse(node)}"
    if literal is not None:
        if isinstance(literal, ast.Dict):
            pairs = list(zip(literal.keys, literal.values))
            for key, value in pairs:
                if key is None:
                    yield from _splat(value, evaluator, scopes, call)
                    continue
                name = evaluator.value(key)
                if not isinstance(name, str):
                    call.opaque.append(
                        Opaque(ast.unparse(key), "a key that is not a plain string", key.lineno, key.col_offset + 1)
                    )
                    continue
                yield Keyword(
                    name, evaluator.value(value), key.lineno, key.col_offset + 1, _span(value), _span(key), via=label
                )
            return
        for kw in literal.keywords:  # dict(a=1, ...)
            if kw.arg is None:
                yield from _splat(kw.value, evaluator, scopes, call)
                continue
            key_span = (kw.lineno, kw.col_offset + 1, kw.lineno, kw.col_offset + 1 + len(kw.arg))
            yield Keyword(
                kw.arg, evaluator.value(kw.value), kw.lineno, kw.col_offset + 1, _span(kw.value), key_span, via=label
            )
        return
    value = evaluator.value(node)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        for name, item in value.items():
            yield Keyword(name, item, node.lineno, node.col_offset + 1, None, None, via=label)
        return
    reason = value.why if isinstance(value, Unknown) else "not a dict of keyword arguments"
    call.opaque.append(Opaque(label, reason, node.lineno, node.col_offset + 1))


def _dict_node(node: ast.expr, scopes: list[Scope], line: int) -> ast.Dict | ast.Call | None:
    """The dict literal a `**` unpacks: written there, or the one assignment of the name it names."""
    if isinstance(node, ast.Dict) or _is_dict_call(node):
        return node  # type: ignore[return-value]
    if not isinstance(node, ast.Name):
        return None
    for scope in scopes:
        if node.id in scope.params:
            return None
        bindings = scope.bindings.get(node.id)
        if not bindings:
            continue
        before = [b for b in bindings if b.line <= line] if scope is scopes[0] else bindings
        if len(before) != 1 or before[0].conditional or before[0].value is None:
            return None  # changed after it was written, or bound under a condition: the evaluator says why
        value = before[0].value
        return value if isinstance(value, ast.Dict) or _is_dict_call(value) else None  # type: ignore[return-value]
    return None


def _is_dict_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args


def _span(node: ast.expr) -> tuple[int, int, int, int]:
    return (node.lineno, node.col_offset + 1, node.end_lineno or node.lineno, (node.end_col_offset or 0) + 1)


def model_name(tree: ast.Module) -> str | None:
    """The model the file trains, where it is a literal or module constant: GRPOTrainer(model="...") or a
    from_pretrained("...") / from_pretrained(model_name="...") (Unsloth's FastLanguageModel, transformers)."""
    module_scope = _with_marimo_cells(tree, scope_of(tree.body))
    for call, scopes in _calls(tree, [module_scope]):
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "GRPOTrainer":
            nodes = [kw.value for kw in call.keywords if kw.arg == "model"]
        elif name == "from_pretrained":
            nodes = [kw.value for kw in call.keywords if kw.arg in ("model_name", "pretrained_model_name_or_path")]
            nodes += call.args[:1]
        else:
            continue
        for node in nodes:
            value = Evaluator(scopes, call.lineno, in_function=len(scopes) > 1).value(node)
            if isinstance(value, str) and value:
                return value
    return None
