"""The GRPO loss of TRL 1.16, every `loss_type`, as pure functions of tensors.

Shapes: B completions in the micro-batch, T completion positions. `mask` is the loss mask
(completion_mask x tool_mask). A token-level ratio is [B, T]; a sequence-level one (GSPO) is [B, 1] and broadcasts.

The loss is built in a fixed order (grpo-runtime.md §7): ratio -> per-token objective (table OBJECTIVES) ->
off-policy mask -> high-entropy mask -> vLLM importance ratio -> + beta * KL -> aggregation (table AGGREGATIONS)
-> entropy bonus. Every number returned was checked against TRL's `_compute_loss` on the same tensors
(tests/runtime/test_loss_oracle.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch


@dataclass(frozen=True)
class LossSettings:
    """The config values the loss reads; built once from the validated config (`from_config`)."""

    loss_type: str
    beta: float
    epsilon_low: float
    epsilon_high: float
    delta: float | None
    importance_sampling_level: str  # "token" | "sequence"
    use_bias_correction_kl: bool
    top_entropy_quantile: float
    off_policy_mask_threshold: float | None
    sapo_temperature_pos: float
    sapo_temperature_neg: float
    vespo_k_pos: float
    vespo_lambda_pos: float
    vespo_k_neg: float
    vespo_lambda_neg: float
    max_completion_length: int
    steps_per_generation: int
    num_processes: int
    apply_sampling_ratio: bool  # vLLM importance-sampling correction multiplies the policy term

    @classmethod
    def from_config(cls, config, plan) -> "LossSettings":
        return cls(
            loss_type=config.loss_type,
            beta=config.beta,
            epsilon_low=config.epsilon,
            epsilon_high=config.epsilon_high if config.epsilon_high is not None else config.epsilon,
            delta=config.delta,
            importance_sampling_level=config.importance_sampling_level,
            use_bias_correction_kl=config.use_bias_correction_kl,
            top_entropy_quantile=config.top_entropy_quantile,
            off_policy_mask_threshold=config.off_policy_mask_threshold,
            sapo_temperature_pos=config.sapo_temperature_pos,
            sapo_temperature_neg=config.sapo_temperature_neg,
            vespo_k_pos=config.vespo_k_pos,
            vespo_lambda_pos=config.vespo_lambda_pos,
            vespo_k_neg=config.vespo_k_neg,
            vespo_lambda_neg=config.vespo_lambda_neg,
            max_completion_length=config.max_completion_length,
            steps_per_generation=plan.steps_per_generation,
            num_processes=plan.world_size,
            apply_sampling_ratio=config.use_vllm and config.vllm_importance_sampling_correction,
        )


@dataclass
class LossInputs:
    logps: torch.Tensor  # [B, T] current policy log-probs (temperature-scaled), with grad
    entropies: torch.Tensor  # [B, T] entropy of the temperature-scaled distribution
    mask: torch.Tensor  # [B, T] loss mask
    advantages: torch.Tensor  # [B]
    num_items_in_batch: torch.Tensor  # [] active tokens of the whole generation batch, all processes
    old_logps: torch.Tensor | None = None  # [B, T]; None means "on-policy": sg(logps)
    ref_logps: torch.Tensor | None = None  # [B, T]; needed when beta != 0
    sampling_logps: torch.Tensor | None = None  # [B, T] log-probs reported by the sampler (vLLM), NaN = unknown
    sampling_ratio: torch.Tensor | None = None  # [B, T] or [B, 1] vLLM importance-sampling ratio


@dataclass(frozen=True)
class StepContext:
    """What changes from one micro-step to the next."""

    training: bool  # train mode divides by the accumulation steps; eval mode does not
    grad_accum: int  # current_gradient_accumulation_steps (smaller in an epoch's last window)
    entropy_bonus: bool = False  # entropy_coef != 0 or adaptive entropy
    entropy_coef: float = 0.0  # coefficient applied this window (0 while the adaptive gate is closed)
    entropy_threshold: float | None = None  # quantile of the gathered entropies, when top_entropy_quantile < 1


@dataclass
class LossOutputs:
    loss: torch.Tensor  # [] what to backpropagate (already divided for gradient accumulation)
    policy_loss: torch.Tensor  # [] detached, before the entropy bonus
    sums: dict[str, torch.Tensor] = field(default_factory=dict)  # metric -> [sum, count] to reduce over processes
    per_sequence: dict[str, torch.Tensor] = field(default_factory=dict)  # metric -> [B] for gathered min / max
    entropy_window: torch.Tensor | None = None  # [sum m'H, sum m'] for the adaptive entropy controller
    router_loss: torch.Tensor | None = None  # [] MoE load-balancing loss, added by the caller when enabled


@dataclass(frozen=True)
class Ratios:
    """Everything a per-token objective may need."""

    log_ratio: torch.Tensor  # [B, T] logps - old_logps
    weight: torch.Tensor  # [B, T] or [B, 1] importance weight w (with grad)
    advantages: torch.Tensor  # [B, 1]
    logps: torch.Tensor  # [B, T]
    mask: torch.Tensor  # [B, T]
    sampling_ratio: torch.Tensor | None  # vLLM ratio, if any


# ---------------------------------------------------------------------------------------------------------------
# Ratios, KL, masks
# ---------------------------------------------------------------------------------------------------------------
def importance_weight(log_ratio: torch.Tensor, mask: torch.Tensor, level: str) -> torch.Tensor:
    """Token level: exp(delta) [B, T]. Sequence level (GSPO): exp(masked mean of delta) [B, 1]."""
    if level == "token":
        return torch.exp(log_ratio)
    if level == "sequence":
        mean = (log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)  # [B]
        return torch.exp(mean.unsqueeze(-1))  # [B, 1]
    raise ValueError(f"unknown importance_sampling_level {level!r}; expected 'token' or 'sequence'")


def k3_kl(ref_logps: torch.Tensor, logps: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimator of KL(pi || ref) per token: exp(r - l) - (r - l) - 1.  [B, T]"""
    diff = ref_logps - logps
    return torch.exp(diff) - diff - 1


def off_policy_mask(
    advantages: torch.Tensor, logps: torch.Tensor, sampling_logps: torch.Tensor, mask: torch.Tensor, threshold: float
) -> torch.Tensor:
    """DeepSeek-V3.2 sequence mask: drop negative-advantage sequences whose mean KL to the sampler exceeds
    `threshold`. NaN sampler log-probs count as no difference.  advantages [B, 1] -> [B, 1]"""
    divergence = torch.nan_to_num(sampling_logps - logps.detach(), nan=0.0)  # [B, T]
    mean_divergence = (divergence * mask).sum(1, keepdim=True) / mask.sum(1, keepdim=True).clamp(min=1.0)
    return ((advantages >= 0) | (mean_divergence <= threshold)).to(mask.dtype)


def entropy_threshold(
    entropies: torch.Tensor, mask: torch.Tensor, quantile: float, gather_padded: Callable = lambda t: t
) -> float | None:
    """`torch.quantile` (linear) of the active-token entropies of every process; None when there are none.

    `gather_padded` concatenates a 1-D tensor from all processes, padding shorter ones with a negative sentinel
    (entropies are never negative, so the sentinel is dropped afterwards)."""
    gathered = gather_padded(entropies.detach()[mask.bool()].float())
    gathered = gathered[gathered >= 0]
    if gathered.numel() == 0:
        return None
    return torch.quantile(gathered, quantile).item()


def high_entropy_mask(entropies: torch.Tensor, mask: torch.Tensor, threshold: float | None) -> torch.Tensor:
    """Tokens whose entropy is at least the threshold, never padding.  [B, T] bool"""
    if threshold is None:
        return torch.zeros_like(entropies, dtype=torch.bool)
    return ((entropies * mask.float()) >= threshold) & mask.bool()


def vespo_phi(r: Ratios, s: LossSettings) -> torch.Tensor:
    """VESPO gamma weight phi(W) = exp(lambda + k log W - lambda W) of the sequence ratio W, detached.  [B, 1]"""
    floor = math.log(1e-8)
    with torch.no_grad():
        log_w = (torch.clamp(r.log_ratio, -20.0, 20.0) * r.mask).sum(-1, keepdim=True)  # [B, 1]
        if r.sampling_ratio is not None:  # fold the vLLM token ratio in, in log space
            log_w = log_w + torch.clamp(torch.log(r.sampling_ratio), floor, 20.0).sum(-1, keepdim=True)
        log_w = torch.clamp(log_w, floor, 20.0)
        positive = r.advantages >= 0  # [B, 1]
        k = torch.where(positive, s.vespo_k_pos, s.vespo_k_neg)
        lam = torch.where(positive, s.vespo_lambda_pos, s.vespo_lambda_neg).clamp(min=1e-4)
        phi = torch.exp(lam + k * log_w - lam * torch.exp(log_w))
        return phi.nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)


# ---------------------------------------------------------------------------------------------------------------
# Per-token objectives: (ratios, settings) -> (loss [B, T] or [B, 1], extras for metrics)
# ---------------------------------------------------------------------------------------------------------------
def clipped_objective(r: Ratios, s: LossSettings) -> tuple[torch.Tensor, dict]:
    """PPO clip, optionally two-sided: -min(min(w, delta) A, clip(w, 1-eps_lo, 1+eps_hi) A)."""
    clipped = torch.clamp(r.weight, 1 - s.epsilon_low, 1 + s.epsilon_high)
    weight = r.weight if s.delta is None else torch.clamp(r.weight, max=s.delta)
    loss = -torch.min(weight * r.advantages, clipped * r.advantages)
    return loss, {"weight": weight}


def cispo_objective(r: Ratios, s: LossSettings) -> tuple[torch.Tensor, dict]:
    """CISPO: -sg(min(w, eps_high)) A logp; epsilon_high is an absolute cap on the ratio here."""
    capped = torch.clamp(r.weight, max=s.epsilon_high).detach()
    return -capped * r.advantages * r.logps, {}


def sapo_objective(r: Ratios, s: LossSettings) -> tuple[torch.Tensor, dict]:
    """SAPO soft gate: -(4 / tau) sigmoid(tau (w - 1)) A, tau by the sign of A."""
    tau = torch.where(r.advantages > 0, s.sapo_temperature_pos, s.sapo_temperature_neg)
    return -(torch.sigmoid(tau * (r.weight - 1)) * 4 / tau) * r.advantages, {}


def vespo_objective(r: Ratios, s: LossSettings) -> tuple[torch.Tensor, dict]:
    """VESPO: -phi(W) A logp with a detached sequence weight phi."""
    phi = vespo_phi(r, s)  # [B, 1]
    return -phi * r.advantages * r.logps, {"phi": phi}


OBJECTIVES = {
    "grpo": clipped_objective,
    "bnpo": clipped_objective,
    "dr_grpo": clipped_objective,
    "dapo": clipped_objective,
    "luspo": clipped_objective,
    "cispo": cispo_objective,
    "sapo": sapo_objective,
    "vespo": vespo_objective,
}


# ---------------------------------------------------------------------------------------------------------------
# Aggregation: (masked per-token loss [B, T], mask, inputs, settings, ctx) -> loss before the GA division
# ---------------------------------------------------------------------------------------------------------------
def sequence_mean_of_token_means(loss, mask, inputs, s, ctx):
    """grpo, sapo: each sequence's token mean, averaged over sequences."""
    return ((loss * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()


def micro_batch_token_mean(loss, mask, inputs, s, ctx):
    """bnpo: token mean over the local micro-batch."""
    return (loss * mask).sum() / mask.sum().clamp(min=1.0)


def fixed_length_mean(loss, mask, inputs, s, ctx):
    """dr_grpo: token sum over B * max_completion_length."""
    return (loss * mask).sum() / (loss.size(0) * s.max_completion_length)


def sequence_sum_mean(loss, mask, inputs, s, ctx):
    """luspo: each sequence's token sum, averaged over sequences."""
    return (loss * mask).sum(-1).mean()


def generation_token_mean(loss, mask, inputs, s, ctx):
    """dapo, cispo, vespo: token sum over the generation batch's active tokens per process, rescaled to one
    accumulation window (x GA / s) in train mode. Already includes the GA division."""
    normalizer = inputs.num_items_in_batch.clamp(min=1.0) / s.num_processes
    if ctx.training:
        normalizer = normalizer * ctx.grad_accum / s.steps_per_generation
    return (loss * mask).sum() / normalizer


AGGREGATIONS = {
    "grpo": sequence_mean_of_token_means,
    "sapo": sequence_mean_of_token_means,
    "bnpo": micro_batch_token_mean,
    "dr_grpo": fixed_length_mean,
    "luspo": sequence_sum_mean,
    "dapo": generation_token_mean,
    "cispo": generation_token_mean,
    "vespo": generation_token_mean,
}
NORMALIZED_BY_GENERATION_BATCH = {"dapo", "cispo", "vespo"}  # their aggregation already divides by GA


# ---------------------------------------------------------------------------------------------------------------
# The loss
# ---------------------------------------------------------------------------------------------------------------
def grpo_loss(inputs: LossInputs, s: LossSettings, ctx: StepContext) -> LossOutputs:
    mask = inputs.mask.to(inputs.logps.dtype)  # [B, T]
    advantages = inputs.advantages.unsqueeze(1) if inputs.advantages.dim() == 1 else inputs.advantages  # [B, 1]
    old_logps = inputs.old_logps if inputs.old_logps is not None else inputs.logps.detach()  # [B, T]
    log_ratio = inputs.logps - old_logps  # [B, T]
    weight = importance_weight(log_ratio, mask, s.importance_sampling_level)  # [B, T] or [B, 1]
    ratios = Ratios(log_ratio, weight, advantages, inputs.logps, mask, inputs.sampling_ratio)

    per_token, extras = OBJECTIVES[s.loss_type](ratios, s)  # [B, T] or [B, 1]
    if s.off_policy_mask_threshold is not None:
        sampler = inputs.sampling_logps if inputs.sampling_logps is not None else old_logps
        per_token = per_token * off_policy_mask(advantages, inputs.logps, sampler, mask, s.off_policy_mask_threshold)
    entropy_mask = None
    if s.top_entropy_quantile < 1.0:
        entropy_mask = high_entropy_mask(inputs.entropies, mask, ctx.entropy_threshold)  # [B, T]
        per_token = per_token * entropy_mask
    if s.apply_sampling_ratio and s.loss_type != "vespo":  # vespo folds the ratio into phi instead
        per_token = per_token * inputs.sampling_ratio
    kl = None
    if s.beta != 0.0:
        kl = k3_kl(inputs.ref_logps, inputs.logps)  # [B, T]
        if s.use_bias_correction_kl:
            kl = kl * weight  # keeps the ratio's gradient: the KL gradient is IS-weighted even on-policy
        per_token = per_token + s.beta * kl  # the KL is not masked by the off-policy / entropy masks

    loss = AGGREGATIONS[s.loss_type](per_token, mask, inputs, s, ctx)
    policy_loss = loss.detach()
    if s.loss_type not in NORMALIZED_BY_GENERATION_BATCH and ctx.training:
        loss = loss / ctx.grad_accum
    outputs = LossOutputs(loss=loss, policy_loss=policy_loss)
    if ctx.entropy_bonus:
        apply_entropy_bonus(outputs, inputs.entropies, mask, entropy_mask, ctx)
    collect_metrics(outputs, s, ratios, extras, kl, inputs.entropies)
    return outputs


def apply_entropy_bonus(outputs: LossOutputs, entropies, mask, entropy_mask, ctx: StepContext) -> None:
    """L -= c * mean entropy over the tokens the policy term acts on, divided for accumulation in train mode."""
    active = mask if entropy_mask is None else mask * entropy_mask  # [B, T]
    divisor = ctx.grad_accum if ctx.training else 1.0
    mean_entropy = (entropies * active).sum() / active.sum().clamp(min=1.0) / divisor
    outputs.loss = outputs.loss - ctx.entropy_coef * mean_entropy
    outputs.entropy_window = torch.stack([(entropies * active).sum(), active.sum()]).detach()


def collect_metrics(outputs: LossOutputs, s: LossSettings, r: Ratios, extras: dict, kl, entropies) -> None:
    """Local [sum, count] pairs for TRL's global masked means, and per-sequence values for gathered min/max."""

    def masked(x: torch.Tensor) -> torch.Tensor:  # [B, T] -> masked sum and count; [B, 1] -> plain mean over B
        x = x.detach().float()
        if x.size(1) == 1:
            return torch.stack([x.sum(), torch.tensor(float(x.size(0)), device=x.device)])
        return torch.stack([(x * r.mask).sum(), r.mask.sum().float()])

    def per_sequence(x: torch.Tensor) -> torch.Tensor:  # NaN for fully masked rows, like TRL
        x = x.detach().float()
        return x.squeeze(1) if x.size(1) == 1 else (x * r.mask).sum(-1) / r.mask.sum(-1)

    sums = outputs.sums
    if kl is not None:
        sums["kl"] = masked(kl)
    sums["entropy"] = masked(entropies)
    if s.loss_type in ("grpo", "bnpo", "dr_grpo", "dapo", "luspo"):
        weight = extras["weight"]
        low = ((weight < 1 - s.epsilon_low) & (r.advantages < 0)).float()
        high = ((weight > 1 + s.epsilon_high) & (r.advantages > 0)).float()
        sums["clip_ratio/low_mean"] = masked(low)
        sums["clip_ratio/high_mean"] = masked(high)
        sums["clip_ratio/region_mean"] = masked(torch.maximum(low, high))
        outputs.per_sequence["clip_ratio/low_min"] = per_sequence(low)
        outputs.per_sequence["clip_ratio/high_max"] = per_sequence(high)
    elif s.loss_type == "cispo":
        sums["cispo_clip_ratio"] = masked(((r.weight > s.epsilon_high) & (r.advantages > 0)).float())
    elif s.loss_type == "vespo":
        sums["vespo/phi_seq_mean"] = masked(extras["phi"])


def sampling_importance_ratio(
    old_logps: torch.Tensor,
    sampling_logps: torch.Tensor,
    mask: torch.Tensor,
    mode: str,
    clip_min: float | None,
    clip_max: float | None,
) -> torch.Tensor:
    """vLLM importance-sampling correction: ratio of the trainer's to the sampler's probabilities.

    token_* modes give [B, T] (padding gives 1); sequence_* modes give [B, 1] from the SUM of token log-ratios.
    *_truncate clamps to [clip_min, clip_max] (None = unbounded); *_mask zeroes values outside the bounds."""
    diff = torch.nan_to_num((old_logps - sampling_logps) * mask, nan=0.0)  # [B, T]
    level, action = mode.split("_")
    if level == "sequence":
        diff = diff.sum(dim=-1, keepdim=True)  # [B, 1]
    ratio = torch.exp(diff)
    if action == "truncate":
        return torch.clamp(ratio, min=clip_min, max=clip_max)
    low = clip_min if clip_min is not None else -math.inf
    high = clip_max if clip_max is not None else math.inf
    return ratio.masked_fill((ratio < low) | (ratio > high), 0.0)
