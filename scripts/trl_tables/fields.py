"""The fields of a dataclass as HfArgumentParser builds its arguments from them: type, choices, default, read from
the class's source (and its bases') with `ast`."""

from __future__ import annotations

import ast
from typing import Any

SOURCE_NAMES = {  # the class a field is reported as coming from
    "GRPOConfig": "GRPOConfig",
    "_BaseConfig": "GRPOConfig",
    "TrainingArguments": "TrainingArguments",
    "ModelConfig": "ModelConfig",
    "GRPOScriptArguments": "ScriptArguments",
    "ScriptArguments": "ScriptArguments",
    "DatasetMixtureConfig": "DatasetMixtureConfig",
}


class Module:
    def __init__(self, sources: dict[str, str]):
        self.classes: dict[str, ast.ClassDef] = {}
        self.enums: dict[str, list[str]] = {}
        for text in sources.values():
            tree = ast.parse(text)
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, node)
                    bases = {ast.unparse(b) for b in node.bases}
                    if bases & {"Enum", "ExplicitEnum", "str, Enum", "enum.Enum"} or "Enum" in " ".join(bases):
                        values = [
                            s.value.value
                            for s in node.body
                            if isinstance(s, ast.Assign)
                            and isinstance(s.value, ast.Constant)
                            and isinstance(s.value.value, str)
                        ]
                        self.enums[node.name] = values

    def enum_value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.classes:
            cls = self.classes[node.value.id]
            for s in cls.body:
                if isinstance(s, ast.Assign) and any(getattr(t, "id", None) == node.attr for t in s.targets):
                    if isinstance(s.value, ast.Constant):
                        return s.value.value
        raise ValueError


def literal(mod: Module, node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    return mod.enum_value(node)  # raises ValueError when not an enum member either


SCALARS = {
    "bool": "bool",
    "int": "int",
    "float": "float",
    "str": "str",
    "dict": "dict",
    "list": "list",
    "Dict": "dict",
    "List": "list",
    "tuple": "list",
    "Tuple": "list",
}


def norm_type(mod: Module, node: ast.AST) -> dict[str, Any]:
    """{'type': ..., 'nullable': bool, 'choices': [...], 'items': ...} from an annotation (HfArgumentParser's view)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted annotation
        return norm_type(mod, ast.parse(node.value, mode="eval").body)
    if isinstance(node, ast.Constant) and node.value is None:
        return {"type": "none"}
    members: list[ast.AST] | None = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        members = []
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
                stack += [n.right, n.left]
            else:
                members.append(n)
    elif isinstance(node, ast.Subscript):
        head = ast.unparse(node.value).split(".")[-1]
        inner = node.slice
        args = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
        if head == "Optional":
            out = norm_type(mod, args[0])
            out["nullable"] = True
            return out
        if head == "Union":
            members = args
        elif head == "Literal":
            values = [literal(mod, a) for a in args]
            kinds = sorted({type(v).__name__ for v in values if v is not None})
            out = {"type": kinds[0] if len(kinds) == 1 else "union", "choices": values}
            if None in values:
                out["nullable"] = True
                out["choices"] = [v for v in values if v is not None]
            return out
        elif head in SCALARS:
            out = {"type": SCALARS[head]}
            if SCALARS[head] == "list" and args:
                out["items"] = norm_type(mod, args[0])["type"]
            return out
        else:
            return {"type": "object", "annotation": ast.unparse(node)}
    if members is not None:
        kinds = [norm_type(mod, m) for m in members]
        nullable = any(k["type"] == "none" for k in kinds)
        kinds = [k for k in kinds if k["type"] != "none"]
        if len(kinds) == 1:
            out = dict(kinds[0])
        else:
            # HfArgumentParser keeps the member that is not `str` (Union[IntervalStrategy, str] -> the enum)
            enumish = [k for k in kinds if "choices" in k]
            out = {"type": "union", "types": sorted({k["type"] for k in kinds})}
            if enumish and {k["type"] for k in kinds} <= {"str"}:
                out = dict(enumish[0])
        if nullable:
            out["nullable"] = True
        return out
    name = ast.unparse(node).split(".")[-1]
    if name in SCALARS:
        return {"type": SCALARS[name]}
    if name in mod.enums:
        return {"type": "str", "choices": mod.enums[name], "enum": name}
    if name in ("Any", "object"):
        return {"type": "any"}
    return {"type": "object", "annotation": ast.unparse(node)}


def call_kwargs(node: ast.AST) -> dict[str, ast.AST] | None:
    if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "field":
        return {k.arg: k.value for k in node.keywords if k.arg}
    return None


def class_constants(cls: ast.ClassDef) -> dict[str, list[tuple[str, Any]]]:
    """Plain `name = <literal>` assignments in a class body, and those under an `if` there: [(condition, value)]
    with condition '' for the unconditional one (TrainingArguments' `default_optim`)."""
    found: dict[str, list[tuple[str, Any]]] = {}

    def visit(body: list[ast.stmt], cond: str) -> None:
        for s in body:
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                try:
                    found.setdefault(s.targets[0].id, []).append((cond, ast.literal_eval(s.value)))
                except ValueError:
                    pass
            elif isinstance(s, ast.If):
                visit(s.body, ast.unparse(s.test)[:160])

    visit(cls.body, "")
    return found


def read_field(
    mod: Module, stmt: ast.AnnAssign, constants: dict[str, list[tuple[str, Any]]] | None = None
) -> dict[str, Any] | None:
    annotation = ast.unparse(stmt.annotation)
    if annotation.startswith(("ClassVar", "typing.ClassVar")):
        return None
    entry: dict[str, Any] = norm_type(mod, stmt.annotation)
    entry["annotation"] = annotation
    kwargs = call_kwargs(stmt.value) if stmt.value is not None else None
    default_node: ast.AST | None = None
    factory: ast.AST | None = None
    if stmt.value is None:
        pass
    elif kwargs is None:
        default_node = stmt.value
    else:
        if "init" in kwargs and isinstance(kwargs["init"], ast.Constant) and kwargs["init"].value is False:
            return None  # HfArgumentParser skips init=False fields
        default_node = kwargs.get("default")
        factory = kwargs.get("default_factory")
        meta = kwargs.get("metadata")
        if isinstance(meta, ast.Dict):
            for k, v in zip(meta.keys, meta.values):
                if isinstance(k, ast.Constant) and k.value == "choices":
                    try:
                        entry["choices"] = list(literal(mod, v))
                    except (ValueError, TypeError):
                        entry["choices_expr"] = ast.unparse(v)
    if default_node is None and factory is None:
        entry["required"] = True
        return entry
    if factory is not None:
        name = ast.unparse(factory)
        if name in ("list", "dict", "tuple"):
            entry["default"] = {"list": [], "dict": {}, "tuple": []}[name]
        elif isinstance(factory, ast.Lambda):
            try:
                entry["default"] = literal(mod, factory.body)
            except ValueError:
                entry["default_expr"] = ast.unparse(factory.body)
                entry["default"] = None
        else:
            entry["default_expr"] = name + "()"
            entry["default"] = None
        return entry
    if isinstance(default_node, ast.Name) and constants and default_node.id in constants:
        values = constants[default_node.id]
        plain = [v for c, v in values if not c]
        entry["default"] = plain[0] if plain else None
        if len(values) > 1 or not plain:  # set again under a condition: the value depends on the environment
            entry["default_expr"] = default_node.id
            entry["default_when"] = [[c, v] for c, v in values if c]
        return entry
    try:
        value = literal(mod, default_node)
        entry["default"] = list(value) if isinstance(value, tuple) else value
    except ValueError:
        entry["default_expr"] = ast.unparse(default_node)
        entry["default"] = None
    return entry


def class_chain(mod: Module, name: str) -> list[ast.ClassDef]:
    """The class and its bases found in the sources, base first (MRO order reversed for single inheritance)."""
    chain = []
    while name in mod.classes:
        cls = mod.classes[name]
        chain.append(cls)
        bases = [ast.unparse(b).split(".")[-1] for b in cls.bases]
        name = next((b for b in bases if b in mod.classes), "")
    return list(reversed(chain))


def post_init_assignments(cls: ast.ClassDef) -> dict[str, str]:
    """`self.X = ...` statements in __post_init__: the fields whose value is computed after parsing."""
    found: dict[str, str] = {}
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__post_init__":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign):
                    for t in sub.targets:
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            found.setdefault(t.attr, ast.unparse(sub.value)[:160])
    return found


def post_init_raises(cls: ast.ClassDef, word: str) -> bool:
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__post_init__":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Raise) and word in ast.unparse(sub):
                    return True
    return False


def read_class(mod: Module, name: str) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    fields: dict[str, dict[str, Any]] = {}
    computed: dict[str, str] = {}
    for cls in class_chain(mod, name):
        origin = SOURCE_NAMES.get(cls.name, cls.name)
        constants = class_constants(cls)
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                entry = read_field(mod, stmt, constants)
                if entry is None:
                    fields.pop(stmt.target.id, None)
                    continue
                entry["source"] = origin
                previous = fields.get(stmt.target.id)
                if previous is not None and previous["source"] != origin:
                    entry["overrides"] = previous["source"]
                    if previous.get("default") != entry.get("default"):
                        entry["base_default"] = previous.get("default")
                fields[stmt.target.id] = entry
        if origin != "TrainingArguments":
            computed.update(post_init_assignments(cls))
    return fields, computed


def field_of(node: ast.AST) -> str | None:
    """'f' for `self.f`, `args.f` or a plain name `f`."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def raises(body: list[ast.stmt]) -> bool:
    return any(isinstance(s, ast.Raise) for s in body)
