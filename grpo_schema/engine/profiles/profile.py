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

    @property
    def keys(self) -> frozenset[str]:
        return self.validator.names
