"""One generation batch: sample completions, score them, compute advantages (and old / reference log-probs).

This is TRL's `_generate_and_score_completions` for the default transformers path. Each process generates for
its own `b * s` rows; rewards, completion lengths and token counts are gathered so that every process computes
the same advantages over the whole generation batch, then keeps its own slice.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from grpo_runtime.data.datasets import reward_columns
from grpo_runtime.data.rewards import RunState, score
from grpo_runtime.generation.rollout import (
    build_rollout,
    decode_completions,
    generation_mode,
    is_conversational,
    pad_multiple,
    tokenize_prompts,
)
from grpo_runtime.model.loading import checkpointing_settings
from grpo_runtime.training.advantages import compute_advantages, reward_metrics
from grpo_runtime.training.logprobs import completion_logps
from grpo_runtime.training.loss import sampling_importance_ratio


def completion_metrics(lengths: torch.Tensor, truncated: torch.Tensor) -> dict[str, float]:
    """Length statistics over the gathered batch.  lengths [N], truncated [N] bool"""
    lengths = lengths.float()
    terminated = lengths[~truncated]
    if terminated.numel() == 0:
        terminated = torch.zeros(1)
    return {
        "completions/mean_length": lengths.mean().item(),
        "completions/min_length": lengths.min().item(),
        "completions/max_length": lengths.max().item(),
        "completions/clipped_ratio": truncated.float().mean().item(),
        "completions/mean_terminated_length": terminated.mean().item(),
        "completions/min_terminated_length": terminated.min().item(),
        "completions/max_terminated_length": terminated.max().item(),
    }


def policy_scores(parts, config, plan, rollout, chunk: int) -> dict[str, torch.Tensor]:
    """Old log-probs when the plan needs them, reference log-probs when beta != 0 (no grad, the policy in its
    current mode as in TRL, `chunk` rows at a time: the per-device train or eval batch size)."""
    scores = {}
    tensors = (rollout.prompt_ids, rollout.prompt_mask, rollout.completion_ids, rollout.completion_mask)
    tensors = tuple(t.to(parts.device) for t in tensors)
    with torch.no_grad(), generation_mode(parts.policy, checkpointing_settings(config)[1]):
        if plan.old_logprobs_needed:
            scores["old_logps"], _, _ = completion_logps(
                parts.policy, *tensors, config.temperature, chunk, with_entropy=False, autocast=parts.autocast
            )
        if config.beta != 0.0:
            with parts.reference_context() as reference:
                scores["ref_logps"], _, _ = completion_logps(
                    reference, *tensors, config.temperature, chunk, with_entropy=False, autocast=parts.autocast
                )
    return scores


@dataclass
class Generated:
    batch: dict  # tensors of this process's rows, ready to shuffle and split
    metrics: dict  # generation metrics over the whole generation batch
    tokens: int  # prompt + completion tokens of the whole generation batch
    rewards: torch.Tensor  # [rows, functions] this process's raw rewards (NaN = None), for the audit log
    prompts: list  # this process's prompts and decoded completions, for log_completions
    completions: list


@dataclass(frozen=True)
class Grouping:
    """What differs between training and evaluation batches."""

    num_generations: int  # completions per prompt (num_generations, or num_generations_eval)
    chunk_rows: int  # rows per forward pass when scoring (per_device_train/eval_batch_size)

    @classmethod
    def training(cls, plan) -> "Grouping":
        return cls(plan.num_generations, plan.per_device_train_batch_size)

    @classmethod
    def evaluation(cls, config) -> "Grouping":
        return cls(config.num_generations_eval or config.num_generations, config.per_device_eval_batch_size)


def generate_batch(parts, config, plan, rows: list[dict], state: RunState, grouping: Grouping) -> Generated:
    prompts = [row["prompt"] for row in rows]
    prompt_lists = tokenize_prompts(parts.tokenizer, prompts, config.chat_template_kwargs)
    multiple = pad_multiple(config.pad_to_multiple_of)
    samples = parts.backend.generate(prompt_lists, grouping.num_generations, state.global_step)
    completion_lists = samples.completions
    rollout = build_rollout(
        prompt_lists,
        completion_lists,
        parts.tokenizer.pad_token_id,
        parts.eos_ids,
        config.mask_truncated_completions,
        multiple,
    )
    completions = decode_completions(parts.tokenizer, completion_lists, is_conversational(prompts[0]))
    scores = policy_scores(parts, config, plan, rollout, grouping.chunk_rows)
    sampling_metrics = {}
    if samples.logprobs is not None:
        scores["sampling_logps"] = pad_rows_float(samples.logprobs, rollout.completion_ids.size(1))
        if parts.loss_settings.apply_sampling_ratio:
            scores["sampling_ratio"], sampling_metrics = sampling_correction(parts, config, rollout, scores)

    reward_log: dict[str, list[float]] = {}
    audit: dict[str, dict] = {}
    local = score(
        parts.reward_funcs,
        prompts,
        completions,
        completion_lists,
        reward_columns(rows),
        state,
        lambda name, value: reward_log.setdefault(name, []).append(float(value)),
        audit,
    )
    rewards = parts.gather(local.to(parts.device)).cpu()  # [B_gen, K] in rank order
    result = compute_advantages(
        rewards,
        parts.reward_weights,
        grouping.num_generations,
        config.scale_rewards,
        config.multi_objective_aggregation,
    )
    here = slice(parts.rank * len(rows), (parts.rank + 1) * len(rows))

    lengths = parts.gather(rollout.completion_lengths.to(parts.device)).cpu()
    tokens = lengths.sum() + parts.gather(rollout.prompt_lengths.to(parts.device)).cpu().sum()
    metrics = completion_metrics(lengths, parts.gather(rollout.truncated.to(parts.device)).cpu())
    metrics.update(reward_metrics(rewards, parts.reward_weights, parts.reward_names, result))
    metrics.update(logged_by_rewards(parts, reward_log))
    metrics.update(reward_audit_metrics(parts, audit, len(rows)))
    metrics.update(sampling_metrics)
    batch = dict(
        prompt_ids=rollout.prompt_ids,
        prompt_mask=rollout.prompt_mask,
        completion_ids=rollout.completion_ids,
        completion_mask=rollout.completion_mask,
        advantages=result.advantages[here],
        num_items_in_batch=parts.gather(rollout.completion_mask.sum().to(parts.device)).sum().cpu(),
        **{k: v.cpu() for k, v in scores.items()},
    )
    return Generated(batch, metrics, int(tokens), local, prompts, completions)


def pad_rows_float(rows: list[list[float]], width: int) -> torch.Tensor:
    """[R, width] float32, right-padded with 0 (padding is masked out wherever these are used)."""
    out = torch.zeros(len(rows), width)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row[:width], dtype=torch.float32)
    return out


def sampling_correction(parts, config, rollout, scores) -> tuple[torch.Tensor, dict[str, float]]:
    """vLLM importance-sampling correction (TRL 1.16): the trainer's old log-probs against the sampler's, the
    ratio per vllm_importance_sampling_mode with its bounds (the deprecated _cap wins over _clip_max), and the
    `sampling/*` metrics over every process (NaN sampler log-probs count as no difference in the ratio and are
    left out of the log-prob difference)."""
    mask = rollout.completion_mask.float()  # [R, C]
    old, sampled = scores["old_logps"], scores["sampling_logps"]
    high = (
        config.vllm_importance_sampling_cap
        if config.vllm_importance_sampling_cap is not None
        else config.vllm_importance_sampling_clip_max
    )
    mode = config.vllm_importance_sampling_mode
    ratio = sampling_importance_ratio(old, sampled, mask, mode, config.vllm_importance_sampling_clip_min, high)
    delta = (old - sampled).abs()
    active = mask.bool()
    delta = delta[active & ~torch.isnan(delta)]
    flat = ratio.flatten() if mode.startswith("sequence") else ratio[active]
    zero = torch.tensor(0.0)
    stats = torch.stack(
        [
            delta.mean() if delta.numel() else zero,
            delta.max() if delta.numel() else zero,
            flat.min() if flat.numel() else zero,
            flat.mean() if flat.numel() else zero,
            flat.max() if flat.numel() else zero,
        ]
    ).unsqueeze(0)  # [1, 5]
    every = parts.gather(stats.to(parts.device)).cpu()  # [P, 5]
    return ratio, {
        "sampling/sampling_logp_difference/mean": every[:, 0].mean().item(),
        "sampling/sampling_logp_difference/max": every[:, 1].max().item(),
        "sampling/importance_sampling_ratio/min": every[:, 2].min().item(),
        "sampling/importance_sampling_ratio/mean": every[:, 3].mean().item(),
        "sampling/importance_sampling_ratio/max": every[:, 4].max().item(),
    }


def logged_by_rewards(parts, reward_log: dict[str, list[float]]) -> dict[str, float]:
    """Values reward functions passed to `log_metric`: sum / count over every process."""
    names = sorted(set(name for names in parts.gather_object([sorted(reward_log)]) for name in names))
    metrics = {}
    for name in names:
        values = reward_log.get(name, [])
        total, count = parts.gather(torch.tensor([[sum(values), len(values)]], device=parts.device)).sum(0).tolist()
        metrics[name] = total / count if count else float("nan")
    return metrics


def reward_audit_metrics(parts, audit: dict[str, dict], rows: int) -> dict[str, float]:
    """Per reward function, over every process: the share of its scores that were None and NaN, and the
    slowest process's seconds for its call. Not logged by TRL; the run-health rules read them (GRPO-A002-A004)."""
    names = parts.reward_names
    if not names:
        return {}
    local = torch.tensor(
        [
            [
                audit.get(n, {}).get("none", 0),
                audit.get(n, {}).get("nan", 0),
                rows,
                audit.get(n, {}).get("seconds", 0.0),
            ]
            for n in names
        ],
        dtype=torch.float64,
    )
    every = parts.gather(local.unsqueeze(0).to(parts.device)).cpu().reshape(-1, len(names), 4)  # [P, K, 4]
    metrics = {}
    for k, name in enumerate(names):
        counted = every[:, k, 2].sum().item()
        metrics[f"rewards/{name}/none_frac"] = every[:, k, 0].sum().item() / counted if counted else 0.0
        metrics[f"rewards/{name}/nan_frac"] = every[:, k, 1].sum().item() / counted if counted else 0.0
        metrics[f"rewards/{name}/seconds"] = every[:, k, 3].max().item()
    return metrics


def shuffle_rows(batch: dict) -> dict:
    """One permutation of the rows from the global torch RNG (per process), applied to every tensor; 0-d
    tensors such as num_items_in_batch are kept as they are."""
    rows = batch["advantages"].size(0)
    permutation = torch.randperm(rows)
    return {k: v if v.dim() == 0 else v[permutation] for k, v in batch.items()}


def split_rows(batch: dict, parts_count: int) -> list[dict]:
    """`parts_count` consecutive micro-batches of equal size."""
    size = batch["advantages"].size(0) // parts_count
    return [
        {k: v if v.dim() == 0 else v[i * size : (i + 1) * size] for k, v in batch.items()} for i in range(parts_count)
    ]
