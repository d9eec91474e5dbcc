"""One micro-step's loss and one optimizer step: the pieces of the loop that touch the model.

Shared by the training loop (train.py) and evaluation (evaluate.py).
"""

from __future__ import annotations

import math

import torch

from grpo_runtime.outputs.checkpoint import Progress
from grpo_runtime.training.logprobs import completion_logps
from grpo_runtime.training.loss import LossInputs, StepContext, entropy_threshold, grpo_loss
from grpo_runtime.training.parts import Parts


def micro_step_loss(config, parts: Parts, batch: dict, progress: Progress, grad_accum: int, training: bool = True):
    """Forward the micro-batch through the policy and compute its loss (grad_accum = 1 in evaluation)."""
    device = parts.device
    batch = {k: v.to(device) for k, v in batch.items()}
    logps, entropies, router_loss = completion_logps(
        parts.model,
        batch["prompt_ids"],
        batch["prompt_mask"],
        batch["completion_ids"],
        batch["completion_mask"],
        config.temperature,
        autocast=parts.autocast,
        with_router_loss=parts.router_loss_coef != 0.0,
    )
    settings = parts.loss_settings
    threshold = None
    if settings.top_entropy_quantile < 1.0:
        threshold = entropy_threshold(
            entropies,
            batch["completion_mask"],
            1 - settings.top_entropy_quantile,
            lambda t: parts.gather(parts.accelerator.pad_across_processes(t, pad_index=-1e9)),
        )
    adaptive_gate_open = progress.last_world_entropy <= config.entropy_target
    context = StepContext(
        training=training,
        grad_accum=grad_accum,
        entropy_bonus=config.entropy_coef != 0.0 or config.use_adaptive_entropy,
        entropy_coef=progress.entropy_coef if (adaptive_gate_open or not config.use_adaptive_entropy) else 0.0,
        entropy_threshold=threshold,
    )
    inputs = LossInputs(
        logps=logps,
        entropies=entropies,
        mask=batch["completion_mask"],
        advantages=batch["advantages"],
        num_items_in_batch=batch["num_items_in_batch"],
        old_logps=batch.get("old_logps"),
        ref_logps=batch.get("ref_logps"),
        sampling_logps=batch.get("sampling_logps"),
        sampling_ratio=batch.get("sampling_ratio"),
    )
    outputs = grpo_loss(inputs, settings, context)
    if router_loss is not None:  # MoE load balancing, divided for accumulation like the policy loss
        outputs.loss = outputs.loss + parts.router_loss_coef * router_loss / grad_accum
        outputs.router_loss = router_loss.detach()
    return outputs


def data_loader_seed_draw() -> None:
    """The one number TRL's torch DataLoader draws from the global torch RNG each time an iterator over it is
    created (its workers' base seed): at the start of every epoch and every evaluation. Nothing uses it here, but
    the draw moves the RNG that sampling and the buffer shuffle use; without it the same seed would sample other
    tokens than TRL does."""
    torch.empty((), dtype=torch.int64).random_()


def optimizer_step(config, parts: Parts) -> float:
    """Clip (the logged norm is the one before clipping), step, schedule, zero."""
    max_norm = config.max_grad_norm if config.max_grad_norm > 0 else math.inf
    grad_norm = parts.accelerator.clip_grad_norm_(parts.model.parameters(), max_norm)
    parts.optimizer.step()
    parts.scheduler.step()
    parts.optimizer.zero_grad(set_to_none=True)
    return float(grad_norm)


def update_entropy_controller(config, parts: Parts, progress: Progress, window: torch.Tensor, metrics) -> None:
    """Adaptive entropy (Skywork-OR1): move the coefficient toward keeping entropy above the target."""
    if config.use_adaptive_entropy:
        total, count = parts.accelerator.reduce(window.to(parts.device), reduction="sum").tolist()
        entropy = total / max(count, 1.0)
        step = config.entropy_coef_delta if entropy <= config.entropy_target else -config.entropy_coef_delta
        progress.entropy_coef = min(max(progress.entropy_coef + step, config.entropy_coef_min), config.entropy_coef_max)
        progress.last_world_entropy = entropy
    metrics.add({"entropy_coef": progress.entropy_coef})
