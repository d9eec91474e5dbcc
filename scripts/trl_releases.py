#!/usr/bin/env python3
"""Regenerate grpo_schema/versions/releases/*.json: the `trl grpo --config` surface of each TRL release.

For every TRL release since GRPOTrainer appeared (0.14.0), this reads the released wheel's source with `ast`
(never importing trl or transformers): GRPOConfig (with its TRL base classes), the script-arguments class `trl grpo`
builds its parser from (GRPOScriptArguments or ScriptArguments), ModelConfig and, where the release has it,
DatasetMixtureConfig; and TrainingArguments from the transformers wheel that release was used with. The fields are
merged the way HfArgumentParser merges them (TrainingArguments, then GRPOConfig's overrides; the other dataclasses
beside it), and the release's front end (cli.py / cli/) and script (scripts/grpo.py) are read for what they do
with keys they do not know.

Usage:
    python scripts/trl_releases.py                # download what is missing into the cache, write the tables
    python scripts/trl_releases.py --check        # exit 1 if the committed tables differ from a regeneration
    python scripts/trl_releases.py --offline      # use the cache only (fail if a wheel is missing)
    python scripts/trl_releases.py --only requirements   # only requirements.json (needs the trl wheels only)
    python scripts/trl_releases.py --only trainer        # only trainer.json

requirements.json holds, for every release above, what its wheel's METADATA declares (install_requires and each
extra, as requirement strings with the extra's own marker removed), its console scripts and whether it ships the
`trl vllm-serve` script: `grpo doctor` judges an environment against them. trainer.json holds, for every release,
the values of each choice-like field (loss_type, importance_sampling_level, scale_rewards, ...) its trainer accepts,
read from its grpo_trainer.py and grpo_config.py: the checks that refuse any other value; and the keys it warns
are deprecated (its GRPOConfig, trainer and TrainingArguments), with the key it says to use instead; the reward
names its `trl grpo` script resolves without an import (the keys of trl/scripts/grpo.py's reward registry); and its
batch meaning: whether per_device_train_batch_size counts prompts (0.14) or completions, and each divisibility by
num_generations it checks (the product of fields, in the trainer or in GRPOConfig, the evaluation batch's apart).

Wheels are cached in $TRL_WHEEL_CACHE (default /tmp/trl-wheels): trl-*.whl there, transformers-*.whl in
transformers/. The output is deterministic: sorted keys, no timestamps other than the wheels' own build dates.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "grpo_schema" / "versions" / "releases"
CACHE = Path(os.environ.get("TRL_WHEEL_CACHE", "/tmp/trl-wheels"))

# The last patch of every minor release since 0.14, and the transformers release it was used with: the newest
# transformers release built before the TRL wheel (the wheels' zip dates, recorded in the index, bear this out),
# except from 0.29 on, where the version pip picks today (5.24.0) is what a fresh install gets and what the oracle
# venvs (scripts/trl-release-venvs.sh) run.
RELEASES: dict[str, str] = {
    "0.14.0": "4.48.1",
    "0.15.2": "4.49.0",
    "0.16.1": "4.50.3",
    "0.17.0": "4.51.3",
    "0.18.2": "4.52.4",
    "0.19.1": "4.53.1",
    "0.20.0": "4.54.0",
    "0.21.0": "4.55.0",
    "0.22.2": "4.56.0",
    "0.23.1": "4.56.2",
    "0.24.0": "4.57.1",
    "0.25.1": "4.57.1",
    "0.26.2": "4.57.3",
    "0.27.2": "5.0.0",
    "0.28.0": "5.1.0",
    "0.29.1": "5.24.0",
    "1.0.0": "5.24.0",
    "1.1.0": "5.24.0",
    "1.2.0": "5.24.0",
    "1.3.0": "5.24.0",
    "1.4.0": "5.24.0",
    "1.5.1": "5.24.0",
    "1.6.0": "5.24.0",
    "1.7.1": "5.24.0",
    "1.8.0": "5.24.0",
    "1.9.2": "5.24.0",
    "1.10.0": "5.24.0",
    "1.11.0": "5.24.0",
    "1.12.0": "5.24.0",
    "1.13.0": "5.24.0",
    "1.14.2": "5.24.0",
    "1.15.0": "5.24.0",
    "1.16.0": "5.24.0",
}
PIP_PICKS = "5.24.0"

TRL_FILES = (
    "trl/trainer/grpo_config.py",
    "trl/trainer/base_config.py",
    "trl/trainer/model_config.py",
    "trl/scripts/utils.py",
    "trl/scripts/grpo.py",
)
TF_FILES = ("transformers/training_args.py", "transformers/trainer_utils.py", "transformers/debug_utils.py")
SOURCE_NAMES = {  # the class a field is reported as coming from
    "GRPOConfig": "GRPOConfig",
    "_BaseConfig": "GRPOConfig",
    "TrainingArguments": "TrainingArguments",
    "ModelConfig": "ModelConfig",
    "GRPOScriptArguments": "ScriptArguments",
    "ScriptArguments": "ScriptArguments",
    "DatasetMixtureConfig": "DatasetMixtureConfig",
}


def vkey(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


# --- downloads ---------------------------------------------------------------------------------------------------


def wheel(package: str, version: str, offline: bool) -> Path:
    folder = CACHE if package == "trl" else CACHE / package
    path = folder / f"{package}-{version}-py3-none-any.whl"
    if not path.exists():
        if offline:
            raise SystemExit(f"{path} is not cached (run without --offline to download it)")
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--only-binary",
                ":all:",
                f"{package}=={version}",
                "-d",
                str(folder),
            ],
            check=True,
        )
    return path


def read_sources(path: Path, names: tuple[str, ...]) -> tuple[dict[str, str], str]:
    """The named files' text (those present) and the wheel's build date (newest zip entry)."""
    with zipfile.ZipFile(path) as zf:
        present = set(zf.namelist())
        texts = {n: zf.read(n).decode("utf-8") for n in names if n in present}
        cli = sorted(n for n in present if n == "trl/cli.py" or (n.startswith("trl/cli/") and n.endswith(".py")))
        texts.update({n: zf.read(n).decode("utf-8") for n in cli})
        date = max(i.date_time for i in zf.infolist())
    return texts, "%04d-%02d-%02d" % date[:3]


# --- ast reading -------------------------------------------------------------------------------------------------


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


# --- front end ---------------------------------------------------------------------------------------------------


def front_end(sources: dict[str, str]) -> dict[str, Any]:
    grpo = sources["trl/scripts/grpo.py"]
    utils = sources["trl/scripts/utils.py"]
    tree = ast.parse(grpo)
    call = next(
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("parse_args_and_config")
    )
    kw = {k.arg: ast.unparse(k.value) for k in call.keywords}
    fails_by_default = "fail_with_unknown_args: bool = True" in utils
    if kw.get("return_remaining_strings") == "True" or kw.get("fail_with_unknown_args") == "False":
        script = "ignored"
    elif fails_by_default:
        script = "error"
    else:
        script = "ignored"
    if "trl/cli.py" in sources:
        cli = sources["trl/cli.py"]
        reads_config = "parse_args_and_config(return_remaining_strings=True)" in cli
        branch = cli.split('args.command == "grpo"', 1)[1].split("elif args.command", 1)[0]
        forwards = "launch_args" in branch
    else:  # trl/cli/ package (0.29 on)
        training = sources["trl/cli/commands/training.py"]
        reads_config = True
        forwards = "launch_args" in training and ("remaining_args" in training or "config_remaining" in training)
    if not reads_config:
        unknown = "no_config"
        message = "unrecognized arguments: --config (the front end parses argv before any config is read)"
    elif forwards:
        unknown = "accelerate"
        message = "accelerate launch: error: unrecognized arguments (keys accelerate launch knows are consumed)"
    elif script == "error":
        unknown = "error"
        message = "ValueError: Unknown arguments from config file: [...]"
    else:
        unknown = "ignored"
        message = ""
    dataclass_names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "dataclass_types" for t in node.targets):
            dataclass_names = [ast.unparse(e) for e in node.value.elts]  # type: ignore[attr-defined]
    if not dataclass_names:  # 0.14-0.21: make_parser builds the tuple inline
        for node in ast.walk(tree):
            if isinstance(node, ast.Tuple) and any(ast.unparse(e) == "GRPOConfig" for e in node.elts):
                dataclass_names = [ast.unparse(e) for e in node.elts]
                break
    return {
        "dataclasses": dataclass_names,
        "reads_config": reads_config,
        "script_unknown_keys": script,
        "unknown_keys": unknown,
        "unknown_keys_message": message,
    }


# --- one release -------------------------------------------------------------------------------------------------


def surface(version: str, tf_version: str, offline: bool) -> dict[str, Any]:
    trl_sources, trl_date = read_sources(wheel("trl", version, offline), TRL_FILES)
    tf_sources, tf_date = read_sources(wheel("transformers", tf_version, offline), TF_FILES)
    tf_sources = {k: v for k, v in tf_sources.items() if not k.startswith("trl/")}
    mod = Module({**tf_sources, **{k: v for k, v in trl_sources.items() if not k.startswith("trl/cli")}})
    fe = front_end(trl_sources)
    fields: dict[str, dict[str, Any]] = {}
    computed: dict[str, str] = {}
    for cls_name in fe["dataclasses"]:
        cls_fields, cls_computed = read_class(mod, cls_name)
        for name, entry in cls_fields.items():
            if name in fields:
                entry["duplicate_of"] = fields[name]["source"]
            fields[name] = entry
        computed.update(cls_computed)
    for name, expr in computed.items():
        if name in fields:
            fields[name]["post_init"] = expr
    grpo_classes = [c for c in class_chain(mod, "GRPOConfig") if c.name != "TrainingArguments"]
    fe["batch_divisibility_at_parse"] = any(post_init_raises(c, "divisible") for c in grpo_classes)
    return {
        "release": version,
        "transformers": tf_version,
        "transformers_basis": "pip picks" if tf_version == PIP_PICKS and vkey(version) >= (0, 29) else "release date",
        "dates": {"trl": trl_date, "transformers": tf_date},
        "fields": dict(sorted(fields.items())),
        "front_end": fe,
    }


# --- trainer facts -----------------------------------------------------------------------------------------------
# What a release's trainer accepts after parsing: the string values of each choice-like field that its GRPOConfig
# and GRPOTrainer let through before an unconditional `raise` (at init, or at the first step's loss).

TRAINER_FILES = ("trl/trainer/grpo_trainer.py", "trl/trainer/grpo_config.py")


def _field_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _strings(node: ast.AST) -> set[str] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            return {e.value for e in node.elts}  # type: ignore[attr-defined]
        return None
    return {node.value} if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _comparison(test: ast.AST) -> tuple[str, set[str], bool] | None:
    """(field, values, negated) for `x.f == 's'`, `x.f in [...]`, `x.f != 's'`, `x.f not in [...]`."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    name, values, op = _field_of(test.left), _strings(test.comparators[0]), test.ops[0]
    if name is None or values is None:
        return None
    if isinstance(op, (ast.Eq, ast.In)):
        return name, values, False
    return (name, values, True) if isinstance(op, (ast.NotEq, ast.NotIn)) else None


def _raises(body: list[ast.stmt]) -> bool:
    return any(isinstance(s, ast.Raise) for s in body)


def source_choices(src: str) -> dict[str, list[str]]:
    """The string values each check not itself under a condition lets through before its `raise` (an if/elif chain
    on one field whose else raises, or `if field not in (...): raise`): what the trainer refuses whatever else the
    config says. A value must pass every such check of its field."""
    tree = ast.parse(src)
    ifs = [n for n in ast.walk(tree) if isinstance(n, ast.If)]
    elifs = {id(n.orelse[0]) for n in ifs if len(n.orelse) == 1 and isinstance(n.orelse[0], ast.If)}
    nested: set[int] = set()
    for n in ifs:
        for child in n.body + [x for x in n.orelse if id(x) not in elifs]:
            nested |= {id(d) for d in ast.walk(child)}
    checks: dict[str, list[set[str]]] = {}
    for node in ifs:
        if id(node) in elifs or id(node) in nested:
            continue
        first = _comparison(node.test)
        if first is None:
            continue
        name, seen, negated = first
        if negated:
            if _raises(node.body):
                checks.setdefault(name, []).append(set(seen))
            continue
        seen, current = set(seen), node
        while len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
            nxt = _comparison(current.orelse[0].test)
            if nxt is None or nxt[0] != name or nxt[2]:
                break
            seen |= nxt[1]
            current = current.orelse[0]
        else:
            if current.orelse and _raises(current.orelse):
                checks.setdefault(name, []).append(seen)
    return {name: sorted(set.intersection(*sets)) for name, sets in checks.items()}


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


SCRIPT_FILE = "trl/scripts/grpo.py"


def source_reward_names(src: str) -> list[str]:
    """The reward names `trl grpo` resolves without an import: the string keys of the script's
    `reward_funcs_registry` dict (at module level, or inside main() from 1.0 on), in the script's order; none where
    the script has no registry (before 0.18 it took only a reward model)."""
    for node in ast.walk(ast.parse(src)) if src else ():
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Dict)
            and any(isinstance(t, ast.Name) and t.id == "reward_funcs_registry" for t in node.targets)
        ):
            return [k.value for k in node.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return []


# --- batch meaning -----------------------------------------------------------------------------------------------
# What per_device_train_batch_size counts and which divisibility checks the release makes, and where. Up to 0.14 the
# dataloader hands each process per_device_train_batch_size prompts and the trainer asks for num_generations
# completions of each (no check); from 0.15 a sampler repeats every prompt num_generations times in the data stream
# (`mini_repeat_count=self.num_generations`), so the rows are completions and a group must not be cut: 0.15-0.16
# check the global micro-batch in the trainer, 0.17 the accumulated batch, 0.18 on the generation batch in
# GRPOConfig.__post_init__.

_WORLD = {"num_processes", "world_size"}  # self.accelerator.num_processes, self.world_size


def _factor(node: ast.AST, bound: dict[str, ast.AST], depth: int = 0) -> list[str]:
    """The factors of a product of config fields: `args.per_device_train_batch_size * num_processes` ->
    ['per_device_train_batch_size', 'world_size'] (a local name is followed to its assignment)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factor(node.left, bound, depth) + _factor(node.right, bound, depth)
    if isinstance(node, ast.Name) and node.id in bound and depth < 4:
        return _factor(bound[node.id], bound, depth + 1)
    name = _field_of(node) or ast.unparse(node)
    return ["world_size" if name in _WORLD else name]


def _local_assignments(function: ast.AST) -> list[tuple[int, str, ast.AST]]:
    return [
        (n.lineno, n.targets[0].id, n.value)
        for n in ast.walk(function)
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
    ]


def _divided_by_generations(test: ast.AST, bound: dict[str, ast.AST]) -> ast.AST | None:
    """X in `X % self.num_generations != 0`, or in `self.num_generations not in possible_values` where
    possible_values lists the n with X % n == 0."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if (
        isinstance(op, ast.NotEq)
        and isinstance(left, ast.BinOp)
        and isinstance(left.op, ast.Mod)
        and _field_of(left.right) == "num_generations"
    ):
        return left.left
    if isinstance(op, ast.NotIn) and _field_of(left) == "num_generations" and isinstance(right, ast.Name):
        listed = bound.get(right.id)
        if isinstance(listed, ast.ListComp):
            for condition in listed.generators[0].ifs:
                if (
                    isinstance(condition, ast.Compare)
                    and isinstance(condition.left, ast.BinOp)
                    and isinstance(condition.left.op, ast.Mod)
                ):
                    return condition.left.left
    return None


def source_batch_checks(src: str, where: str) -> list[dict[str, Any]]:
    """Every `raise` guarded by a divisibility by num_generations in one file: the product checked (its factors)."""
    found = []
    for function in (n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef)) if src else ():
        assignments = _local_assignments(function)
        for node in ast.walk(function):
            if not (isinstance(node, ast.If) and _raises(node.body)):
                continue
            bound = {name: value for line, name, value in assignments if line < node.lineno}
            checked = _divided_by_generations(node.test, bound)
            if checked is not None:
                factors = _factor(checked, bound)
                found.append({"where": where, "product": factors, "eval": "per_device_eval_batch_size" in factors})
    return found


def source_batch_unit(trainer_src: str) -> str:
    """'completions' when the trainer's sampler repeats each prompt num_generations times in the data stream (a
    `...RepeatRandomSampler(dataset, self.num_generations)` or `RepeatSampler(mini_repeat_count=self.num_generations)`:
    each row of a per-device batch is one completion), else 'prompts' (the trainer generates num_generations per
    row it is handed)."""
    for node in ast.walk(ast.parse(trainer_src)):
        if (
            isinstance(node, ast.Call)
            and ast.unparse(node.func).split(".")[-1].startswith("Repeat")
            and any(_field_of(a) == "num_generations" for a in node.args + [k.value for k in node.keywords])
        ):
            return "completions"
    return "prompts"


def batch_facts(sources: dict[str, str]) -> dict[str, Any]:
    trainer = sources.get("trl/trainer/grpo_trainer.py", "")
    checks = source_batch_checks(trainer, "trainer") + source_batch_checks(
        sources.get("trl/trainer/grpo_config.py", ""), "config"
    )
    return {"unit": source_batch_unit(trainer), "checks": checks}


def unused_deprecations(trainer_src: str, config_keys: set[str], deprecated: dict[str, str | None]) -> set[str]:
    """GRPOConfig's deprecated keys with nothing in their place that the trainer never reads (0.16-0.17's vllm_device,
    vllm_gpu_memory_utilization, ...: vLLM had moved to `trl vllm-serve`): the parser takes them, the warning is all
    they do."""
    return {k for k in config_keys if deprecated[k] is None and not re.search(rf"\.{k}\b", trainer_src)}


def trainer_facts(version: str, offline: bool) -> dict[str, Any]:
    sources, _ = read_sources(wheel("trl", version, offline), TRAINER_FILES + DEPRECATION_FILES[1:] + (SCRIPT_FILE,))
    result: dict[str, list[str]] = {}
    for name in TRAINER_FILES:
        for f, values in source_choices(sources.get(name, "")).items():
            result[f] = sorted(set(result[f]) & set(values)) if f in result else values
    fields = set(surface(version, RELEASES[version], offline)["fields"])
    tf_sources, _ = read_sources(wheel("transformers", RELEASES[version], offline), ("transformers/training_args.py",))
    deprecated: dict[str, str | None] = {}
    for text in [sources.get(n, "") for n in DEPRECATION_FILES] + list(tf_sources.values()):
        deprecated.update(source_deprecations(text, fields))
    config_keys = {k for k in deprecated if k in source_deprecations(sources.get(DEPRECATION_FILES[0], ""), fields)}
    unused = unused_deprecations(sources.get("trl/trainer/grpo_trainer.py", ""), config_keys, deprecated)
    return {
        "choices": dict(sorted(result.items())),
        "deprecations": {
            k: {"use": v, **({"unused": True} if k in unused else {})} for k, v in sorted(deprecated.items())
        },
        "reward_funcs": source_reward_names(sources.get(SCRIPT_FILE, "")),
        "batch": batch_facts(sources),
    }


def trainer_file(offline: bool) -> str:
    return dump(
        {
            "format": 1,
            "source": "each release's trl/trainer/grpo_trainer.py, grpo_config.py and base_config.py, "
            "trl/scripts/grpo.py, and its transformers' training_args.py",
            "releases": {v: trainer_facts(v, offline) for v in sorted(RELEASES, key=vkey)},
        }
    )


# --- requirements ------------------------------------------------------------------------------------------------

_EXTRA_MARKER = re.compile(r"""\s*(?:and\s+)?extra\s*==\s*["']([^"']+)["']\s*(?:and\s+)?""")


def _strip_extra(marker: str) -> tuple[str | None, str]:
    """('vllm', 'python_version < "3.13"') from 'python_version < "3.13" and extra == "vllm"'."""
    m = _EXTRA_MARKER.search(marker)
    if m is None:
        return None, marker.strip()
    rest = (marker[: m.start()] + " " + marker[m.end() :]).strip()
    rest = re.sub(r"^\s*and\s+|\s+and\s*$", "", rest).strip()
    return m.group(1), rest


def release_requirements(version: str, offline: bool) -> dict[str, Any]:
    """What one release's wheel declares: install_requires, extras, console scripts, `trl vllm-serve`."""
    with zipfile.ZipFile(wheel("trl", version, offline)) as zf:
        names = zf.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = zf.read(meta_name).decode("utf-8")
        ep_name = next((n for n in names if n.endswith(".dist-info/entry_points.txt")), None)
        entry_points = zf.read(ep_name).decode("utf-8") if ep_name else ""
        vllm_serve = "trl/scripts/vllm_serve.py" in names
    requires: list[str] = []
    extras: dict[str, list[str]] = {}
    python = None
    for line in metadata.split("\n\n", 1)[0].splitlines():
        if line.startswith("Requires-Python:"):
            python = line.split(":", 1)[1].strip()
        if line.startswith("Provides-Extra:"):
            extras.setdefault(line.split(":", 1)[1].strip(), [])
        if not line.startswith("Requires-Dist:"):
            continue
        text = line.split(":", 1)[1].strip()
        req, _, marker = text.partition(";")
        extra, marker = _strip_extra(marker)
        entry = req.strip().replace(" ", "") + (f"; {marker}" if marker else "")
        if extra is None:
            requires.append(entry)
        else:
            extras.setdefault(extra, []).append(entry)
    scripts: list[str] = []
    section = ""
    for line in entry_points.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif section == "console_scripts" and "=" in line:
            scripts.append(line.split("=", 1)[0].strip())
    return {
        "requires": requires,
        "extras": {k: extras[k] for k in sorted(extras) if k != "dev"},
        "requires_python": python,
        "console_scripts": sorted(scripts),
        "vllm_serve": vllm_serve,
    }


def requirements_file(offline: bool) -> str:
    return dump(
        {
            "format": 1,
            "source": "each release's wheel METADATA and entry_points.txt",
            "releases": {v: release_requirements(v, offline) for v in sorted(RELEASES, key=vkey)},
        }
    )


def dump(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def comparable(table: dict[str, Any]) -> str:
    return dump({"fields": table["fields"], "front_end": table["front_end"], "transformers": table["transformers"]})


def build(offline: bool) -> dict[str, str]:
    """{file name: content} for every table and the index."""
    files: dict[str, str] = {}
    index: list[dict[str, Any]] = []
    previous: tuple[str, str] | None = None  # (comparable, file)
    for version in sorted(RELEASES, key=vkey):
        table = surface(version, RELEASES[version], offline)
        key = comparable(table)
        if previous is not None and previous[0] == key:
            name = previous[1]
        else:
            name = ".".join(version.split(".")[:2]) + ".json"
            files[name] = dump(table)
            previous = (key, name)
        index.append(
            {
                "release": version,
                "file": name,
                "transformers": table["transformers"],
                "dates": table["dates"],
                "unknown_keys": table["front_end"]["unknown_keys"],
            }
        )
    files["index.json"] = dump({"format": 1, "minimum": "0.14.0", "releases": index})
    files["requirements.json"] = requirements_file(offline)
    files["trainer.json"] = trainer_file(offline)
    return files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed tables; write nothing")
    ap.add_argument("--offline", action="store_true", help="use the wheel cache only")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--only",
        choices=["requirements", "trainer"],
        help="write only requirements.json (trl wheels only) or trainer.json",
    )
    args = ap.parse_args()
    if args.only == "trainer":
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "trainer.json").write_text(trainer_file(args.offline))
        print(f"wrote {args.out / 'trainer.json'}")
        return 0
    if args.only == "requirements":
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "requirements.json").write_text(requirements_file(args.offline))
        print(f"wrote {args.out / 'requirements.json'}")
        return 0
    files = build(args.offline or args.check)
    if args.check:
        committed = {p.name: p.read_text() for p in args.out.glob("*.json")}
        if committed != files:
            changed = sorted(set(committed) ^ set(files) | {n for n in files if committed.get(n) != files[n]})
            print("tables differ from a regeneration:", ", ".join(changed))
            return 1
        print(f"{len(files)} files up to date")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for stale in args.out.glob("*.json"):
        if stale.name not in files:
            stale.unlink()
    for name, text in files.items():
        (args.out / name).write_text(text)
    print(f"wrote {len(files)} files to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
