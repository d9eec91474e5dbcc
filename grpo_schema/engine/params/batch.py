"""Batch geometry and run length: how many completions each step sees, and how long training lasts."""

from __future__ import annotations

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import Float, Int


class BatchParams(AreaParams):
    area = "batch"
    title = "Batch and schedule"
    summary = (
        "Counted in completions, not prompts. Generation batch = per_device_train_batch_size x world size x "
        "steps_per_generation; it must hold whole groups of num_generations completions."
    )

    per_device_train_batch_size: Int = Field(
        8,
        ge=1,
        description="Completions (not prompts) each process trains on per micro-step. Prompts per process per "
        "micro-step = this / num_generations. Global micro-batch = this x world size.",
    )
    gradient_accumulation_steps: Int = Field(
        1,
        ge=1,
        description="Micro-steps whose gradients are summed before one optimizer step. Also the default of "
        "steps_per_generation.",
    )
    num_generations: Int = Field(
        8,
        ge=2,
        description="Completions sampled per prompt: the GRPO group size G. Advantages compare completions "
        "within a group, so at least 2. The generation batch must be a multiple of it.",
    )
    generation_batch_size: Int | None = Field(
        None,
        examples=[64],
        ge=1,
        description="Completions generated at once, counted over all processes. Unset: per_device_train_batch_size "
        "x world size x steps_per_generation. Must be a multiple of per_device_train_batch_size x "
        "world size and of num_generations. Set this or steps_per_generation, not both.",
    )
    steps_per_generation: Int | None = Field(
        None,
        examples=[4],
        ge=1,
        description="Micro-steps served from one generation batch. Unset: gradient_accumulation_steps (or derived "
        "from generation_batch_size). Set this or generation_batch_size, not both.",
    )
    num_iterations: Int = Field(
        1,
        ge=1,
        description="Times each generation batch is trained on (mu in the GRPO paper). Above 1 the later passes "
        "are off-policy, which is when the clipping by epsilon does something.",
    )
    max_steps: Int = Field(
        -1,
        ge=-1,
        description="Total optimizer steps. -1 trains for num_train_epochs instead. Required (> 0) with "
        "streaming datasets, which have no length.",
    )
    num_train_epochs: Float = Field(
        3.0,
        description="Passes over the prompt dataset (> 0); ignored when max_steps > 0. One epoch gives every prompt "
        "num_generations completions once, then repeats them num_iterations times.",
    )
    auto_find_batch_size: bool = Field(
        False,
        description="Shrink the batch on out-of-memory errors. Not supported by GRPO: the batch geometry is "
        "fixed by num_generations; must stay false.",
    )
