"""verl's own checks of the actor's batch before Ray starts: validate_config's batch divisibility (with Megatron's
parallel sizes), ActorConfig's micro-batch and mini-batch checks and loss aggregation mode, the log-prob micro-batch
pairs of the rollout and the reference, and sequence parallelism's remove_padding."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.dialects.verl.config import REF, A, R
from grpo_schema.dialects.verl.rules.base import GPUS, Finding, edits, finding, gpu_hint, rule, set_fix, unset_fix

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


@rule("GRPO-Q010", "error", GPUS + _MEGATRON + (A + "use_dynamic_bsz",))
def megatron_parallel_divides_gpus(config: Any, ctx: Any) -> Iterator[Finding]:
    """Under Megatron, the GPUs must be a multiple of TP x PP x CP.

    verl's validate_config asserts it before anything starts (without dynamic batch size): the data-parallel size is
    the GPUs over the model-parallel group, and a remainder has no place.
    """
    if not config.dynamic and not megatron_divides(config):
        yield finding(
            f"the {config.n_gpus} GPUs are not a multiple of Megatron's TP x PP x CP ({config.model_parallel})",
            GPUS + _MEGATRON[1:],
            hint=gpu_hint(config, megatron_divides),
            fixes=edits(config, megatron_divides, ("trainer.n_gpus_per_node", True)),
        )


@rule(
    "GRPO-Q011",
    "error",
    GPUS + _MEGATRON + ("data.train_batch_size", R + "n", A + "use_dynamic_bsz", A + "ppo_micro_batch_size_per_gpu"),
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
    fields = ("data.train_batch_size", R + "n") + GPUS
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
            fixes=(unset_fix(A + "ppo_micro_batch_size"),),
        )
    elif glob is None and per_gpu is None:
        yield finding(
            "neither actor.ppo_micro_batch_size_per_gpu nor actor.ppo_micro_batch_size is set, and "
            "use_dynamic_bsz is off",
            fields,
            hint="set actor.ppo_micro_batch_size_per_gpu (samples per forward pass on one GPU), or "
            "actor.use_dynamic_bsz=True with a token budget",
        )


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
        fixes = ((set_fix(A + "ppo_mini_batch_size", mini // n),) if old else ()) + (
            set_fix(A + "ppo_mini_batch_size", prompts),
            set_fix("data.train_batch_size", mini),
        )
        yield finding(
            f"actor.ppo_mini_batch_size ({mini}) is larger than data.train_batch_size ({prompts})",
            ("data.train_batch_size", A + "ppo_mini_batch_size"),
            hint=hint,
            fixes=fixes,
        )


@rule(
    "GRPO-Q015",
    "error",
    (A + "ppo_micro_batch_size", A + "ppo_mini_batch_size", A + "use_dynamic_bsz", A + "ulysses_sequence_parallel_size")
    + GPUS,
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
            fields + GPUS,
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
            fixes=(set_fix("actor_rollout_ref.model.use_remove_padding", True),),
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
                fixes=(unset_fix(prefix + "log_prob_micro_batch_size"),),
            )
