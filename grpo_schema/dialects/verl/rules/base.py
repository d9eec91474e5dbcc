"""What verl's rule areas share: the registry they register into, the `@rule` that does it, and the helpers that
give a finding its smallest edits and the GPU counts at which it holds."""

from __future__ import annotations

import functools
from collections import ChainMap
from dataclasses import dataclass
from typing import Any, Callable

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.rules import Finding, Rule
from grpo_schema.engine.rules import rule as engine_rule

VERL_RULES: list[Rule] = []
rule = functools.partial(engine_rule, into=VERL_RULES)

# The GPU counts a finding's hint lists: 1-8 on one node, then whole nodes of n_gpus_per_node.
_GPU_COUNTS = tuple(range(1, 9)) + tuple(8 * k for k in range(2, 17))


@dataclass
class VerlContext:
    """What verl's rules read besides the config: nothing probed, everything declared."""

    plan: None = None  # the engine's runner skips rules that need a TRL plan; verl's need none


def gpu_counts_where(config: Any, holds: Callable[[Any], bool]) -> list[int]:
    """The total GPU counts (one node up to 8, then whole nodes) at which `holds(config)` is true."""
    per_node = int(config["trainer.n_gpus_per_node"])
    found = []
    for total in _GPU_COUNTS:
        nodes, gpus = (1, total) if total <= 8 or total % per_node else (total // per_node, per_node)
        trial = _with(config, {"trainer.n_gpus_per_node": gpus, "trainer.nnodes": nodes})
        if holds(trial):
            found.append(total)
    return found


def gpu_hint(config: Any, holds: Callable[[Any], bool]) -> str:
    counts = gpu_counts_where(config, holds)
    if not counts:
        return "no GPU count up to 128 makes this hold with the other settings as they are"
    shown = ", ".join(map(str, counts[:12])) + (", ..." if len(counts) > 12 else "")
    return f"holds at {shown} GPUs in all (trainer.n_gpus_per_node x trainer.nnodes)"


def _with(config: Any, changes: dict[str, Any]) -> Any:
    from grpo_schema.dialects.verl.config import VerlConfig

    return VerlConfig(config.table, ChainMap(changes, config.values), config.settings, config.unknown)  # type: ignore


def smallest_value(
    config: Any, key: str, holds: Callable[[Any], bool], upward: bool = True, limit: int = 1 << 16
) -> int | None:
    """The value of `key` nearest to its current one (searching up, else down) that makes `holds` true."""
    current = int(config[key])
    # a bounded search: the edits worth proposing are near the value written
    candidates = range(current + 1, min(limit, current * 4 + 64)) if upward else range(current - 1, 0, -1)
    for value in candidates:
        if holds(_with(config, {key: value})):
            return value
    return None


def edits(config: Any, holds: Callable[[Any], bool], *keys: tuple[str, bool]) -> tuple[Fix, ...]:
    """One smallest single-key edit per (key, search upward) that makes `holds` true."""
    fixes = []
    for key, upward in keys:
        value = smallest_value(config, key, holds, upward)
        if value is None and upward:
            value = smallest_value(config, key, holds, upward=False)
        if value is not None:
            fixes.append(Fix(set={key: value}, safe=False, title=f"set {key}={value}"))
    return tuple(fixes)


def finding(message: str, fields: tuple[str, ...], hint: str = "", fixes: tuple[Fix, ...] = ()) -> Finding:
    return Finding(message, fields, hint=hint, fix=fixes[0] if fixes else None, alternatives=fixes[1:])


__all__ = ["VERL_RULES", "VerlContext", "Finding", "rule", "finding", "edits", "gpu_hint", "gpu_counts_where"]


GPUS = ("trainer.n_gpus_per_node", "trainer.nnodes")  # the keys the declared GPUs are read from


def unset_fix(key: str) -> Fix:
    return Fix(unset=(key,), safe=True, title=f"remove {key}")


def set_fix(key: str, value: Any) -> Fix:
    return Fix(set={key: value}, safe=False, title=f"set {key}={value}")
