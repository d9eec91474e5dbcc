"""vLLM: mode-specific settings and the process layout."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.engine.rules import Finding, RuleContext, has_or_have, names_phrase, rule

SERVER_ONLY = ("vllm_server_base_url", "vllm_server_host", "vllm_server_port", "vllm_server_timeout", "vllm_group_port")
COLOCATE_ONLY = (
    "vllm_gpu_memory_utilization",
    "vllm_tensor_parallel_size",
    "vllm_enable_sleep_mode",
    "vllm_max_model_length",
)


@rule("GRPO-V001", "error", ("use_vllm", "vllm_mode", "vllm_tensor_parallel_size"))
def tensor_parallel_divides_world_size(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """In colocate mode, vllm_tensor_parallel_size must divide the number of processes.

    Each vLLM engine spans vllm_tensor_parallel_size training processes; the processes must split evenly into
    engines.
    """
    tp = config.vllm_tensor_parallel_size
    if config.use_vllm and config.vllm_mode == "colocate" and ctx.world_size % tp:
        sizes = [n for n in range(1, 65) if n % tp == 0][:8]
        yield Finding(
            f"vllm_tensor_parallel_size ({tp}) does not divide the world size ({ctx.world_size})",
            ("vllm_tensor_parallel_size",),
            hint=f"use a divisor of {ctx.world_size}, or world sizes {', '.join(map(str, sizes))}, ...",
        )


@rule("GRPO-V002", "warning", ("use_vllm", "vllm_mode"))
def mode_specific_settings(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A vLLM setting of the other mode has no effect.

    Server settings (host, port, base URL, timeouts) are only read in server mode; memory, tensor-parallel and
    sleep settings only in colocate mode.
    """
    if not config.use_vllm or ctx.release_fields is not None and "vllm_mode" not in ctx.release_fields:
        return  # before vllm_mode (TRL < 0.18) each release reads the vLLM keys it has: no other mode to speak of
    other = SERVER_ONLY if config.vllm_mode == "colocate" else COLOCATE_ONLY
    names = [n for n in other if n in ctx.explicit]
    if names:
        mode = (
            f"vllm_mode {config.vllm_mode}"
            if "vllm_mode" in ctx.explicit
            else f"vllm_mode {config.vllm_mode} (TRL {ctx.judged}'s default when vllm_mode is not set)"
        )
        other_mode = "server" if config.vllm_mode == "colocate" else "colocate"
        yield Finding(
            f"{names_phrase(names)} {has_or_have(names)} no effect in {mode}",
            tuple(names) + ("vllm_mode",),
            hint=f"remove {'it' if len(names) == 1 else 'them'}, or set vllm_mode: {other_mode}",
        )


@rule("GRPO-V003", "warning", ("use_vllm", "vllm_mode", "vllm_max_model_length", "max_completion_length"))
def vllm_context_holds_completion(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """vllm_max_model_length must exceed max_completion_length.

    vLLM's context holds the prompt and the completion; a context no longer than the completion leaves no room
    for prompts and vLLM fails or truncates.
    """
    limit, length = config.vllm_max_model_length, config.max_completion_length
    if config.use_vllm and limit is not None and length is not None and limit <= length:
        yield Finding(
            f"vllm_max_model_length ({limit}) leaves no room for prompts: max_completion_length is {length}",
            ("vllm_max_model_length", "max_completion_length"),
            hint=f"set vllm_max_model_length to the longest prompt plus {length}",
        )


@rule("GRPO-V004", "warning", ("use_vllm", "ds3_gather_for_generation"))
def vllm_needs_gathered_weights(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """ds3_gather_for_generation: false does not work with vLLM.

    vLLM needs the full weights to be pushed to it; only transformers generation can run on sharded ZeRO-3 weights.
    """
    if config.use_vllm and not config.ds3_gather_for_generation:
        yield Finding(
            "ds3_gather_for_generation is false, which vLLM generation does not support",
            ("ds3_gather_for_generation", "use_vllm"),
            hint="set ds3_gather_for_generation: true",
        )


@rule("GRPO-V005", "warning", ("use_vllm", "vllm_structured_outputs_regex"))
def vllm_settings_without_vllm(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """vLLM settings are set without use_vllm.

    Without use_vllm, completions come from transformers generate and the vllm_* settings are ignored.
    """
    names = [
        n for n in ("vllm_mode", "vllm_structured_outputs_regex", *SERVER_ONLY, *COLOCATE_ONLY) if n in ctx.explicit
    ]
    if not config.use_vllm and names:
        yield Finding(
            f"{', '.join(names[:4])}{', ...' if len(names) > 4 else ''} {has_or_have(names)} no effect "
            "without use_vllm",
            tuple(names),
            hint="set use_vllm: true, or remove the vllm_* keys",
        )


# Keys only server-era recipes (TRL < 0.18, one GPU set aside for vLLM) carry.
SERVER_ERA_KEYS = ("vllm_device", "vllm_dtype", "vllm_enable_prefix_caching")
SERVER_ERA_MEMORY = 0.5  # a share of the GPU a training process cannot give away next to the model it trains


def _server_era_signs(config: Any, ctx: RuleContext) -> list[str]:
    signs = [key for key in SERVER_ERA_KEYS if key in ctx.written]
    share = config.vllm_gpu_memory_utilization
    if "vllm_gpu_memory_utilization" in ctx.explicit and share is not None and share > SERVER_ERA_MEMORY:
        signs.append(f"vllm_gpu_memory_utilization {share:g}")
    size = ctx.world_size
    # 3, 7, 15, ...: a power of two less the GPU kept for vLLM. Supporting evidence only: on its own a process
    # count says nothing (and the batch fixes may well propose 7 processes).
    if signs and size > 1 and (size + 1) & size == 0:
        signs.append(f"{size} training processes")
    return signs


@rule("GRPO-V006", "warning", ("use_vllm", "vllm_mode", "vllm_gpu_memory_utilization"))
def server_era_recipe_now_colocates(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A recipe written for a separate vLLM GPU now colocates vLLM in every training process.

    vllm_mode defaulted to 'server' from TRL 0.18 and, before that, vLLM ran on a GPU of its own (vllm_device). Since
    TRL 1.0 the default is 'colocate': every training process starts its own vLLM engine and gives it
    vllm_gpu_memory_utilization of its GPU. A recipe that still carries vllm_device (or the other keys of that era),
    or gives vLLM more than half of a GPU's memory, was written for a GPU of its own; colocated, it runs out of
    memory (and a GPU kept out of num_processes sits idle). Set vllm_mode explicitly.
    """
    if not config.use_vllm or "vllm_mode" in ctx.explicit or config.vllm_mode != "colocate":
        return  # the judged release's default is server mode (TRL 0.18-0.29) or it has no vllm_mode at all
    signs = _server_era_signs(config, ctx)
    if signs:
        yield Finding(
            f"use_vllm is on without vllm_mode, so TRL {ctx.judged} colocates vLLM in every training process, but "
            f"this recipe looks written for a separate vLLM GPU ({', '.join(signs)})",
            ("use_vllm",) + (("vllm_gpu_memory_utilization",) if any(s.startswith("vllm_gpu") for s in signs) else ()),
            hint="set vllm_mode: server and run `trl vllm-serve` on the spare GPU, or vllm_mode: colocate "
            "with vllm_gpu_memory_utilization around 0.3",
        )
