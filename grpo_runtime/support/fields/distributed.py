"""What grpo_runtime does with the fields of processes, DDP, FSDP and DeepSpeed."""

from __future__ import annotations

from grpo_runtime.common import Setting, Support, honoured, ignored, refuse_if, refused, warn_if, warned
from grpo_runtime.distributed.accelerate import accelerator_settings, refusals, sharding_warnings
from grpo_schema.engine.codes import U_FEATURE, U_NO_EFFECT, U_SHARDING, U_SPEED_ONLY


def _accelerator(s: Setting) -> dict:
    return accelerator_settings(s.config)


def _sharding_refusals(s: Setting) -> list[str]:
    return refusals(s.config, s.launch)


def _sharding_warnings(s: Setting) -> list[str]:
    return sharding_warnings(s.config, s.launch, s.running if s.command == "train" else s.world_size)


FIELDS: dict[str, Support] = {
    "accelerator_config": honoured(
        "setup.new_accelerator: passed to accelerate (dataloader settings, gradient_accumulation_kwargs); "
        "even_batches deals the eval batches (evaluate.py), sync_each_batch syncs gradients every micro-step",
        refuse_if(
            lambda s: _accelerator(s).get("split_batches") and s.world_size > 1,
            "split_batches: true splits each batch over the processes, which changes the prompts each "
            "process generates for; grpo_runtime deals them as TRL does without it",
            "remove split_batches (per_device_train_batch_size is per process)",
            U_FEATURE,
        ),
        refuse_if(
            lambda s: "num_steps" in (_accelerator(s).get("gradient_accumulation_kwargs") or {}),
            "gradient_accumulation_kwargs.num_steps replaces gradient_accumulation_steps",
            "set gradient_accumulation_steps instead",
            U_FEATURE,
        ),
        warn_if(
            lambda s: _accelerator(s).get("split_batches") is True and s.world_size == 1,
            "split_batches cannot change a one-process run",
            U_NO_EFFECT,
        ),
    ),
    "average_tokens_across_devices": ignored(
        "GRPOTrainer normalises its loss itself (num_items_in_batch over all "
        "processes) and turns the HF scaling off; TRL 1.16 ignores it too"
    ),
    "data_seed": ignored("GRPOTrainer's sampler is seeded with seed; TRL 1.16 ignores data_seed"),
    "ddp_backend": honoured("setup.new_accelerator (the process group's backend)"),
    "ddp_broadcast_buffers": honoured("setup.new_accelerator (DistributedDataParallelKwargs)"),
    "ddp_bucket_cap_mb": honoured("setup.new_accelerator (DistributedDataParallelKwargs)"),
    "ddp_find_unused_parameters": honoured(
        "setup.new_accelerator (DistributedDataParallelKwargs; unset: "
        "on unless activation checkpointing, as the HF trainer decides)"
    ),
    "ddp_static_graph": honoured("setup.new_accelerator (DistributedDataParallelKwargs)"),
    "ddp_timeout": honoured("setup.new_accelerator (the process group's timeout, InitProcessGroupKwargs)"),
    "deepspeed": honoured(
        'sharding.accelerator_plugins: accelerate\'s DeepSpeed plugin (ZeRO-1/2/3, its "auto" values filled from '
        "the run); the launch keys' sharding is checked here too",
        refuse_if(
            lambda s: bool(_sharding_refusals(s)),
            lambda s: "; ".join(m.removeprefix("deepspeed: ") for m in _sharding_refusals(s)),
            "fix the file or setting named, or run the config with `trl grpo`",
            U_SHARDING,
        ),
        warn_if(lambda s: bool(_sharding_warnings(s)), lambda s: "; ".join(_sharding_warnings(s)), U_NO_EFFECT),
    ),
    "do_predict": ignored("a script switch no GRPO script reads; TRL 1.16 ignores it too"),
    "do_train": ignored("a script switch; GRPO always trains, and TRL 1.16 ignores it too"),
    "ds3_gather_for_generation": warned(
        "under ZeRO-3 generation gathers each layer's parameters as it runs; false "
        "(TRL: generate from the shards) changes only memory and speed",
        U_SPEED_ONLY,
        when=lambda s: not s.config.ds3_gather_for_generation,
    ),
    "fsdp": honoured(
        "sharding.accelerator_plugins: accelerate's FSDP2 plugin (full shard; a version 1 request "
        "runs as FSDP2, with a warning)"
    ),
    "fsdp_config": honoured("distributed.fsdp_plugin_kwargs: the plugin's settings (wrap policy, offload, ...)"),
    "full_determinism": honoured(
        "setup.seed_everything: deterministic torch algorithms and the environment variables transformers sets"
    ),
    "ignore_bias_buffers": ignored("read by TRL's DPO script only; `trl grpo` ignores it"),
    "local_rank": ignored("the launcher's LOCAL_RANK decides; TRL 1.16 ignores the field too"),
    "parallelism_config": refused(
        "context, tensor or sequence parallelism (accelerate's ParallelismConfig) is "
        "not run; in a file the validator refuses it already (GRPO-W003)",
        "remove parallelism_config",
        U_SHARDING,
    ),
    "seed": honoured("setup.build_parts (seed, then seed + rank for sampling), sampler.PromptOrder"),
}
