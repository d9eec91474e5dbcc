"""Optimizer and learning-rate schedule from the TrainingArguments fields, as the HF trainer builds them.

Supported `optim` values: adamw_torch, adamw_torch_fused, sgd, adagrad, rmsprop, adafactor. `optim_args`
("key=value,key=value") is read for sgd, adagrad and rmsprop, as the HF trainer does. Weight decay applies to
every trainable parameter except biases and normalisation weights. Any other optimizer (8-bit, paged, GaLore,
schedule-free, ...) is refused before training starts.
"""

from __future__ import annotations

import math
import re

import torch

from .fields import EVAL_METRIC_SCHEDULES, OPTIM_ARGS_READ, OPTIMIZERS
from .support import CannotRun

NO_DECAY = [r"bias", r"layernorm", r"rmsnorm", r"(?:^|\.)norm(?:$|\.)", r"_norm(?:$|\.)"]
OPTIM_ARGS = {  # optimizer -> optim_args keys it reads, and how to parse each
    "sgd": {"momentum": float, "dampening": float, "weight_decay": float, "nesterov": "bool"},
    "adagrad": {"lr_decay": float, "weight_decay": float, "eps": float},
    "rmsprop": {"momentum": float, "alpha": float, "eps": float, "weight_decay": float, "centered": "bool"},
}


def decayed_parameter_names(model) -> set[str]:
    """Names of parameters that get weight decay: not in a LayerNorm, name matching none of NO_DECAY."""
    patterns = [re.compile(p) for p in NO_DECAY]
    layer_norm_params = {
        f"{module_name}.{name}" if module_name else name
        for module_name, module in model.named_modules()
        if isinstance(module, torch.nn.LayerNorm)
        for name, _ in module.named_parameters(recurse=False)
    }
    return {
        name for name, _ in model.named_parameters()
        if name not in layer_norm_params and not any(p.search(name.lower()) for p in patterns)
    }


def parse_optim_args(optim: str, text: str | None) -> dict:
    if not text:
        return {}
    if optim not in OPTIM_ARGS_READ:
        raise CannotRun(f"optim_args are not read for optim {optim!r} by grpo_runtime; remove optim_args")
    parsed = {}
    for item in text.replace(" ", "").split(","):
        key, _, value = item.partition("=")
        kind = OPTIM_ARGS[optim].get(key)
        if kind is not None:
            parsed[key] = value.lower() in ("true", "1", "yes") if kind == "bool" else kind(value)
    return parsed


def optimizer_class(config):
    from transformers.optimization import Adafactor

    adam = dict(betas=(config.adam_beta1, config.adam_beta2), eps=config.adam_epsilon)
    choices = {
        "adamw_torch": (torch.optim.AdamW, adam),
        "adamw_torch_fused": (torch.optim.AdamW, dict(adam, fused=True)),
        "adafactor": (Adafactor, dict(scale_parameter=False, relative_step=False)),
        "sgd": (torch.optim.SGD, {}),
        "adagrad": (torch.optim.Adagrad, {}),
        "rmsprop": (torch.optim.RMSprop, {}),
    }
    if config.optim not in OPTIMIZERS:
        raise CannotRun(
            f"optim {config.optim!r} is not supported by grpo_runtime; use one of {sorted(choices)}"
        )
    cls, kwargs = choices[config.optim]
    return cls, dict(kwargs, **parse_optim_args(config.optim, config.optim_args))


def build_optimizer(model, config):
    decayed = decayed_parameter_names(model)
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [
        {"params": [p for n, p in trainable if n in decayed], "weight_decay": config.weight_decay},
        {"params": [p for n, p in trainable if n not in decayed], "weight_decay": 0.0},
    ]
    cls, kwargs = optimizer_class(config)
    return cls(groups, lr=config.learning_rate, **kwargs)


def warmup_steps(value: float, total_steps: int) -> int:
    """`warmup_steps` >= 1 is a step count; below 1 it is a fraction of the training steps (rounded up)."""
    return int(value) if value >= 1 else math.ceil(total_steps * value)


def build_scheduler(optimizer, config, total_steps: int):
    from transformers import get_scheduler

    if config.lr_scheduler_type in EVAL_METRIC_SCHEDULES:
        raise CannotRun(
            f"lr_scheduler_type {config.lr_scheduler_type!r} needs evaluation metrics, which grpo_runtime does not "
            f"compute; use linear, cosine, constant or another step-based schedule"
        )
    return get_scheduler(
        config.lr_scheduler_type, optimizer=optimizer,
        num_warmup_steps=warmup_steps(config.warmup_steps, total_steps), num_training_steps=total_steps,
        scheduler_specific_kwargs=config.lr_scheduler_kwargs or {},
    )
