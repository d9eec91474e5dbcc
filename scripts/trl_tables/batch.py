"""The batch meaning of a release, read from its trainer and GRPOConfig source."""

from __future__ import annotations

import ast
from typing import Any

from trl_tables.fields import field_of, raises

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
    name = field_of(node) or ast.unparse(node)
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
        and field_of(left.right) == "num_generations"
    ):
        return left.left
    if isinstance(op, ast.NotIn) and field_of(left) == "num_generations" and isinstance(right, ast.Name):
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
            if not (isinstance(node, ast.If) and raises(node.body)):
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
            and any(field_of(a) == "num_generations" for a in node.args + [k.value for k in node.keywords])
        ):
            return "completions"
    return "prompts"


def batch_facts(sources: dict[str, str]) -> dict[str, Any]:
    trainer = sources.get("trl/trainer/grpo_trainer.py", "")
    checks = source_batch_checks(trainer, "trainer") + source_batch_checks(
        sources.get("trl/trainer/grpo_config.py", ""), "config"
    )
    return {"unit": source_batch_unit(trainer), "checks": checks}
