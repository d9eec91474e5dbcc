"""Distributed settings that depend on, or conflict with, the launch."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.engine.rules import Finding, RuleContext, rule

BUNDLED_ACCELERATE_CONFIGS = ("fsdp1", "fsdp2", "multi_gpu", "single_gpu", "zero1", "zero2", "zero3")
ACCELERATOR_CONFIG_KEYS = (
    "split_batches",
    "dispatch_batches",
    "even_batches",
    "use_seedable_sampler",
    "non_blocking",
    "gradient_accumulation_kwargs",
    "use_configured_state",
)


@rule("GRPO-W001", "error", ("fsdp", "deepspeed"))
def fsdp_or_deepspeed(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """FSDP and DeepSpeed cannot be combined."""
    if config.fsdp and config.deepspeed:
        yield Finding("fsdp and deepspeed are both set", ("fsdp", "deepspeed"), hint="choose one of them")


@rule("GRPO-W002", "error", ("fsdp",))
def fsdp_needs_several_processes(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """FSDP only works in distributed training.

    With one process transformers refuses fsdp. The world size is the declared one (--world-size or num_processes).
    """
    if config.fsdp and ctx.world_size == 1:
        yield Finding(
            "fsdp is set but the world size is 1",
            ("fsdp",),
            hint="launch several processes (num_processes), or remove fsdp",
        )


@rule("GRPO-W003", "error", ("parallelism_config",))
def parallelism_config_from_python_only(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """parallelism_config cannot be set from a YAML file.

    TRL 1.16 receives the mapping as a plain dict and fails (AttributeError); GRPO also supports no context or
    sequence parallelism.
    """
    if config.parallelism_config is not None:
        yield Finding(
            "parallelism_config cannot be given in a config file (TRL fails on a mapping here)",
            ("parallelism_config",),
            hint="remove it; build a ParallelismConfig in Python if you need one",
        )


@rule("GRPO-W004", "error", ("accelerator_config", "datasets", "streaming", "dataset_streaming"))
def accelerator_config_keys(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """accelerator_config takes accelerate's Accelerator settings only; dispatch_batches is not for streaming.

    Unknown keys fail with a TypeError; with a streamed dataset dispatch_batches must not be true.
    """
    settings = config.accelerator_config if isinstance(config.accelerator_config, dict) else {}
    for key in settings:
        if key not in ACCELERATOR_CONFIG_KEYS:
            yield Finding(
                f"accelerator_config.{key} is not an accelerate setting",
                ("accelerator_config",),
                hint="use one of " + ", ".join(ACCELERATOR_CONFIG_KEYS),
            )
    streaming = (config.streaming and config.datasets) or config.dataset_streaming
    if settings.get("dispatch_batches") and streaming:
        yield Finding(
            "accelerator_config.dispatch_batches cannot be true with a streamed dataset",
            ("accelerator_config",),
            hint="set dispatch_batches: false",
        )


@rule("GRPO-W005", "warning", ())
def accelerate_config_known(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """accelerate_config names a bundled config or a config file.

    `trl grpo` accepts fsdp1, fsdp2, multi_gpu, single_gpu, zero1, zero2, zero3 or a path to an accelerate YAML
    file; anything else stops the launcher.
    """
    name = ctx.launch.get("accelerate_config")
    if (
        isinstance(name, str)
        and name not in BUNDLED_ACCELERATE_CONFIGS
        and not name.endswith((".yaml", ".yml", ".json"))
    ):
        yield Finding(
            f"accelerate_config {name!r} is neither a bundled config nor a .yaml/.json file",
            ("accelerate_config",),
            hint="use one of " + ", ".join(BUNDLED_ACCELERATE_CONFIGS),
        )


@rule("GRPO-W006", "info", ())
def world_size_declared(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """The world size the batch rules used.

    grpo-config never probes the local machine: the world size is --world-size, else num_processes from the
    file, else 1. Recipes written for several GPUs are checked at that count.
    """
    if "num_processes" in ctx.launch and ctx.launch["num_processes"] != ctx.world_size:
        yield Finding(
            f"checked at world size {ctx.world_size} (--world-size) although num_processes is "
            f"{ctx.launch['num_processes']}",
            ("num_processes",),
        )
