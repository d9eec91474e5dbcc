"""Batch geometry: whole groups per generation batch, at the declared world size."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.engine.batch_geometry import Geometry, checked_product, eval_enabled, problems, valid_world_sizes
from grpo_schema.engine.plan import RunPlan
from grpo_schema.engine.rules import Finding, RuleContext, explicitly_set, has_or_have, rule

_GEOMETRY = (
    "per_device_train_batch_size",
    "num_generations",
    "gradient_accumulation_steps",
    "generation_batch_size",
    "steps_per_generation",
    "num_iterations",
)
_EVAL = ("eval_strategy", "per_device_eval_batch_size", "num_generations_eval")
# The code each of batch_geometry.problems()'s failed checks is reported under (the rules below), so that a view of the
# relations (grpo explain, the form's schedule) names the diagnostic that carries the fix.
PROBLEM_CODES = {
    "partial_groups": "GRPO-B001",
    "both_set": "GRPO-B002",
    "not_per_device_multiple": "GRPO-B003",
    "eval_partial_groups": "GRPO-B004",
}


def _world_sizes_hint(config: Any, ctx: RuleContext) -> str:
    sizes = valid_world_sizes(Geometry.of(config, ctx.batch))
    if not sizes:
        return "no world size up to 64 makes this valid"
    shown = ", ".join(map(str, sizes[:12])) + (", ..." if len(sizes) > 12 else "")
    return f"valid for world sizes {shown}"


def _generation_formula(config: Any, ctx: RuleContext) -> str:
    world_size = ctx.world_size
    geo = Geometry.of(config, ctx.batch)
    if geo.checked and "generation_batch_size" not in geo.checked:  # TRL 0.15-0.17: the trainer's own product
        values = {
            "per_device_train_batch_size": config.per_device_train_batch_size,
            "world_size": world_size,
            "gradient_accumulation_steps": config.gradient_accumulation_steps,
        }
        factors = " x ".join(f"{n.replace('_', ' ') if n == 'world_size' else n} ({values[n]})" for n in geo.checked)
        return (
            f"the batch {factors} = {checked_product(geo, world_size)}, which TRL {ctx.trl_release}'s trainer "
            "checks when the run starts,"
        )
    if config.generation_batch_size is not None:
        return f"generation_batch_size ({config.generation_batch_size})"
    steps_name = "steps_per_generation" if config.steps_per_generation is not None else "gradient_accumulation_steps"
    steps = config.steps_per_generation or config.gradient_accumulation_steps
    total = config.per_device_train_batch_size * world_size * steps
    return (
        f"the generation batch, per_device_train_batch_size ({config.per_device_train_batch_size}) x world size "
        f"({world_size}) x {steps_name} ({steps}) = {total},"
    )


def _find(config: Any, ctx: RuleContext, kind: str) -> bool:
    return any(p.kind == kind for p in problems(Geometry.of(config, ctx.batch), ctx.world_size))


@rule("GRPO-B001", "error", _GEOMETRY + _EVAL)
def generation_batch_holds_whole_groups(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """The generation batch must be a multiple of num_generations.

    Every prompt needs all num_generations completions in the same generation batch, because advantages compare
    completions within a group. The generation batch is counted over all processes, so whether this holds depends
    on the world size: a recipe written for 8 GPUs can fail on 7.
    """
    if _find(config, ctx, "partial_groups"):
        yield Finding(
            f"{_generation_formula(config, ctx)} is not a multiple of num_generations ({config.num_generations})",
            ("generation_batch_size", "num_generations", "per_device_train_batch_size"),
            hint=_world_sizes_hint(config, ctx),
        )


@rule("GRPO-B002", "error", ("generation_batch_size", "steps_per_generation"))
def generation_batch_or_steps_not_both(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """Set generation_batch_size or steps_per_generation, not both.

    Each one determines the other (generation_batch_size = per_device_train_batch_size x world size x
    steps_per_generation), so TRL refuses a config that sets both.
    """
    if config.generation_batch_size is not None and config.steps_per_generation is not None:
        yield Finding(
            f"generation_batch_size ({config.generation_batch_size}) and steps_per_generation "
            f"({config.steps_per_generation}) are mutually exclusive",
            ("generation_batch_size", "steps_per_generation"),
            hint="keep one; the other is derived from it",
        )


@rule("GRPO-B003", "error", _GEOMETRY + _EVAL)
def generation_batch_is_whole_micro_batches(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """generation_batch_size must be a multiple of per_device_train_batch_size x world size.

    A generation batch is served as whole micro-batches of per_device_train_batch_size completions on every
    process; steps_per_generation = generation_batch_size / (per_device_train_batch_size x world size).
    """
    # Only a generation_batch_size that is set can miss (batch_geometry.problems): most configs skip the geometry here.
    if config.generation_batch_size is not None and _find(config, ctx, "not_per_device_multiple"):
        global_micro = config.per_device_train_batch_size * ctx.world_size
        yield Finding(
            f"generation_batch_size ({config.generation_batch_size}) is not a multiple of "
            f"per_device_train_batch_size x world size ({config.per_device_train_batch_size} x "
            f"{ctx.world_size} = {global_micro})",
            ("generation_batch_size", "per_device_train_batch_size"),
            hint=_world_sizes_hint(config, ctx),
        )


@rule("GRPO-B004", "error", _GEOMETRY + _EVAL)
def eval_batch_holds_whole_groups(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """With evaluation on, per_device_eval_batch_size x world size must be a multiple of num_generations_eval.

    Evaluation samples num_generations_eval completions per prompt (num_generations when unset or 0) and scores
    whole groups per evaluation batch.
    """
    if eval_enabled(config) and _find(config, ctx, "eval_partial_groups"):
        g_eval = config.num_generations_eval or config.num_generations
        name = "num_generations_eval" if config.num_generations_eval else "num_generations"
        yield Finding(
            f"global eval batch = per_device_eval_batch_size ({config.per_device_eval_batch_size}) x world "
            f"size ({ctx.world_size}) = {config.per_device_eval_batch_size * ctx.world_size}, which is "
            f"not a multiple of {name} ({g_eval})",
            ("per_device_eval_batch_size", name, "eval_strategy"),
            hint=_world_sizes_hint(config, ctx),
        )


@rule("GRPO-B005", "error", ("auto_find_batch_size",))
def no_auto_find_batch_size(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """auto_find_batch_size is not supported by GRPO.

    Shrinking the batch on out-of-memory errors would break the group geometry; TRL refuses it.
    """
    if config.auto_find_batch_size:
        yield Finding(
            "auto_find_batch_size must be false for GRPO",
            ("auto_find_batch_size",),
            hint="lower per_device_train_batch_size yourself and raise gradient_accumulation_steps",
        )


@rule("GRPO-B006", "warning", _GEOMETRY + ("epsilon", "epsilon_high", "delta", "use_vllm"), needs_plan=True)
def clipping_has_effect(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """epsilon, epsilon_high and delta do nothing when training stays on-policy.

    When gradient_accumulation_steps is a multiple of steps_per_generation x num_iterations, every generation
    batch is used up before the weights change: the ratio is exactly 1 and nothing is clipped. TRL then skips the
    old log-probs, unless vLLM's importance-sampling correction needs them (they still equal the current ones).
    Raise num_iterations (or steps_per_generation above gradient_accumulation_steps) for the clipping to act.
    """
    plan: RunPlan = ctx.plan  # type: ignore[assignment]
    set_here = [n for n in ("epsilon", "epsilon_high", "delta") if n in ctx.explicit]
    if not plan.clipping_active and set_here and config.loss_type not in ("cispo", "sapo", "vespo"):
        yield Finding(
            f"{', '.join(set_here)} {has_or_have(set_here)} no effect: gradient_accumulation_steps ({plan.gradient_accumulation_steps}) "
            f"is a multiple of steps_per_generation x num_iterations ({plan.steps_per_generation} x "
            f"{plan.num_iterations}), so every update is on-policy and the ratio is always 1",
            tuple(set_here),
            hint="set num_iterations: 2 (or more) to reuse each generation batch",
        )


@rule("GRPO-B007", "info", ("max_steps", "num_train_epochs"))
def epochs_ignored_with_max_steps(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """num_train_epochs is ignored when max_steps is set.

    max_steps > 0 fixes the number of optimizer steps; the epoch count then has no effect.
    """
    if config.max_steps > 0 and explicitly_set(ctx, "num_train_epochs"):
        yield Finding(
            f"num_train_epochs ({config.num_train_epochs:g}) is ignored because max_steps is {config.max_steps}",
            ("num_train_epochs", "max_steps"),
            hint="remove one of the two",
        )


@rule("GRPO-B008", "error", ("max_steps", "num_train_epochs"))
def epochs_positive_without_max_steps(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """num_train_epochs must be > 0 when max_steps does not set the length of the run.

    With max_steps > 0 transformers ignores num_train_epochs (recipes write -1 or 0 there); without it the epochs
    decide the number of steps, and 0 or less trains nothing.
    """
    if config.max_steps <= 0 and config.num_train_epochs <= 0:
        yield Finding(
            f"num_train_epochs is {config.num_train_epochs:g} and max_steps is {config.max_steps}: the run "
            "has no length",
            ("num_train_epochs", "max_steps"),
            hint="set num_train_epochs > 0, or max_steps to the number of optimizer steps",
        )
