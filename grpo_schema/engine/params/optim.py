"""Optimizer and learning-rate schedule (transformers TrainingArguments)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import Float, JsonDict, StrList

SCHEDULERS = (
    "linear",
    "cosine",
    "cosine_with_restarts",
    "polynomial",
    "constant",
    "constant_with_warmup",
    "inverse_sqrt",
    "reduce_lr_on_plateau",
    "cosine_with_min_lr",
    "cosine_warmup_with_min_lr",
    "warmup_stable_decay",
    "greedy",
)

OPTIMIZERS = (
    "adamw_torch",
    "adamw_torch_fused",
    "adamw_torch_xla",
    "adamw_torch_npu_fused",
    "adafactor",
    "adamw_anyprecision",
    "adamw_torch_4bit",
    "adamw_torch_8bit",
    "ademamix",
    "sgd",
    "adagrad",
    "adamw_bnb_8bit",
    "adamw_8bit",
    "ademamix_8bit",
    "lion_8bit",
    "lion_32bit",
    "paged_adamw_32bit",
    "paged_adamw_8bit",
    "paged_ademamix_32bit",
    "paged_ademamix_8bit",
    "paged_lion_32bit",
    "paged_lion_8bit",
    "rmsprop",
    "rmsprop_bnb",
    "rmsprop_bnb_8bit",
    "rmsprop_bnb_32bit",
    "galore_adamw",
    "galore_adamw_8bit",
    "galore_adafactor",
    "galore_adamw_layerwise",
    "galore_adamw_8bit_layerwise",
    "galore_adafactor_layerwise",
    "lomo",
    "adalomo",
    "grokadamw",
    "schedule_free_radam",
    "schedule_free_adamw",
    "schedule_free_sgd",
    "apollo_adamw",
    "apollo_adamw_layerwise",
    "stable_adamw",
)


class OptimParams(AreaParams):
    area = "optim"
    title = "Optimizer and schedule"
    summary = "The optimizer, learning rate, warm-up and schedule, and gradient clipping."
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "lr_scheduler_type": {
            "linear": "Decay linearly to 0 after warm-up.",
            "cosine": "Cosine decay to 0 after warm-up (num_cycles in lr_scheduler_kwargs).",
            "cosine_with_restarts": "Cosine decay with hard restarts (num_cycles).",
            "polynomial": "Polynomial decay to lr_end (power).",
            "constant": "Constant learning rate, no warm-up.",
            "constant_with_warmup": "Warm-up, then constant.",
            "inverse_sqrt": "Decay proportional to 1/sqrt(step) (timescale).",
            "reduce_lr_on_plateau": "Lower the rate when the evaluation metric stops improving; needs evaluation.",
            "cosine_with_min_lr": "Cosine decay to a floor: exactly one of min_lr, min_lr_rate.",
            "cosine_warmup_with_min_lr": "Cosine warm-up and decay to a floor (min_lr or min_lr_rate).",
            "warmup_stable_decay": "Warm-up, a constant phase, then decay (num_stable_steps, num_decay_steps).",
            "greedy": "Adapt the rate to the evaluation metric (greedy LR); needs evaluation.",
        }
    }

    learning_rate: Float = Field(1e-6, gt=0, description="Peak learning rate (GRPO default 1e-6).")
    lr_scheduler_type: Literal[SCHEDULERS] = Field(  # type: ignore[valid-type]
        "linear", description="Learning-rate schedule after warm-up. reduce_lr_on_plateau and greedy need evaluation."
    )
    lr_scheduler_kwargs: JsonDict | None = Field(
        None,
        examples=[{"num_cycles": 0.5}],
        description="Extra arguments of the schedule, e.g. {min_lr_rate: 0.1} for cosine_with_min_lr.",
    )
    warmup_steps: Float = Field(
        0,
        ge=0,
        description="Warm-up length: below 1 a fraction of the total optimizer steps (replaces the removed "
        "warmup_ratio), from 1 an absolute number of optimizer steps.",
    )
    optim: Literal[OPTIMIZERS] = Field(  # type: ignore[valid-type]
        "adamw_torch_fused", description="Optimizer. The bitsandbytes, GaLore and APOLLO ones need extra packages."
    )
    optim_args: str | None = Field(None, description="Extra optimizer arguments as 'key=value,key=value'.")
    weight_decay: Float = Field(0.0, ge=0, description="Decoupled weight decay (AdamW).")
    adam_beta1: Float = Field(0.9, ge=0, lt=1, description="Adam beta1, in [0, 1).")
    adam_beta2: Float = Field(0.999, ge=0, lt=1, description="Adam beta2, in [0, 1).")
    adam_epsilon: Float = Field(1e-8, gt=0, description="Adam epsilon.")
    optim_target_modules: StrList | str | None = Field(
        None, description="Modules GaLore/APOLLO optimizers act on (names or a regex)."
    )
    max_grad_norm: Float = Field(1.0, ge=0, description="Clip the gradient norm to this value; 0 disables clipping.")
    label_smoothing_factor: Float = Field(
        0.0, ge=0, lt=1, description="Label smoothing; GRPO has no labels, so it has no effect."
    )
    neftune_noise_alpha: Float | None = Field(
        None, gt=0, description="NEFTune embedding noise (meant for SFT; no effect on GRPO's loss)."
    )
