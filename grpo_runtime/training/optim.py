"""Optimizer and learning-rate schedule from the TrainingArguments fields, as the HF trainer builds them.

Supported `optim` values: adamw_torch, adamw_torch_fused, sgd, adagrad, rmsprop, adafactor, and bitsandbytes'
optimizers (adamw_8bit, paged_adamw_8bit, lion_8bit, rmsprop_bnb, ademamix, ...: optimizers.BNB_OPTIMIZERS), built as
the HF trainer builds them. `optim_args` ("key=value,key=value") is read for sgd, adagrad and the RMSprop and
AdEMAMix variants, as the HF trainer does. Weight decay applies to every trainable parameter except biases and
normalisation weights. Any other optimizer (GaLore, schedule-free, ...) is refused before training starts.
"""

from __future__ import annotations

import math
import re

import torch

from grpo_runtime.common import CannotRun
from grpo_runtime.training.optimizers import BNB_OPTIMIZERS, EVAL_METRIC_SCHEDULES, OPTIM_ARGS_READ, OPTIMIZERS

NO_DECAY = [r"bias", r"layernorm", r"rmsnorm", r"(?:^|\.)norm(?:$|\.)", r"_norm(?:$|\.)"]
OPTIM_ARGS = {  # optimizer -> optim_args keys it reads, and how to parse each
    "sgd": {"momentum": float, "dampening": float, "weight_decay": float, "nesterov": "bool"},
    "adagrad": {"lr_decay": float, "weight_decay": float, "eps": float},
    "rmsprop": {"momentum": float, "alpha": float, "eps": float, "weight_decay": float, "centered": "bool"},
    "ademamix": {
        "beta1": float,
        "beta2": float,
        "beta3": float,
        "alpha": float,
        "eps": float,
        "t_alpha": int,
        "t_beta3": int,
    },
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
        name
        for name, _ in model.named_parameters()
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
        kind = OPTIM_ARGS[_family(optim)].get(key)
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
        raise CannotRun(f"optim {config.optim!r} is not supported by grpo_runtime; use one of {sorted(OPTIMIZERS)}")
    if config.optim in BNB_OPTIMIZERS:
        return bitsandbytes_optimizer(config, adam)
    cls, kwargs = choices[config.optim]
    return cls, dict(kwargs, **parse_optim_args(config.optim, config.optim_args))


def _family(optim: str) -> str:
    return "rmsprop" if optim.startswith("rmsprop") else "ademamix" if "ademamix" in optim else optim


def bitsandbytes_optimizer(config, adam: dict):
    """The HF trainer's mapping: AdamW / Lion / RMSprop / AdEMAMix from the name; 8-bit states when it says 8bit,
    paged when it says paged (not for RMSprop); Lion takes the Adam betas only, RMSprop its optim_args."""
    import bitsandbytes.optim as bnb

    name, args = config.optim, parse_optim_args(config.optim, config.optim_args)
    bits = {"optim_bits": 8 if "8bit" in name else 32}
    if "ademamix" in name:
        betas = (args.get("beta1", config.adam_beta1), args.get("beta2", config.adam_beta2), args.get("beta3", 0.9999))
        kwargs = dict(
            betas=betas,
            alpha=args.get("alpha", 5.0),
            eps=args.get("eps", config.adam_epsilon),
            **{k: args[k] for k in ("t_alpha", "t_beta3") if k in args},
        )
        return bnb.AdEMAMix, dict(kwargs, is_paged="paged" in name, **bits)
    if "lion" in name:
        return bnb.Lion, dict(betas=(config.adam_beta1, config.adam_beta2), is_paged="paged" in name, **bits)
    if name.startswith("rmsprop"):
        return bnb.RMSprop, dict(args, **bits)
    return bnb.AdamW, dict(adam, is_paged="paged" in name, **bits)


def keep_embeddings_in_32_bit(model, optimizer) -> None:
    """8-bit optimizer states are too coarse for embedding rows (most get no gradient in a step); the HF trainer
    keeps them in 32-bit states, and so does this."""
    import bitsandbytes

    manager = bitsandbytes.optim.GlobalOptimManager.get_instance()
    for module in model.modules():
        if isinstance(module, torch.nn.Embedding):
            manager.register_module_override(module, "weight", {"optim_bits": 32})


def build_optimizer(model, config):
    decayed = decayed_parameter_names(model)
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [
        {"params": [p for n, p in trainable if n in decayed], "weight_decay": config.weight_decay},
        {"params": [p for n, p in trainable if n not in decayed], "weight_decay": 0.0},
    ]
    cls, kwargs = optimizer_class(config)
    optimizer = cls(groups, lr=config.learning_rate, **kwargs)
    if kwargs.get("optim_bits") == 8:
        keep_embeddings_in_32_bit(model, optimizer)
    return optimizer


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
        config.lr_scheduler_type,
        optimizer=optimizer,
        num_warmup_steps=warmup_steps(config.warmup_steps, total_steps),
        num_training_steps=total_steps,
        scheduler_specific_kwargs=config.lr_scheduler_kwargs or {},
    )
