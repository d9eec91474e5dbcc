"""The batch geometry: the inputs of TRL's batch arithmetic as a release reads them, and the checks it makes.

`problems()` is the only place the batch checks are made: the schedule (`plan.py`), the relations `grpo explain`
shows (`batch_relations.py`), the batch rules and the fix search all ask it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

MAX_WORLD_SIZE_HINT = 64


@dataclass(frozen=True)
class Geometry:
    """The inputs of the batch arithmetic (so rules can ask 'what if the world size were N')."""

    per_device_train_batch_size: int
    num_generations: int
    gradient_accumulation_steps: int
    num_iterations: int
    generation_batch_size: int | None
    steps_per_generation: int | None
    eval_enabled: bool = False
    per_device_eval_batch_size: int = 8
    num_generations_eval: int | None = None
    # The release's batch meaning (grpo_schema.versions' BatchMeaning; TRL 1.16's when none is given): what
    # per_device_train_batch_size counts, the product its trainer checks against num_generations, and whether it
    # checks the evaluation batch.
    unit: str = "completions"  # "prompts": TRL 0.14, each row a prompt with num_generations completions
    checked: tuple[str, ...] = ("generation_batch_size",)  # () where no check is made
    eval_checked: bool = True

    @classmethod
    def of(cls, config: Any, meaning: Any = None) -> "Geometry":
        """The geometry of a config as a release reads it (`meaning`: its BatchMeaning, None for TRL 1.16)."""
        values: tuple[Any, ...] = (
            config.per_device_train_batch_size,
            config.num_generations,
            config.gradient_accumulation_steps,
            config.num_iterations,
            config.generation_batch_size,
            config.steps_per_generation,
            eval_enabled(config),
            config.per_device_eval_batch_size,
            config.num_generations_eval,
        )
        if meaning is not None:
            train, evaluation = meaning.train_check, meaning.eval_check
            values += (meaning.unit, train.product if train is not None else (), evaluation is not None)
        if cls is Geometry:
            try:
                return _geometry(*values)
            except TypeError:  # an unhashable value (never in a validated config): built, not shared
                pass
        return cls(*values)


# derive_plan and the batch rules ask for the geometry of the same config, and building this frozen dataclass costs
# ~2 us: the same values give the same immutable Geometry. typed=True keeps 8 and 8.0 (and True and 1) apart.
@functools.lru_cache(maxsize=1024, typed=True)
def _geometry(*values: Any) -> Geometry:
    return Geometry(*values)


def eval_enabled(config: Any) -> bool:
    return bool(config.eval_strategy != "no")


@dataclass(frozen=True)
class Problem:
    """Why a geometry has no plan at a world size: the failing check, for the batch rules to report."""

    kind: str  # "both_set" | "not_per_device_multiple" | "partial_groups" | "eval_partial_groups"
    generation_batch_size: int | None = None


def checked_product(geo: Geometry, world_size: int) -> int:
    """The batch the release checks against num_generations (the generation batch from TRL 0.18 on; the global
    micro-batch in 0.15-0.16; per_device x processes x gradient_accumulation_steps in 0.17)."""
    values = {
        "per_device_train_batch_size": geo.per_device_train_batch_size,
        "world_size": world_size,
        "gradient_accumulation_steps": geo.gradient_accumulation_steps,
        "steps_per_generation": geo.steps_per_generation or geo.gradient_accumulation_steps,
    }
    product = 1
    for name in geo.checked:
        product *= generation_batch_size(geo, world_size) if name == "generation_batch_size" else values[name]
    return product


def problems(geo: Geometry, world_size: int) -> list[Problem]:
    """Every batch check the release makes at this world size; [] means it accepts the geometry (TRL 0.14 makes
    none: each process generates num_generations completions for each of its prompts)."""
    b, P = geo.per_device_train_batch_size, world_size
    found: list[Problem] = []
    if geo.generation_batch_size is not None and geo.steps_per_generation is not None:
        return [Problem("both_set")]
    gbs = generation_batch_size(geo, P)
    if geo.generation_batch_size is not None and geo.generation_batch_size % (b * P):
        found.append(Problem("not_per_device_multiple", gbs))
    elif geo.checked and checked_product(geo, P) % geo.num_generations:
        found.append(Problem("partial_groups", checked_product(geo, P)))
    g_eval = geo.num_generations_eval or geo.num_generations
    if geo.eval_enabled and geo.eval_checked and (geo.per_device_eval_batch_size * P) % g_eval:
        found.append(Problem("eval_partial_groups", geo.per_device_eval_batch_size * P))
    return found


def rows_per_micro_batch(geo: Geometry) -> int:
    """Completions each process trains on per micro-step: per_device_train_batch_size, or that many prompts'
    groups where the release counts prompts (TRL 0.14)."""
    b = geo.per_device_train_batch_size
    return b * geo.num_generations if geo.unit == "prompts" else b


def generation_batch_size(geo: Geometry, world_size: int) -> int:
    """Completions in one generation."""
    if geo.generation_batch_size is not None:
        return geo.generation_batch_size
    steps = geo.steps_per_generation or geo.gradient_accumulation_steps
    return rows_per_micro_batch(geo) * world_size * steps


def valid_world_sizes(geo: Geometry, limit: int = MAX_WORLD_SIZE_HINT) -> list[int]:
    return list(_valid_world_sizes(geo, limit))


@functools.lru_cache(maxsize=1024)
def _valid_world_sizes(geo: Geometry, limit: int) -> tuple[int, ...]:
    # A pure function of the geometry, asked for by every batch error's hint and by the fix search, which checks
    # the config again for each candidate edit: 64 x problems() each time was a fifth of such a re-check.
    return tuple(p for p in range(1, limit + 1) if not problems(geo, p))
