"""The batch schedule of a verl run, in verl's units, with what TRL calls the same numbers.

Per RL step verl generates train_batch_size prompts x rollout.n samples, splits them into mini-batches of
ppo_mini_batch_size prompts (x n samples: one optimizer step each, repeated ppo_epochs times), gives each
data-parallel rank mini x n / DP samples, and runs those in micro-batches of ppo_micro_batch_size_per_gpu. The LR
scheduler and trainer.total_training_steps count RL steps.
"""

from __future__ import annotations

from typing import Any

from grpo_schema.dialects.verl.config import A, R, VerlConfig


def _int(config: VerlConfig, key: str) -> int | None:
    value = config[key]
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def schedule(config: VerlConfig) -> dict[str, Any]:
    """The numbers of one RL step (None where a value is unknown or does not divide)."""
    prompts, n = _int(config, "data.train_batch_size"), _int(config, R + "n")
    mini, micro = _int(config, A + "ppo_mini_batch_size"), _int(config, A + "ppo_micro_batch_size_per_gpu")
    epochs = _int(config, A + "ppo_epochs") or 1
    per_node, nodes = _int(config, "trainer.n_gpus_per_node"), _int(config, "trainer.nnodes")
    if None in (prompts, n, mini, per_node, nodes):
        return {"complete": False}
    gpus = per_node * nodes  # type: ignore[operator]
    group = config.model_parallel * config.sequence_parallel
    dp = gpus // group if group and gpus % group == 0 else None
    samples = mini * n  # type: ignore[operator]
    per_rank = samples // dp if dp and samples % dp == 0 else None
    micro_steps = per_rank // micro if per_rank and micro and not config.dynamic and per_rank % micro == 0 else None
    minis_per_epoch = prompts // mini if mini else 0  # type: ignore[operator]
    optimizer_steps = minis_per_epoch * epochs
    out: dict[str, Any] = {
        "complete": True,
        "gpus": gpus,
        "data_parallel": dp,
        "prompts_per_rl_step": prompts,
        "samples_per_rl_step": prompts * n,  # type: ignore[operator]
        "group_size": n,
        "mini_batch_prompts": mini,
        "samples_per_optimizer_step": samples,
        "samples_per_rank_per_optimizer_step": per_rank,
        "micro_batch_per_gpu": micro,
        "micro_steps_per_optimizer_step": micro_steps,
        "dynamic_batch": config.dynamic,
        "ppo_epochs": epochs,
        "mini_batches_per_epoch": minis_per_epoch,
        "leftover_prompts": prompts % mini if mini else 0,  # type: ignore
        "optimizer_steps_per_rl_step": optimizer_steps,
        "off_policy_from_mini_batch": 2 if optimizer_steps > 1 else None,
        "lr_ticks": "once per RL step, after its last optimizer step",
    }
    total = _int(config, "trainer.total_training_steps")
    warmup = _int(config, A + "optim.lr_warmup_steps")
    out["total_training_steps"] = total
    out["optimizer_steps_total"] = total * optimizer_steps if total else None
    out["lr_warmup_rl_steps"] = warmup if warmup and warmup > 0 else None
    out["trl"] = trl_equivalent(out)
    return out


def trl_equivalent(s: dict[str, Any]) -> dict[str, Any]:
    """TRL's names for the same schedule (its world size = verl's data-parallel size)."""
    trl: dict[str, Any] = {
        "num_generations": s["group_size"],
        "generation_batch_size": s["samples_per_rl_step"],
        "num_iterations": s["ppo_epochs"],
        "world_size": s["data_parallel"],
    }
    if s["micro_batch_per_gpu"] and s["micro_steps_per_optimizer_step"]:
        trl["per_device_train_batch_size"] = s["micro_batch_per_gpu"]
        trl["gradient_accumulation_steps"] = s["micro_steps_per_optimizer_step"]
        trl["steps_per_generation"] = s["mini_batches_per_epoch"] * s["micro_steps_per_optimizer_step"]
    if s.get("optimizer_steps_total"):
        trl["max_steps"] = s["optimizer_steps_total"]
    if s.get("lr_warmup_rl_steps"):
        trl["warmup_steps"] = s["lr_warmup_rl_steps"] * s["optimizer_steps_per_rl_step"]
    return trl
