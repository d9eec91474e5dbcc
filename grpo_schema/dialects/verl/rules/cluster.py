"""The checks verl runs only after the cluster is allocated (inside Ray workers), moved before launch.

Each is computed from the declared GPUs (trainer.n_gpus_per_node x trainer.nnodes) and the parallel sizes, with
the same arithmetic as verl's worker code: the mini-batch split over data-parallel ranks (TrainingWorker's
train_mini_batch), the micro-batches of a rank (prepare_micro_batches), the rollout device mesh, equal chunks for
the worker group (DataProto.chunk), the worker's own asserts on dynamic batch size, and the v1 trainers' asserts.
"""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.dialects.verl.config import A, R
from grpo_schema.dialects.verl.rules.base import Finding, edits, finding, gpu_hint, rule

_GPUS = ("trainer.n_gpus_per_node", "trainer.nnodes")
_PARALLEL = (
    A + "strategy",
    A + "megatron.tensor_model_parallel_size",
    A + "megatron.pipeline_model_parallel_size",
    A + "megatron.context_parallel_size",
    A + "fsdp_config.ulysses_sequence_parallel_size",
    A + "ulysses_sequence_parallel_size",
)
_MINI = (A + "ppo_mini_batch_size", R + "n")


def parallel_fits(config: Any) -> bool:
    group = config.model_parallel * config.sequence_parallel
    return config.n_gpus % group == 0 and config.n_gpus >= group


def mini_samples(config: Any) -> int:
    """Samples per optimizer step: the mini-batch counts prompts, and verl multiplies it by rollout.n."""
    return int(config[A + "ppo_mini_batch_size"]) * config.n


def mini_fills_ranks(config: Any) -> bool:
    return parallel_fits(config) and mini_samples(config) % config.dp == 0 and mini_samples(config) >= config.dp


def micro_divides_rank_mini(config: Any) -> bool:
    micro = int(config[A + "ppo_micro_batch_size_per_gpu"])
    return mini_fills_ranks(config) and micro > 0 and (mini_samples(config) // config.dp) % micro == 0


def rollout_fits(config: Any) -> bool:
    return config.n_gpus % config.rollout_group == 0


def chunks_equal(config: Any) -> bool:
    return parallel_fits(config) and (int(config["data.train_batch_size"]) * config.n) % config.dp == 0


@rule("GRPO-Q030", "error", _MINI + _GPUS + _PARALLEL)
def mini_batch_fills_data_parallel_ranks(config: Any, ctx: Any) -> Iterator[Finding]:
    """ppo_mini_batch_size x rollout.n must be a multiple of the data-parallel size, and at least it.

    verl multiplies the mini-batch (prompts) by rollout.n, then splits it evenly over the actor's data-parallel ranks
    (the GPUs over TP x PP x CP under Megatron, over the Ulysses size under FSDP). The worker asserts this only on the
    cluster, inside Ray (`mini_batch_size ... get_data_parallel_size()`, in older releases `ppo_mini_batch_size 0
    should be larger than 0 after normalization`).
    """
    if not parallel_fits(config):
        yield finding(
            f"the {config.n_gpus} GPUs do not split into whole model-parallel groups of "
            f"{config.model_parallel * config.sequence_parallel}",
            _GPUS + _PARALLEL,
            hint=gpu_hint(config, parallel_fits),
        )
        return
    if mini_fills_ranks(config):
        return
    samples, dp = mini_samples(config), config.dp
    what = "smaller than" if samples < dp else "not a multiple of"
    yield finding(
        f"a mini-batch is ppo_mini_batch_size x rollout.n = {config[A + 'ppo_mini_batch_size']} x "
        f"{config.n} = {samples} samples, {what} the {dp} data-parallel ranks; verl stops on this "
        "inside the Ray workers, after the cluster is allocated",
        _MINI + _GPUS,
        hint=gpu_hint(config, mini_fills_ranks),
        fixes=edits(config, mini_fills_ranks, (A + "ppo_mini_batch_size", True), ("trainer.n_gpus_per_node", False)),
    )


@rule("GRPO-Q031", "error", _MINI + _GPUS + _PARALLEL + (A + "ppo_micro_batch_size_per_gpu", A + "use_dynamic_bsz"))
def micro_batch_divides_rank_mini_batch(config: Any, ctx: Any) -> Iterator[Finding]:
    """A rank's share of the mini-batch must be a whole number of micro-batches of ppo_micro_batch_size_per_gpu.

    Each rank gets ppo_mini_batch_size x rollout.n / data-parallel size samples per optimizer step and runs them in
    micro-batches of ppo_micro_batch_size_per_gpu (gradient accumulation). verl's prepare_micro_batches asserts the
    division on the cluster (without dynamic batch size).
    """
    micro = config[A + "ppo_micro_batch_size_per_gpu"]
    if config.dynamic or micro is None or not mini_fills_ranks(config) or micro_divides_rank_mini(config):
        return
    per_rank = mini_samples(config) // config.dp
    yield finding(
        f"each of the {config.dp} data-parallel ranks gets {mini_samples(config)} / {config.dp} = "
        f"{per_rank} samples per optimizer step, not a multiple of ppo_micro_batch_size_per_gpu ({micro})",
        (A + "ppo_micro_batch_size_per_gpu",) + _MINI + _GPUS,
        hint=f"micro-batch sizes that divide {per_rank}: "
        f"{', '.join(str(d) for d in range(1, per_rank + 1) if per_rank % d == 0)}",
        fixes=edits(
            config,
            micro_divides_rank_mini,
            (A + "ppo_micro_batch_size_per_gpu", False),
            (A + "ppo_mini_batch_size", True),
        ),
    )


@rule(
    "GRPO-Q032",
    "error",
    _GPUS + (R + "tensor_model_parallel_size", R + "data_parallel_size", R + "pipeline_model_parallel_size"),
)
def rollout_parallel_divides_gpus(config: Any, ctx: Any) -> Iterator[Finding]:
    """The GPUs must be a multiple of the rollout's TP x DP x PP.

    Each inference engine spans rollout.tensor_model_parallel_size x data_parallel_size x
    pipeline_model_parallel_size GPUs, and the worker asserts the GPUs split into whole engines only on the cluster
    (`rollout world_size ... is not divisible by infer_world_size`). verl's default rollout TP is 2, so a one-GPU run
    fails unless it sets tensor_model_parallel_size=1.
    """
    if rollout_fits(config):
        return
    tp_written = config.written(R + "tensor_model_parallel_size")
    note = "" if tp_written else " (rollout.tensor_model_parallel_size is verl's default 2: it is not set)"
    yield finding(
        f"the {config.n_gpus} GPUs are not a multiple of the rollout's TP x DP x PP = {config.rollout_group}{note}",
        (R + "tensor_model_parallel_size",) + _GPUS,
        hint=gpu_hint(config, rollout_fits),
        fixes=edits(config, rollout_fits, (R + "tensor_model_parallel_size", False), ("trainer.n_gpus_per_node", True)),
    )


@rule("GRPO-Q033", "error", ("data.train_batch_size", R + "n") + _GPUS + _PARALLEL + (A + "use_dynamic_bsz",))
def batch_splits_into_equal_chunks(config: Any, ctx: Any) -> Iterator[Finding]:
    """data.train_batch_size x rollout.n must split into equal chunks over the actor's data-parallel ranks.

    The worker group receives the RL batch split evenly over its ranks (DataProto.chunk): `only support equal chunk`
    otherwise, on the cluster. Without dynamic batch size verl's own parse-time check covers this under FSDP; with
    dynamic batch size, or under Megatron, it is checked only here.
    """
    if not parallel_fits(config) or chunks_equal(config):
        return
    samples = int(config["data.train_batch_size"]) * config.n
    yield finding(
        f"the RL batch of {samples} samples (train_batch_size x rollout.n) does not split into "
        f"{config.dp} equal chunks, one per data-parallel rank",
        ("data.train_batch_size", R + "n") + _GPUS,
        hint=gpu_hint(config, chunks_equal),
        fixes=edits(config, chunks_equal, ("data.train_batch_size", True)),
    )


@rule("GRPO-Q034", "error", (A + "use_dynamic_bsz", R + "log_prob_use_dynamic_bsz"))
def dynamic_batch_on_actor_and_rollout_alike(config: Any, ctx: Any) -> Iterator[Finding]:
    """actor.use_dynamic_bsz and rollout.log_prob_use_dynamic_bsz must agree.

    The actor-rollout worker asserts they are equal when it builds the model, on the cluster. The rollout's follows
    the actor's unless it is set.
    """
    actor, rollout = bool(config[A + "use_dynamic_bsz"]), bool(config[R + "log_prob_use_dynamic_bsz"])
    if actor != rollout:
        yield finding(
            f"actor.use_dynamic_bsz is {str(actor).lower()} but rollout.log_prob_use_dynamic_bsz is "
            f"{str(rollout).lower()}",
            (R + "log_prob_use_dynamic_bsz", A + "use_dynamic_bsz"),
            fixes=edits_set(R + "log_prob_use_dynamic_bsz", actor),
        )


def edits_set(key: str, value: Any) -> tuple[Any, ...]:
    from grpo_schema.engine.diagnostics import Fix

    return (Fix(set={key: value}, safe=False, title=f"set {key}={value}"),)


@rule(
    "GRPO-Q035",
    "error",
    (
        A + "use_dynamic_bsz",
        A + "ppo_micro_batch_size_per_gpu",
        A + "ppo_micro_batch_size",
        R + "log_prob_micro_batch_size_per_gpu",
        R + "log_prob_micro_batch_size",
    ),
)
def worker_needs_per_gpu_micro_batches(config: Any, ctx: Any) -> Iterator[Finding]:
    """Without dynamic batch size, verl 0.9's worker needs the per-GPU micro-batch sizes themselves.

    The parse-time check accepts the deprecated global actor.ppo_micro_batch_size and
    rollout.log_prob_micro_batch_size, but the actor-rollout worker asserts the *_per_gpu sizes are set when it
    builds the model, on the cluster.
    """
    if config.dynamic:
        return
    for key, old in (
        (A + "ppo_micro_batch_size_per_gpu", A + "ppo_micro_batch_size"),
        (R + "log_prob_micro_batch_size_per_gpu", R + "log_prob_micro_batch_size"),
    ):
        if config[key] is None and config[old] is not None:
            yield finding(
                f"{key.split('.', 1)[1]} is not set (only the deprecated {old.rsplit('.', 1)[1]}); the "
                "worker needs the per-GPU size",
                (key, old),
                hint=f"set {key} to the samples per GPU and remove {old}",
            )


@rule(
    "GRPO-Q036",
    "error",
    (
        "trainer.use_v1",
        "trainer.v1.trainer_mode",
        "trainer.v1.separate_async.parameter_sync_step",
        "data.train_batch_size",
        A + "ppo_mini_batch_size",
    ),
)
def separate_async_sync_step(config: Any, ctx: Any) -> Iterator[Finding]:
    """In the v1 separate-async trainer, data.train_batch_size must equal parameter_sync_step x ppo_mini_batch_size.

    The trainer asserts it when it starts (after Ray is up).
    """
    if not (config["trainer.use_v1"] and config["trainer.v1.trainer_mode"] == "separate_async"):
        return
    step, mini = int(config["trainer.v1.separate_async.parameter_sync_step"]), int(config[A + "ppo_mini_batch_size"])
    if int(config["data.train_batch_size"]) != step * mini:
        yield finding(
            f"data.train_batch_size ({config['data.train_batch_size']}) is not parameter_sync_step x "
            f"ppo_mini_batch_size = {step} x {mini} = {step * mini}",
            ("data.train_batch_size", "trainer.v1.separate_async.parameter_sync_step", A + "ppo_mini_batch_size"),
            fixes=edits_set("data.train_batch_size", step * mini),
        )


@rule("GRPO-Q037", "error", ("algorithm.filter_groups.enable", "algorithm.filter_groups.metric", "trainer.use_v1"))
def dapo_filter_needs_metric(config: Any, ctx: Any) -> Iterator[Finding]:
    """DAPO's group filtering (algorithm.filter_groups.enable) needs algorithm.filter_groups.metric.

    The v1 trainer refuses it when it starts (after Ray is up): the metric says which groups are all alike.
    """
    if config["algorithm.filter_groups.enable"] and not config["algorithm.filter_groups.metric"]:
        yield finding(
            "algorithm.filter_groups.enable is on but algorithm.filter_groups.metric is not set",
            ("algorithm.filter_groups.metric", "algorithm.filter_groups.enable"),
            hint="DAPO filters on the accuracy: metric=acc (or seq_reward, seq_final_reward)",
            fixes=edits_set("algorithm.filter_groups.metric", "acc"),
        )
