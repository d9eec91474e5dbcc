"""How `grpo explain` accounts for a schedule: where each input came from, and each derived number's formula with
the config's numbers in it (e.g. "16 x 7 x 4 = 448")."""

from __future__ import annotations

import functools
import operator
from typing import Any, Mapping

_INPUTS = (
    "per_device_train_batch_size",
    "num_generations",
    "gradient_accumulation_steps",
    "num_iterations",
    "steps_per_generation",
    "generation_batch_size",
    "max_completion_length",
    "max_steps",
    "num_train_epochs",
    "seed",
    "shuffle_dataset",
)


def plan_inputs(config: Any, plan: dict[str, Any], sources: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    out = {"world_size": {"value": plan["world_size"], "source": sources.get("world_size", "default")}}
    for name in _INPUTS:
        out[name] = {"value": getattr(config, name), "source": sources.get(name, "default")}
    for name in ("steps_per_generation", "generation_batch_size"):
        if getattr(config, name) is None:  # TRL fills in the one that is not set
            out[name] = {"value": plan[name], "source": "derived"}
    for name in ("max_prompt_length", "dataset_size"):  # not config fields: the caller declares them
        if plan.get(name) is not None:
            out[name] = {"value": plan[name], "source": sources.get(name, "command line")}
    return out


_FORMULA_INPUTS = operator.itemgetter(
    "completions_per_micro_batch",
    "world_size",
    "steps_per_generation",
    "num_generations",
    "gradient_accumulation_steps",
    "num_iterations",
    "generation_batch_size",
    "generate_every_micro_steps",
)


def plan_formulas(plan: dict[str, Any], config: Any) -> dict[str, str]:
    out = dict(
        _batch_formulas(
            *_FORMULA_INPUTS(plan),
            config.generation_batch_size is not None,
            config.steps_per_generation is not None,
            bool(config.use_vllm),
        )
    )
    if plan["per_device_unit"] == "prompts":
        out.update(_prompt_formulas(plan))
    if plan.get("micro_steps_per_epoch") is not None:
        gbs, G, GA = (plan[k] for k in ("generation_batch_size", "num_generations", "gradient_accumulation_steps"))
        out["micro_steps_per_epoch"] = (
            f"(dataset_size // prompts_per_generation) x steps_per_generation x "
            f"num_iterations = ({plan['dataset_size']} // {gbs // G}) x "
            f"{plan['steps_per_generation']} x {plan['num_iterations']} = "
            f"{plan['micro_steps_per_epoch']}"
        )
        out["optimizer_steps_per_epoch"] = (
            f"ceil(micro_steps_per_epoch / gradient_accumulation_steps) = "
            f"ceil({plan['micro_steps_per_epoch']} / {GA}) = "
            f"{plan['optimizer_steps_per_epoch']}"
        )
    return out


def _prompt_formulas(plan: dict[str, Any]) -> dict[str, str]:
    """TRL 0.14's batch: per_device_train_batch_size prompts per process, num_generations completions each, one
    generation per micro-step (no sampler repeats, no steps_per_generation)."""
    b, G, P, rows = (
        plan[k] for k in ("per_device_train_batch_size", "num_generations", "world_size", "completions_per_micro_batch")
    )
    return {
        "steps_per_generation": "1: the release generates on every micro-step (it has no steps_per_generation)",
        "generation_batch_size": f"per_device_train_batch_size (prompts) x num_generations x world_size = {b} x {G} "
        f"x {P} = {rows * P}",
        "prompts_per_generation": f"per_device_train_batch_size x world_size = {b} x {P} = {b * P} prompts",
        "completions_per_process_per_generation": f"per_device_train_batch_size (prompts) x num_generations = {b} x "
        f"{G} = {rows}",
        "completions_per_optimizer_step": f"per_device_train_batch_size x num_generations x world_size x "
        f"gradient_accumulation_steps = {b} x {G} x {P} x "
        f"{plan['gradient_accumulation_steps']} = {plan['completions_per_optimizer_step']}",
    }


# The texts depend on these numbers and flags alone, and most checks of a service or an editor repeat the same
# few geometries: formatted once per geometry (~3 us each time otherwise). typed=True keeps 2 and 2.0 apart.
@functools.lru_cache(maxsize=1024, typed=True)
def _batch_formulas(
    b: int, P: int, s: int, G: int, GA: int, mu: int, gbs: int, every: int, gbs_set: bool, steps_set: bool, vllm: bool
) -> tuple[tuple[str, str], ...]:
    if gbs_set:
        steps = f"generation_batch_size / (per_device_train_batch_size x world_size) = {gbs} / ({b} x {P}) = {s}"
        batch = f"set in the file: {gbs}"
    else:
        source = "steps_per_generation" if steps_set else "gradient_accumulation_steps"
        default = source == "gradient_accumulation_steps"
        steps = f"{source} = {s}" + (" (the default: one generation per optimizer step)" if default else "")
        batch = f"per_device_train_batch_size x world_size x steps_per_generation = {b} x {P} x {s} = {gbs}"
    return (
        ("steps_per_generation", steps),
        ("generation_batch_size", batch),
        ("prompts_per_generation", f"generation_batch_size / num_generations = {gbs} / {G} = {gbs // G}"),
        (
            "completions_per_process_per_generation",
            f"per_device_train_batch_size x steps_per_generation = {b} x {s}"
            f" = {b * s}, cut into {s} slice{'s' if s != 1 else ''} of "
            f"{b}: one per micro-step"
            f"{f' of each of the {mu} passes' if mu > 1 else ''}",
        ),
        ("generate_every_micro_steps", f"steps_per_generation x num_iterations = {s} x {mu} = {every}"),
        (
            "completions_per_optimizer_step",
            f"per_device_train_batch_size x world_size x gradient_accumulation_steps = {b} x {P} x {GA} = {b * P * GA}",
        ),
        (
            "optimizer_steps_per_generation",
            f"steps_per_generation x num_iterations / gradient_accumulation_steps = {s} x {mu} / {GA}",
        ),
        (
            "old_logprobs_needed",
            f"gradient_accumulation_steps % (steps_per_generation x num_iterations) = {GA} % "
            f"{every} = {GA % every}" + (", or vLLM importance-sampling correction on" if vllm else ""),
        ),
    )
