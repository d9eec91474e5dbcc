"""The batch schedule: every derived quantity of a config at a declared world size, in one pure function.

Batch arithmetic lives only here. It follows TRL 1.16 (`GRPOConfig.__post_init__`, the RepeatSampler and the
trainer's generation buffer):

    b = per_device_train_batch_size, P = world size, G = num_generations, GA = gradient_accumulation_steps
    s = steps_per_generation, mu = num_iterations
    neither generation_batch_size nor s set:  s = GA,  B_gen = b * P * s
    only generation_batch_size set:           s = B_gen / (b * P)   (must divide)
    only s set:                               B_gen = b * P * s
    B_gen must hold whole groups: B_gen % G == 0.  Prompts per generation U = B_gen / G.
    Generation happens every s * mu micro-steps; an optimizer step every GA micro-steps.
    Old log-probs are computed when GA % (s * mu) != 0, or when vLLM's importance-sampling correction is on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction
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

    @classmethod
    def of(cls, config: Any) -> "Geometry":
        return cls(config.per_device_train_batch_size, config.num_generations, config.gradient_accumulation_steps,
                   config.num_iterations, config.generation_batch_size, config.steps_per_generation,
                   eval_enabled(config), config.per_device_eval_batch_size, config.num_generations_eval)


def eval_enabled(config: Any) -> bool:
    return config.eval_strategy != "no"


@dataclass(frozen=True)
class Problem:
    """Why a geometry has no plan at a world size: the failing check, for the batch rules to report."""

    kind: str  # "both_set" | "not_per_device_multiple" | "partial_groups" | "eval_partial_groups"
    generation_batch_size: int | None = None


def problems(geo: Geometry, world_size: int) -> list[Problem]:
    """Every batch check TRL makes at this world size; [] means TRL accepts the geometry."""
    b, P = geo.per_device_train_batch_size, world_size
    found: list[Problem] = []
    if geo.generation_batch_size is not None and geo.steps_per_generation is not None:
        return [Problem("both_set")]
    gbs = _generation_batch_size(geo, P)
    if geo.generation_batch_size is not None and geo.generation_batch_size % (b * P):
        found.append(Problem("not_per_device_multiple", gbs))
    elif gbs % geo.num_generations:
        found.append(Problem("partial_groups", gbs))
    g_eval = geo.num_generations_eval or geo.num_generations
    if geo.eval_enabled and (geo.per_device_eval_batch_size * P) % g_eval:
        found.append(Problem("eval_partial_groups", geo.per_device_eval_batch_size * P))
    return found


def _generation_batch_size(geo: Geometry, world_size: int) -> int:
    if geo.generation_batch_size is not None:
        return geo.generation_batch_size
    steps = geo.steps_per_generation or geo.gradient_accumulation_steps
    return geo.per_device_train_batch_size * world_size * steps


def valid_world_sizes(geo: Geometry, limit: int = MAX_WORLD_SIZE_HINT) -> list[int]:
    return [p for p in range(1, limit + 1) if not problems(geo, p)]


@dataclass(frozen=True)
class RunPlan:
    world_size: int
    per_device_train_batch_size: int
    num_generations: int
    gradient_accumulation_steps: int
    steps_per_generation: int
    num_iterations: int
    generation_batch_size: int
    prompts_per_generation: int
    completions_per_process_per_generation: int
    generate_every_micro_steps: int
    optimizer_steps_per_generation: float
    generations_per_optimizer_step: float
    completions_per_optimizer_step: int
    prompts_per_optimizer_step: float
    old_logprobs_needed: bool
    clipping_active: bool
    steps_per_generation_source: str
    generation_batch_size_source: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def derive_plan(config: Any, world_size: int) -> RunPlan | None:
    """The schedule at `world_size`, or None when TRL would reject the batch geometry there."""
    geo = Geometry.of(config)
    if any(p.kind != "eval_partial_groups" for p in problems(geo, world_size)):
        return None
    b, G, GA, mu = (geo.per_device_train_batch_size, geo.num_generations, geo.gradient_accumulation_steps,
                    geo.num_iterations)
    gbs = _generation_batch_size(geo, world_size)
    s = gbs // (b * world_size)
    every = s * mu
    old_needed = GA % every != 0 or bool(config.use_vllm and config.vllm_importance_sampling_correction)
    # Completions one optimizer step trains on: GA micro-batches of b per process (repeats counted).
    per_step = b * world_size * GA
    return RunPlan(
        world_size=world_size, per_device_train_batch_size=b, num_generations=G, gradient_accumulation_steps=GA,
        steps_per_generation=s, num_iterations=mu, generation_batch_size=gbs, prompts_per_generation=gbs // G,
        completions_per_process_per_generation=b * s, generate_every_micro_steps=every,
        optimizer_steps_per_generation=float(Fraction(every, GA)),
        generations_per_optimizer_step=float(Fraction(GA, every)),
        completions_per_optimizer_step=per_step,
        prompts_per_optimizer_step=float(Fraction(per_step, G * mu)),
        old_logprobs_needed=old_needed, clipping_active=old_needed,
        steps_per_generation_source=("steps_per_generation" if geo.steps_per_generation is not None else
                                     "generation_batch_size" if geo.generation_batch_size is not None else
                                     "gradient_accumulation_steps"),
        generation_batch_size_source=("generation_batch_size" if geo.generation_batch_size is not None else
                                      "derived"),
    )
