"""The batch schedule: every derived quantity of a config at a declared world size, in one pure function.

Batch arithmetic lives only here and in `batch_geometry.py` (the inputs and the checks a release makes); the
formulas `grpo explain` prints are in `plan_formulas.py`. It follows TRL 1.16 (`GRPOConfig.__post_init__`, the RepeatSampler and the
trainer's generation buffer):

    b = per_device_train_batch_size, P = world size, G = num_generations, GA = gradient_accumulation_steps
    s = steps_per_generation, mu = num_iterations
    neither generation_batch_size nor s set:  s = GA,  B_gen = b * P * s
    only generation_batch_size set:           s = B_gen / (b * P)   (must divide)
    only s set:                               B_gen = b * P * s
    B_gen must hold whole groups: B_gen % G == 0.  Prompts per generation U = B_gen / G.
    Generation happens every s * mu micro-steps; an optimizer step every GA micro-steps.
    Old log-probs are computed when GA % (s * mu) != 0, or when vLLM's importance-sampling correction is on;
    the clip (epsilon) can only act when GA % (s * mu) != 0: otherwise the weights never change in between.
    With a dataset of N prompts: N // U generations per epoch (the remainder is skipped), (N // U) * s * mu
    micro-steps per epoch and ceil(that / GA) optimizer steps (transformers counts a shorter last window).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from grpo_schema.engine.batch_geometry import Geometry, generation_batch_size, problems, rows_per_micro_batch
from grpo_schema.engine.batch_geometry import valid_world_sizes as valid_world_sizes  # grpo_runtime imports it here
from grpo_schema.engine.plan_formulas import plan_formulas, plan_inputs


@dataclass(frozen=True)
class RunPlan:
    """Every derived number of a run at one world size. `to_dict()` is the `derived` object of the JSON outputs."""

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
    # What per_device_train_batch_size counts in the judged release ("prompts" in TRL 0.14, whose trainer generates
    # num_generations completions for each), and the completions each process trains on per micro-step.
    per_device_unit: str = "completions"
    completions_per_micro_batch: int = 0
    # The sampler and the buffer (grpo-runtime.md §2.1-2.3).
    prompts_per_process_per_generation: float = 0.0
    sampler_batch_size: int = 0  # rows per process per dataloader batch (b x s)
    sampler_repeat_count: int = 0  # how often the sampler emits each chunk (s x mu)
    sampler_batches_skipped_per_generation: int = 0  # per process: s x mu - 1 copies the trainer ignores
    completions_per_prompt_per_optimizer_step: float = 0.0  # distinct completions of a prompt one step sees
    groups_split_across_processes: bool = False
    groups_split_across_optimizer_steps: bool = False
    # Sequence lengths (tokens).
    max_completion_length: int | None = None
    max_prompt_length: int | None = None
    context_length_needed: int | None = None
    context_length_note: str = ""
    vllm_max_num_seqs: int | None = None
    # With a dataset size (prompts in the training split).
    dataset_size: int | None = None
    generations_per_epoch: int | None = None
    unique_prompts_per_epoch: int | None = None
    prompts_dropped_per_epoch: int | None = None
    micro_steps_per_epoch: int | None = None
    optimizer_steps_per_epoch: int | None = None
    total_optimizer_steps: int | None = None
    epochs: float | None = None
    # name -> {"value", "source"}: where each input came from (file, command line, default, derived).
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    # name -> the formula with its numbers, e.g. "16 x 7 x 4 = 448".
    formulas: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        # Not dataclasses.asdict, which deep-copies every leaf (about 150 us here, a quarter of a whole check_text;
        # 10 us this way). The leaves are scalars and strings: only the two dict fields need copying.
        out = {name: getattr(self, name) for name in _PLAN_FIELDS}
        out["inputs"] = {name: dict(entry) for name, entry in self.inputs.items()}
        out["formulas"] = dict(self.formulas)
        return out


# The field names in order, listed once: dataclasses.fields() filters the class's fields anew at every call.
_PLAN_FIELDS = tuple(f.name for f in fields(RunPlan))


def derive_plan(
    config: Any,
    world_size: int,
    *,
    dataset_size: int | None = None,
    max_prompt_length: int | None = None,
    sources: Mapping[str, str] | None = None,
    meaning: Any = None,
) -> RunPlan | None:
    """The schedule at `world_size`, or None when TRL would reject the batch geometry there.

    `meaning` is the judged release's BatchMeaning (None: TRL 1.16's): where per_device_train_batch_size counts
    prompts (TRL 0.14) the schedule is in completions, per_device_train_batch_size x num_generations per micro-step.

    `dataset_size` (prompts in the training split) adds the per-epoch figures; `max_prompt_length` (the longest
    prompt, in tokens, as the user declares it) gives the context length generation needs; `sources` maps input
    names (and "world_size") to where they came from ("file", "command line"); unnamed inputs are defaults.
    """
    geo = Geometry.of(config, meaning)
    if any(p.kind != "eval_partial_groups" for p in problems(geo, world_size)):
        return None
    core = _schedule(config, geo, world_size)
    core.update(_lengths(config, core["completions_per_micro_batch"], core["steps_per_generation"], max_prompt_length))
    if dataset_size is not None:
        every, GA = core["generate_every_micro_steps"], core["gradient_accumulation_steps"]
        core.update(_epoch_figures(config, dataset_size, core["prompts_per_generation"], every, GA))
    core["inputs"] = plan_inputs(config, core, sources or {})
    core["formulas"] = plan_formulas(core, config)
    return RunPlan(**core)


def _schedule(config: Any, geo: Geometry, P: int) -> dict[str, Any]:
    """The schedule's figures at world size P, in RunPlan's order (the inputs and formulas follow it)."""
    b, G, GA, mu = rows_per_micro_batch(geo), geo.num_generations, geo.gradient_accumulation_steps, geo.num_iterations
    gbs = generation_batch_size(geo, P)
    s = gbs // (b * P)
    every = s * mu
    old_needed = GA % every != 0 or bool(config.use_vllm and config.vllm_importance_sampling_correction)
    # Completions one optimizer step trains on: GA micro-batches of b per process (repeats counted).
    per_step = b * P * GA
    core: dict[str, Any] = dict(
        world_size=P,
        per_device_train_batch_size=geo.per_device_train_batch_size,
        per_device_unit=geo.unit,
        completions_per_micro_batch=b,
        num_generations=G,
        gradient_accumulation_steps=GA,
        steps_per_generation=s,
        num_iterations=mu,
        generation_batch_size=gbs,
        prompts_per_generation=gbs // G,
        completions_per_process_per_generation=b * s,
        generate_every_micro_steps=every,
        optimizer_steps_per_generation=_ratio(every, GA),
        generations_per_optimizer_step=_ratio(GA, every),
        completions_per_optimizer_step=per_step,
        prompts_per_optimizer_step=_ratio(per_step, G * mu),
        old_logprobs_needed=old_needed,
        # The ratio pi/pi_old differs from 1 only when the weights change between generating a batch and
        # training on it; with vLLM's correction old log-probs are computed, but the clip still never acts.
        clipping_active=GA % every != 0,
    )
    core.update(_sources_and_sampler(geo, b, s, G, GA, P, every))
    return core


def _sources_and_sampler(geo: Geometry, b: int, s: int, G: int, GA: int, P: int, every: int) -> dict[str, Any]:
    """Where the generation schedule came from, the sampler's batches, and how groups split over processes and
    optimizer steps."""
    return dict(
        steps_per_generation_source=(
            "steps_per_generation"
            if geo.steps_per_generation is not None
            else "generation_batch_size"
            if geo.generation_batch_size is not None
            else "gradient_accumulation_steps"
        ),
        generation_batch_size_source=("generation_batch_size" if geo.generation_batch_size is not None else "derived"),
        prompts_per_process_per_generation=_ratio(b * s, G),
        sampler_batch_size=b * s,
        sampler_repeat_count=every,
        sampler_batches_skipped_per_generation=every - 1,
        # A step covers min(GA, s) of the s buffer slices of a generation: that share of each group, on average.
        completions_per_prompt_per_optimizer_step=_ratio(G * min(GA, s), s),
        groups_split_across_processes=P > 1 and (b * s) % G != 0,
        groups_split_across_optimizer_steps=GA % s != 0,
    )


def _ratio(numerator: int, denominator: int) -> float:
    # The same float as float(Fraction(numerator, denominator)), which this replaced at a fifth of the cost: true
    # division of two ints is correctly rounded, whatever their common factors.
    return numerator / denominator


def _lengths(config: Any, b: int, s: int, max_prompt_length: int | None) -> dict[str, Any]:
    completion = config.max_completion_length
    if completion is None:
        needed, note = None, "max_completion_length is null: generation runs until EOS or the model's limit"
    elif max_prompt_length is None:
        needed = None
        note = (
            f"the longest prompt plus max_completion_length ({completion}); the prompt length is unknown "
            "(the release judged does not truncate prompts): pass --max-prompt-length to get a number"
        )
    else:
        needed = max_prompt_length + completion
        note = f"max prompt length ({max_prompt_length}) + max_completion_length ({completion}) = {needed}"
    colocate = config.use_vllm and config.vllm_mode == "colocate"
    seqs = b * config.vllm_tensor_parallel_size * s if colocate else None
    return dict(
        max_completion_length=completion,
        max_prompt_length=max_prompt_length,
        context_length_needed=needed,
        context_length_note=note,
        vllm_max_num_seqs=seqs,
    )


def _epoch_figures(config: Any, n: int, U: int, every: int, GA: int) -> dict[str, Any]:
    """Per-epoch counts as the RepeatSampler and transformers' loop produce them (a shorter last window counts)."""
    generations = n // U
    micro = generations * every
    per_epoch = max(-(-micro // GA), 1)
    if config.max_steps > 0:
        total = config.max_steps
    else:
        total = math.ceil(config.num_train_epochs * per_epoch)
    return dict(
        dataset_size=n,
        generations_per_epoch=generations,
        unique_prompts_per_epoch=generations * U,
        prompts_dropped_per_epoch=n - generations * U,
        micro_steps_per_epoch=micro,
        optimizer_steps_per_epoch=per_epoch,
        total_optimizer_steps=total,
        epochs=_ratio(total, per_epoch) if micro else None,
    )
