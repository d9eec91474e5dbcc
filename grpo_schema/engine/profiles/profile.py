"""Profile: what the validator knows about a downstream training script built on TRL's GRPO script.

Its own module so that the built-in profiles (open_r1) and the registry (the package) both build on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterable

from grpo_schema.engine.diagnostics import Diagnostic


@dataclass(frozen=True, eq=False)
class Profile:
    name: str
    description: str
    # A Pydantic model class, or its import path 'module:Class' (loaded only when needed).
    script_args: Any
    reward_funcs: tuple[str, ...] = ()
    # True when the project's script resolves reward names only through its own registry.
    replaces_builtin_rewards: bool = True
    allows_dotted_rewards: bool = False
    # What the script uses when the config sets no reward_funcs (None: no default, as in TRL's script).
    default_reward_funcs: tuple[str, ...] | None = None
    # TRL keys the project's own script arguments read at every TRL release it pinned (open-r1's
    # GRPOScriptArguments always had reward_funcs; TRL's script gained it only in 0.18): judged as TRL 0.14-0.17
    # they are the script's, not keys the release does not read.
    script_reads: frozenset[str] = frozenset()
    # Where the script's default reward_funcs changed with its TRL pin: (first TRL release of the era, defaults),
    # oldest first; default_reward_funcs stands for the newest era and for TRL 1.16.
    default_reward_funcs_by_release: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # TRL built-in reward names and what this script's registry calls the same reward (recipes written for
    # `trl grpo` are adapted with it when they are used under this profile).
    reward_equivalents: dict[str, str] = field(default_factory=dict)
    # Extra checks over (the validated TRL config, the validated script arguments, the raw mapping).
    checks: tuple[Callable[[Any, Any, dict[str, Any]], Iterable[Diagnostic]], ...] = field(default=())
    # Key of a validator cached in grpo_schema/engine/compiled_models.json (built-in profiles only).
    compiled_key: str | None = None

    @cached_property
    def validator(self) -> Any:
        """The compiled validator of the script arguments (grpo_schema.engine.compiled.CompiledModel)."""
        from grpo_schema.engine.compiled import compiled, from_model

        if self.compiled_key:
            return compiled(self.compiled_key)
        model = self.script_args
        if isinstance(model, str):
            import importlib

            module, name = model.split(":")
            model = getattr(importlib.import_module(module), name)
        return from_model(model, self.name)

    def default_rewards_at(self, release: str | None) -> tuple[str, ...] | None:
        """The script's default reward_funcs at the TRL release its recipe pins (None: the newest era's)."""
        if release is None or not self.default_reward_funcs_by_release:
            return self.default_reward_funcs
        from grpo_schema.versions.tables import parse_release

        found = self.default_reward_funcs
        for first, names in self.default_reward_funcs_by_release:
            if parse_release(release) >= parse_release(first):
                found = names
        return found

    @property
    def keys(self) -> frozenset[str]:
        return self.validator.names
