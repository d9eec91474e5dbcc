"""verl's own checks before Ray starts of the other parts of a run: the validation sampling temperature, the
critic's batch sizes, the LoRA rank vLLM serves, and a rollout engine named."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.dialects.verl.config import R
from grpo_schema.dialects.verl.rules.base import GPUS, Finding, finding, rule, set_fix, unset_fix


@rule("GRPO-Q018", "error", (R + "val_kwargs.do_sample", R + "temperature"))
def validation_sampling_needs_temperature(config: Any, ctx: Any) -> Iterator[Finding]:
    """Sampling during validation (rollout.val_kwargs.do_sample) needs rollout.temperature > 0.

    verl's validate_config asserts it before training starts.
    """
    if config[R + "val_kwargs.do_sample"] and not float(config[R + "temperature"]) > 0:
        yield finding(
            f"rollout.val_kwargs.do_sample is on but rollout.temperature is {config[R + 'temperature']}",
            (R + "val_kwargs.do_sample", R + "temperature"),
            fixes=(set_fix(R + "temperature", 1.0),),
        )


def needs_critic(config: Any) -> bool:
    """verl builds a critic when critic.enable says so, else for the gae estimator only."""
    enable = config["critic.enable"]
    return bool(enable) if enable is not None else config["algorithm.adv_estimator"] == "gae"


_CRITIC = (
    "critic.enable",
    "algorithm.adv_estimator",
    "critic.use_dynamic_bsz",
    "critic.ppo_micro_batch_size",
    "critic.ppo_micro_batch_size_per_gpu",
    "critic.ppo_mini_batch_size",
    "data.train_batch_size",
    "critic.ulysses_sequence_parallel_size",
    "critic.strategy",
) + GPUS


@rule("GRPO-Q019", "error", _CRITIC)
def critic_batch_sizes(config: Any, ctx: Any) -> Iterator[Finding]:
    """When a critic is trained (critic.enable, or the gae estimator), its batch sizes pass verl's critic checks.

    verl's CriticConfig refuses, before Ray starts and without critic.use_dynamic_bsz: both or neither of
    critic.ppo_micro_batch_size(_per_gpu); a mini-batch the global micro-batch does not divide; a mini-batch larger
    than data.train_batch_size; and under FSDP a global micro-batch x Ulysses size below the GPUs. A GRPO run with
    adv_estimator=grpo trains no critic.
    """
    if not needs_critic(config) or config["critic.use_dynamic_bsz"]:
        return
    glob, per_gpu = config["critic.ppo_micro_batch_size"], config["critic.ppo_micro_batch_size_per_gpu"]
    mini = int(config["critic.ppo_mini_batch_size"])
    fields = ("critic.ppo_micro_batch_size_per_gpu", "critic.ppo_micro_batch_size")
    if glob is None and per_gpu is None:
        yield finding(
            "a critic is trained (adv_estimator gae, or critic.enable) but neither "
            "critic.ppo_micro_batch_size_per_gpu nor critic.ppo_micro_batch_size is set",
            fields,
            hint="set critic.ppo_micro_batch_size_per_gpu, or algorithm.adv_estimator=grpo for GRPO",
        )
    elif glob is not None and per_gpu is not None:
        yield finding(
            "both critic.ppo_micro_batch_size and critic.ppo_micro_batch_size_per_gpu are set",
            fields,
            fixes=(unset_fix("critic.ppo_micro_batch_size"),),
        )
    elif glob is not None and int(glob) > 0 and mini % int(glob):
        yield finding(
            f"critic.ppo_mini_batch_size ({mini}) is not a multiple of critic.ppo_micro_batch_size ({glob})",
            fields + ("critic.ppo_mini_batch_size",),
        )
    elif int(config["data.train_batch_size"]) < mini:
        yield finding(
            f"critic.ppo_mini_batch_size ({mini}) is larger than data.train_batch_size "
            f"({config['data.train_batch_size']})",
            ("critic.ppo_mini_batch_size", "data.train_batch_size"),
        )
    elif (
        glob is not None
        and config["critic.strategy"] in ("fsdp", "fsdp2")
        and int(glob) * int(config["critic.ulysses_sequence_parallel_size"] or 1) < config.n_gpus
    ):
        yield finding(
            f"critic.ppo_micro_batch_size ({glob}) x ulysses_sequence_parallel_size is smaller than the "
            f"{config.n_gpus} GPUs",
            fields + GPUS,
        )


_LORA = (
    "actor_rollout_ref.model.lora_rank",
    "actor_rollout_ref.model.lora.rank",
    "actor_rollout_ref.model.lora.merge",
    R + "name",
)
VLLM_MAX_LORA_RANK = 512


def served_lora_rank(config: Any) -> int:
    """The LoRA rank the rollout serves, as validate_config computes it: model.lora.rank, else model.lora_rank; 0
    when the adapter is merged into the weights (model.lora.merge)."""
    rank = int(config["actor_rollout_ref.model.lora.rank"] or 0)
    if rank <= 0:
        rank = int(config["actor_rollout_ref.model.lora_rank"] or 0)
    return 0 if config["actor_rollout_ref.model.lora.merge"] else rank


@rule("GRPO-Q020", "error", _LORA)
def vllm_lora_rank_supported(config: Any, ctx: Any) -> Iterator[Finding]:
    """With vLLM rollouts, the LoRA rank must be one vLLM serves (at most 512).

    verl's validate_config checks model.lora.rank (or model.lora_rank) against vLLM's largest LoRA rank before Ray
    starts, unless the adapter is merged (model.lora.merge).
    """
    rank = served_lora_rank(config)
    if rank > VLLM_MAX_LORA_RANK and config[R + "name"] == "vllm":
        key = (
            "actor_rollout_ref.model.lora.rank"
            if config.written("actor_rollout_ref.model.lora.rank")
            else "actor_rollout_ref.model.lora_rank"
        )
        yield finding(
            f"LoRA rank {rank} is above vLLM's largest, {VLLM_MAX_LORA_RANK}",
            (key, R + "name"),
            fixes=(set_fix(key, VLLM_MAX_LORA_RANK),),
        )


MANDATORY = "???"  # OmegaConf's mark for a value the user must give


@rule("GRPO-Q025", "error", _LORA)
def rollout_engine_named(config: Any, ctx: Any) -> Iterator[Finding]:
    """A LoRA run must name its rollout engine: actor_rollout_ref.rollout.name has no default.

    verl's config marks it mandatory (`???`, since verl 0.6; 0.5 defaulted it to vllm, which old recipes rely on).
    With a LoRA adapter served unmerged, validate_config reads it to check vLLM's LoRA rank, before Ray starts, and
    stops with `Missing mandatory value: actor_rollout_ref.rollout.name`. Without LoRA the rollout worker reads it
    on the cluster.
    """
    if config[R + "name"] == MANDATORY and served_lora_rank(config) > 0:
        yield finding(
            "actor_rollout_ref.rollout.name is not set, and verl has no default for it",
            (R + "name",),
            hint="name the rollout engine: actor_rollout_ref.rollout.name=vllm (or sglang)",
            fixes=(set_fix(R + "name", "vllm"),),
        )
