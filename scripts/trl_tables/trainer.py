"""trainer.json: what each release's trainer accepts after parsing, the reward names its script registers, the
keys it warns are deprecated and its batch meaning."""

from __future__ import annotations

import ast
import re
from typing import Any

from trl_tables.batch import batch_facts
from trl_tables.deprecations import DEPRECATION_FILES, source_deprecations
from trl_tables.fields import field_of, raises
from trl_tables.output import dump
from trl_tables.releases import RELEASES, vkey
from trl_tables.surface import surface
from trl_tables.wheels import read_sources, wheel

# What a release's trainer accepts after parsing: the string values of each choice-like field that its GRPOConfig
# and GRPOTrainer let through before an unconditional `raise` (at init, or at the first step's loss).

TRAINER_FILES = ("trl/trainer/grpo_trainer.py", "trl/trainer/grpo_config.py")


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
    name, values, op = field_of(test.left), _strings(test.comparators[0]), test.ops[0]
    if name is None or values is None:
        return None
    if isinstance(op, (ast.Eq, ast.In)):
        return name, values, False
    return (name, values, True) if isinstance(op, (ast.NotEq, ast.NotIn)) else None


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
            if raises(node.body):
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
            if current.orelse and raises(current.orelse):
                checks.setdefault(name, []).append(seen)
    return {name: sorted(set.intersection(*sets)) for name, sets in checks.items()}


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
