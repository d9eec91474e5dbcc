"""Rewards to advantages: group-relative normalisation, as TRL 1.16 computes it.

All functions take the rewards of the whole generation batch (gathered from every process, in rank order, so the
`num_generations` completions of a prompt are consecutive rows) and are pure tensor functions. A reward function
that returned None for a row is a NaN here; a row where every function returned None is "unscorable" and gets
advantage 0. The only constant added to a denominator is `STD_EPSILON`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

STD_EPSILON = 1e-4


def nanstd(values: torch.Tensor, dim: int | None = None, keepdim: bool = False) -> torch.Tensor:
    """Standard deviation ignoring NaNs, with Bessel's correction; NaN where fewer than 2 values are present."""
    dims = dim if dim is not None else tuple(range(values.dim()))
    mean = torch.nanmean(values, dim=dims, keepdim=True)
    variance = torch.nanmean((values - mean) ** 2, dim=dims, keepdim=True)
    count = (~torch.isnan(values)).sum(dim=dims, keepdim=True)
    bessel = torch.where(count > 1, count / (count - 1), torch.full_like(variance, float("nan")))
    std = torch.sqrt(variance * bessel)
    if keepdim:
        return std
    return std.squeeze(dim) if dim is not None else std.reshape(())


@dataclass(frozen=True)
class Advantages:
    advantages: torch.Tensor  # [N] one per completion, NaN replaced by 0
    std: torch.Tensor  # [N] the std each row was divided by (for frac_reward_zero_std)


def weighted_rewards(rewards_per_func: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """`sum_k w_k R_k` per row, skipping NaN terms; NaN for unscorable rows.  [N, K] x [K] -> [N]"""
    unscorable = torch.isnan(rewards_per_func).all(dim=1)  # [N]
    rewards = (rewards_per_func * weights.unsqueeze(0)).nansum(dim=1)  # [N]
    return rewards.masked_fill(unscorable, float("nan"))


def sum_then_normalize(
    rewards_per_func: torch.Tensor, weights: torch.Tensor, num_generations: int, scale_rewards: str
) -> Advantages:
    """Weighted sum first, then `(r - group mean) / (std + eps)`; the std is per group, per batch, or not used."""
    rewards = weighted_rewards(rewards_per_func, weights)  # [N]
    groups = rewards.view(-1, num_generations)  # [N/G, G]
    group_mean = torch.nanmean(groups, dim=1).repeat_interleave(num_generations)  # [N]
    if scale_rewards == "batch":
        std = nanstd(rewards).expand_as(rewards) if rewards.numel() > 1 else torch.zeros_like(rewards)
    elif num_generations > 1:  # "group", and "none" (which still reports the group std)
        std = nanstd(groups, dim=1).repeat_interleave(num_generations)  # [N]
    else:  # one completion per prompt only happens in evaluation
        std = torch.zeros_like(rewards)
    advantages = rewards - group_mean
    if scale_rewards != "none":
        advantages = advantages / (std + STD_EPSILON)
    return Advantages(torch.nan_to_num(advantages, nan=0.0), std)


def normalize_then_sum(
    rewards_per_func: torch.Tensor, weights: torch.Tensor, num_generations: int, scale_rewards: str
) -> Advantages:
    """GDPO: normalise each reward function within its group, sum with weights, then normalise over the batch.

    `scale_rewards` is ignored here, as in TRL. A function with fewer than 2 valid values in a group has a NaN
    std, so its normalised values are NaN and drop out of the weighted sum.
    """
    del scale_rewards
    unscorable = torch.isnan(rewards_per_func).all(dim=1)  # [N]
    grouped = rewards_per_func.view(-1, num_generations, rewards_per_func.size(1))  # [N/G, G, K]
    mean = torch.nanmean(grouped, dim=1, keepdim=True)  # [N/G, 1, K]
    std = nanstd(grouped, dim=1, keepdim=True) if num_generations > 1 else torch.zeros_like(mean)
    normalised = ((grouped - mean) / (std + STD_EPSILON)).view(-1, rewards_per_func.size(1))  # [N, K]
    rewards = (normalised * weights.unsqueeze(0)).nansum(dim=1).masked_fill(unscorable, float("nan"))  # [N]
    batch_std = nanstd(rewards).expand_as(rewards) if rewards.numel() > 1 else torch.zeros_like(rewards)
    advantages = (rewards - torch.nanmean(rewards)) / (batch_std + STD_EPSILON)
    return Advantages(torch.nan_to_num(advantages, nan=0.0), batch_std)


AGGREGATIONS = {"sum_then_normalize": sum_then_normalize, "normalize_then_sum": normalize_then_sum}


def compute_advantages(
    rewards_per_func: torch.Tensor, weights: torch.Tensor, num_generations: int, scale_rewards: str, aggregation: str
) -> Advantages:
    """Advantages of the whole generation batch.  rewards_per_func: [N, K] (NaN = None), weights: [K]."""
    return AGGREGATIONS[aggregation](rewards_per_func.float(), weights.float(), num_generations, scale_rewards)


def reward_metrics(
    rewards_per_func: torch.Tensor, weights: torch.Tensor, names: list[str], result: Advantages
) -> dict[str, float]:
    """The reward metrics TRL logs once per generation, over the whole batch (not per group)."""
    metrics = {}
    for k, name in enumerate(names):
        metrics[f"rewards/{name}/mean"] = torch.nanmean(rewards_per_func[:, k]).item()
        metrics[f"rewards/{name}/std"] = nanstd(rewards_per_func[:, k]).item()
    rewards = weighted_rewards(rewards_per_func.float(), weights.float())
    metrics["reward"] = torch.nanmean(rewards).item()
    metrics["reward_std"] = nanstd(rewards).item()
    zero_std = torch.isclose(result.std, torch.zeros_like(result.std))
    metrics["frac_reward_zero_std"] = zero_std.float().mean().item()
    return metrics
