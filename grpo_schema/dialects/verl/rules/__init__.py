"""verl's rules, in the engine's shape: small named functions registered with the engine's `@rule` (each with a
stable GRPO-Q code in the one codes table), run by the engine's `run_rules` on verl configs only.

parse_time: the checks verl itself runs before Ray starts (validate_config and its config dataclasses), with
verl's verdict. cluster: the checks verl runs only inside Ray workers, moved before launch and computed from the
declared GPUs. lints: what verl does not check at all. base: what they share.
"""

from __future__ import annotations

import importlib

from grpo_schema.dialects.verl.rules.base import VERL_RULES, VerlContext
from grpo_schema.engine.rules import Rule

_AREAS = ("parse_time", "cluster", "lints")


def load_verl_rules() -> list[Rule]:
    for area in _AREAS:  # importing an area registers its rules (once)
        importlib.import_module(f"grpo_schema.dialects.verl.rules.{area}")
    return VERL_RULES


__all__ = ["VERL_RULES", "VerlContext", "load_verl_rules"]
