"""The checks verl runs before Ray starts (since 0.9.0: main_ppo calls validate_config first), with its verdict.

Each rule fires exactly when verl's own check fails, on the same values: validate_config's batch divisibility and
its log-prob micro-batch pairs, ActorConfig's __post_init__ and validate, the validation sampling temperature.
verl stops at the first failure; these report every one at once.
"""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.dialects.verl.config import REF, A, R
from grpo_schema.dialects.verl.rules.base import Finding, edits, finding, gpu_hint, rule

_GPUS = ("trainer.n_gpus_per_node", "trainer.nnodes")
_MEGATRON = (
    A + "strategy",
    A + "megatron.tensor_model_parallel_size",
    A + "megatron.pipeline_model_parallel_size",
    A + "megatron.context_parallel_size",
)
LOSS_AGG_MODES = ("token-mean", "token-sum", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm")


def megatron_divides(config: Any) -> bool:
    return not config.megatron or config.n_gpus % config.model_parallel == 0


def minimal_batch(config: Any) -> int:
    """validate_config's minimal batch: the GPUs under FSDP; Megatron's DP x micro per GPU."""
    if config.megatron:
        return (config.n_gpus // config.model_parallel) * int(config[A + "ppo_micro_batch_size_per_gpu"] or 0)
    return config.n_gpus


def batch_divides(config: Any) -> bool:
    minimal = minimal_batch(config)
    return minimal > 0 and (int(config["data.train_batch_size"]) * config.n) % minimal == 0


@rule("GRPO-Q010", "error", _GPUS + _MEGATRON + (A + "use_dynamic_bsz",))
def megatron_parallel_divides_gpus(config: Any, ctx: Any) -> Iterator[Finding]:
    """Under Megatron, the GPUs must be a multiple of TP x PP x CP.

    verl's validate_config asserts it before anything starts (without dynamic batch size): the data-parallel size is
    the GPUs over the model-parallel group, and a remainder has no place.
    """
    if not config.dynamic and not megatron_divides(config):
        yield finding(
            f"the {config.n_gpus} GPUs are not a multiple of Megatron's TP x PP x CP ({config.model_parallel})",
            _GPUS + _MEGATRON[1:],
            hint=gpu_hint(config, megatron_divides),
            fixes=edits(config, megatron_divides, ("trainer.n_gpus_per_node", True)),
        )


@rule(
    "GRPO-Q011",
    "error",
    _GPUS + _MEGATRON + ("data.train_batch_size", R + "n", A + "use_dynamic_bsz", A + "ppo_micro_batch_size_per_gpu"),
)
def batch_divides_minimal_batch(config: Any, ctx: Any) -> Iterator[Finding]:
    """data.train_batch_size x rollout.n must be a multiple of verl's minimal batch.

    The minimal batch is the number of GPUs under FSDP, and Megatron's data-parallel size x
    ppo_micro_batch_size_per_gpu under Megatron. verl's validate_config checks it before Ray starts (without
    dynamic batch size): `real_train_batch_size ... must be divisible by minimal possible batch size`.
    """
    if config.dynamic or not megatron_divides(config):
        return
    if config.megatron and config[A + "ppo_micro_batch_size_per_gpu"] is None:
        yield finding(
            "under Megatron verl's minimal batch is DP x actor.ppo_micro_batch_size_per_gpu, which is not "
            "set: verl fails computing it (the deprecated global ppo_micro_batch_size does not count)",
            (A + "ppo_micro_batch_size_per_gpu", A + "ppo_micro_batch_size"),
            hint="set actor.ppo_micro_batch_size_per_gpu",
        )
        return
    if batch_divides(config):
        return
    samples = int(config["data.train_batch_size"]) * config.n
    fields = ("data.train_batch_size", R + "n") + _GPUS
    yield finding(
        f"data.train_batch_size x rollout.n = {config['data.train_batch_size']} x {config.n} = {samples} "
        f"samples is not a multiple of verl's minimal batch ({minimal_batch(config)}"
        f"{', the GPUs' if not config.megatron else ', Megatron DP x ppo_micro_batch_size_per_gpu'})",
        fields,
        hint=gpu_hint(config, batch_divides),
        fixes=edits(config, batch_divides, ("data.train_batch_size", True), ("trainer.n_gpus_per_node", False)),
    )


@rule("GRPO-Q012", "error", (A + "ppo_micro_batch_size", A + "ppo_micro_batch_size_per_gpu", A + "use_dynamic_bsz"))
def actor_micro_batch_set_once(config: Any, ctx: Any) -> Iterator[Finding]:
    """Set exactly one of actor.ppo_micro_batch_size_per_gpu and the deprecated actor.ppo_micro_batch_size.

    Without dynamic batch size, verl's ActorConfig refuses a config with both (the global one is deprecated) or
    with neither (nothing sizes the micro-batches).
    """
    if config.dynamic:
        return
    glob, per_gpu = config[A + "ppo_micro_batch_size"], config[A + "ppo_micro_batch_size_per_gpu"]
    fields = (A + "ppo_micro_batch_size_per_gpu", A + "ppo_micro_batch_size")
    if glob is not None and per_gpu is not None:
        yield finding(
            "both actor.ppo_micro_batch_size and actor.ppo_micro_batch_size_per_gpu are set",
            fields,
            hint="remove the deprecated actor.ppo_micro_batch_size",
            fixes=(_unset(A + "ppo_micro_batch_size"),),
        )
    elif glob is None and per_gpu is None:
        yield finding(
            "neither actor.ppo_micro_batch_size_per_gpu nor actor.ppo_micro_batch_size is set, and "
            "use_dynamic_bsz is off",
            fields,
            hint="set actor.ppo_micro_batch_size_per_gpu (samples per forward pass on one GPU), or "
            "actor.use_dynamic_bsz=True with a token budget",
        )


def _unset(key: str) -> Any:
    from grpo_schema.engine.diagnostics import Fix

    return Fix(unset=(key,), safe=True, title=f"remove {key}")


@rule("GRPO-Q013", "error", (A + "loss_agg_mode",))
def loss_agg_mode_known(config: Any, ctx: Any) -> Iterator[Finding]:
    """actor.loss_agg_mode must be one of the modes verl implements.

    verl's ActorConfig refuses any other value before training starts.
    """
    mode = config[A + "loss_agg_mode"]
    if mode not in LOSS_AGG_MODES:
        yield finding(
            f"actor.loss_agg_mode {mode!r} is not one of {', '.join(LOSS_AGG_MODES)}",
            (A + "loss_agg_mode",),
            hint="token-mean is verl's default",
        )


@rule("GRPO-Q014", "error", ("data.train_batch_size", A + "ppo_mini_batch_size", A + "use_dynamic_bsz"))
def mini_batch_within_train_batch(config: Any, ctx: Any) -> Iterator[Finding]:
    """data.train_batch_size must be at least actor.ppo_mini_batch_size.

    Both count prompts: an RL step of train_batch_size prompts is split into mini-batches of ppo_mini_batch_size
    prompts, one optimizer step each. verl's ActorConfig.validate refuses a mini-batch larger than the batch (without
    dynamic batch size). Recipes written for verl 0.2 and earlier, where the mini-batch counted samples (prompts x
    n), often have it larger: divide it by rollout.n for the same optimizer step.
    """
    if config.dynamic:
        return
    prompts, mini = int(config["data.train_batch_size"]), int(config[A + "ppo_mini_batch_size"])
    if prompts < mini:
        n = config.n
        old = mini % n == 0 and mini // n <= prompts and n > 1
        hint = (
            f"if the recipe was written when the mini-batch counted samples, {mini} samples are "
            f"{mini // n} prompts at rollout.n={n}"
            if old
            else "the mini-batch counts prompts, as train_batch_size does"
        )
        fixes = ((_set(A + "ppo_mini_batch_size", mini // n),) if old else ()) + (
            _set(A + "ppo_mini_batch_size", prompts),
            _set("data.train_batch_size", mini),
        )
        yield finding(
            f"actor.ppo_mini_batch_size ({mini}) is larger than data.train_batch_size ({prompts})",
            ("data.train_batch_size", A + "ppo_mini_batch_size"),
            hint=hint,
            fixes=fixes,
        )


def _set(key: str, value: Any) -> Any:
    from grpo_schema.engine.diagnostics import Fix

    return Fix(set={key: value}, safe=False, title=f"set {key}={value}")


@rule(
    "GRPO-Q015",
    "error",
    (A + "ppo_micro_batch_size", A + "ppo_mini_batch_size", A + "use_dynamic_bsz", A + "ulysses_sequence_parallel_size")
    + _GPUS,
)
def deprecated_micro_batch_fits(config: Any, ctx: Any) -> Iterator[Finding]:
    """The deprecated global actor.ppo_micro_batch_size must divide the mini-batch and cover the GPUs.

    verl's ActorConfig.validate checks, when the global micro-batch is used: ppo_mini_batch_size is a multiple of
    it, and it times the actor's ulysses_sequence_parallel_size is at least the number of GPUs.
    """
    glob = config[A + "ppo_micro_batch_size"]
    if config.dynamic or glob is None or config[A + "ppo_micro_batch_size_per_gpu"] is not None:
        return
    glob, mini = int(glob), int(config[A + "ppo_mini_batch_size"])
    sp = int(config[A + "ulysses_sequence_parallel_size"] or 1)
    fields = (A + "ppo_micro_batch_size", A + "ppo_mini_batch_size")
    if glob > 0 and mini % glob:
        yield finding(
            f"actor.ppo_mini_batch_size ({mini}) is not a multiple of the deprecated "
            f"actor.ppo_micro_batch_size ({glob})",
            fields,
            hint="use actor.ppo_micro_batch_size_per_gpu instead (samples per GPU)",
        )
    elif glob * sp < config.n_gpus:
        yield finding(
            f"the deprecated actor.ppo_micro_batch_size ({glob}) x ulysses_sequence_parallel_size ({sp}) "
            f"is smaller than the {config.n_gpus} GPUs",
            fields + _GPUS,
            hint="use actor.ppo_micro_batch_size_per_gpu instead (samples per GPU)",
        )


@rule(
    "GRPO-Q016",
    "error",
    (A + "ulysses_sequence_parallel_size", A + "strategy", "actor_rollout_ref.model.use_remove_padding"),
)
def sequence_parallel_needs_remove_padding(config: Any, ctx: Any) -> Iterator[Finding]:
    """Ulysses sequence parallelism on the actor needs model.use_remove_padding=True.

    verl's FSDP actor config refuses actor.ulysses_sequence_parallel_size > 1 without it, before Ray starts.
    """
    sp = int(config[A + "ulysses_sequence_parallel_size"] or 1)
    if not config.megatron and sp > 1 and not config["actor_rollout_ref.model.use_remove_padding"]:
        yield finding(
            f"actor.ulysses_sequence_parallel_size is {sp} but model.use_remove_padding is off",
            (A + "ulysses_sequence_parallel_size", "actor_rollout_ref.model.use_remove_padding"),
            fixes=(_set("actor_rollout_ref.model.use_remove_padding", True),),
        )


def _needs_reference(config: Any) -> bool:
    return bool(config["algorithm.use_kl_in_reward"]) or bool(config[A + "use_kl_loss"])


@rule(
    "GRPO-Q017",
    "error",
    (
        REF + "log_prob_micro_batch_size",
        REF + "log_prob_micro_batch_size_per_gpu",
        R + "log_prob_micro_batch_size",
        R + "log_prob_micro_batch_size_per_gpu",
        A + "use_dynamic_bsz",
        A + "use_kl_loss",
        "algorithm.use_kl_in_reward",
    ),
)
def log_prob_micro_batch_set_once(config: Any, ctx: Any) -> Iterator[Finding]:
    """Set exactly one of log_prob_micro_batch_size_per_gpu and the deprecated log_prob_micro_batch_size, for the
    rollout and (when a reference policy is used) the reference.

    verl's validate_config refuses both set or neither set without dynamic batch size (actor.use_dynamic_bsz). The
    reference is checked only when it is used: a KL loss or a KL penalty in the reward.
    """
    if config.dynamic:
        return
    sections = (("rollout", R),) + ((("ref", REF),) if _needs_reference(config) else ())
    for name, prefix in sections:
        glob = config[prefix + "log_prob_micro_batch_size"]
        per_gpu = config[prefix + "log_prob_micro_batch_size_per_gpu"]
        fields = (prefix + "log_prob_micro_batch_size_per_gpu", prefix + "log_prob_micro_batch_size")
        if glob is None and per_gpu is None:
            yield finding(
                f"{name}.log_prob_micro_batch_size_per_gpu is not set (nor the deprecated "
                f"{name}.log_prob_micro_batch_size)",
                fields,
                hint="set it: samples per log-prob forward pass on one GPU",
            )
        elif glob is not None and per_gpu is not None:
            yield finding(
                f"both {name}.log_prob_micro_batch_size and {name}.log_prob_micro_batch_size_per_gpu are set",
                fields,
                hint="remove the deprecated global one",
                fixes=(_unset(prefix + "log_prob_micro_batch_size"),),
            )


@rule("GRPO-Q018", "error", (R + "val_kwargs.do_sample", R + "temperature"))
def validation_sampling_needs_temperature(config: Any, ctx: Any) -> Iterator[Finding]:
    """Sampling during validation (rollout.val_kwargs.do_sample) needs rollout.temperature > 0.

    verl's validate_config asserts it before training starts.
    """
    if config[R + "val_kwargs.do_sample"] and not float(config[R + "temperature"]) > 0:
        yield finding(
            f"rollout.val_kwargs.do_sample is on but rollout.temperature is {config[R + 'temperature']}",
            (R + "val_kwargs.do_sample", R + "temperature"),
            fixes=(_set(R + "temperature", 1.0),),
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
) + _GPUS


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
            fixes=(_unset("critic.ppo_micro_batch_size"),),
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
            fields + _GPUS,
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
            fixes=(_set(key, VLLM_MAX_LORA_RANK),),
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
            fixes=(_set(R + "name", "vllm"),),
        )
