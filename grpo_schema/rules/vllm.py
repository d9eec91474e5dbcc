"""vLLM: mode-specific settings and the process layout."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.rules import Finding, RuleContext, rule

SERVER_ONLY = ("vllm_server_base_url", "vllm_server_host", "vllm_server_port", "vllm_server_timeout",
               "vllm_group_port")
COLOCATE_ONLY = ("vllm_gpu_memory_utilization", "vllm_tensor_parallel_size", "vllm_enable_sleep_mode",
                 "vllm_max_model_length")


@rule("GRPO-V001", "error", ("use_vllm", "vllm_mode", "vllm_tensor_parallel_size"))
def tensor_parallel_divides_world_size(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """In colocate mode, vllm_tensor_parallel_size must divide the number of processes.

    Each vLLM engine spans vllm_tensor_parallel_size training processes; the processes must split evenly into
    engines.
    """
    tp = config.vllm_tensor_parallel_size
    if config.use_vllm and config.vllm_mode == "colocate" and ctx.world_size % tp:
        sizes = [n for n in range(1, 65) if n % tp == 0][:8]
        yield Finding(f"vllm_tensor_parallel_size ({tp}) does not divide the world size ({ctx.world_size})",
                      ("vllm_tensor_parallel_size",),
                      hint=f"use a divisor of {ctx.world_size}, or world sizes {', '.join(map(str, sizes))}, ...")


@rule("GRPO-V002", "warning", ("use_vllm", "vllm_mode"))
def mode_specific_settings(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A vLLM setting of the other mode has no effect.

    Server settings (host, port, base URL, timeouts) are only read in server mode; memory, tensor-parallel and
    sleep settings only in colocate mode.
    """
    if not config.use_vllm:
        return
    other = SERVER_ONLY if config.vllm_mode == "colocate" else COLOCATE_ONLY
    names = [n for n in other if n in ctx.explicit]
    if names:
        yield Finding(f"{', '.join(names)} has no effect in vllm_mode {config.vllm_mode}", tuple(names) + ("vllm_mode",),
                      hint="remove them, or switch vllm_mode")


@rule("GRPO-V003", "warning", ("use_vllm", "vllm_mode", "vllm_max_model_length", "max_completion_length"))
def vllm_context_holds_completion(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """vllm_max_model_length must exceed max_completion_length.

    vLLM's context holds the prompt and the completion; a context no longer than the completion leaves no room
    for prompts and vLLM fails or truncates.
    """
    limit, length = config.vllm_max_model_length, config.max_completion_length
    if config.use_vllm and limit is not None and length is not None and limit <= length:
        yield Finding(f"vllm_max_model_length ({limit}) leaves no room for prompts: max_completion_length is "
                      f"{length}", ("vllm_max_model_length", "max_completion_length"),
                      hint=f"set vllm_max_model_length to the longest prompt plus {length}")


@rule("GRPO-V004", "warning", ("use_vllm", "ds3_gather_for_generation"))
def vllm_needs_gathered_weights(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """ds3_gather_for_generation: false does not work with vLLM.

    vLLM needs the full weights to be pushed to it; only transformers generation can run on sharded ZeRO-3 weights.
    """
    if config.use_vllm and not config.ds3_gather_for_generation:
        yield Finding("ds3_gather_for_generation is false, which vLLM generation does not support",
                      ("ds3_gather_for_generation", "use_vllm"), hint="set ds3_gather_for_generation: true")


@rule("GRPO-V005", "warning", ("use_vllm", "vllm_structured_outputs_regex"))
def vllm_settings_without_vllm(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """vLLM settings are set without use_vllm.

    Without use_vllm, completions come from transformers generate and the vllm_* settings are ignored.
    """
    names = [n for n in ("vllm_mode", "vllm_structured_outputs_regex", *SERVER_ONLY, *COLOCATE_ONLY)
             if n in ctx.explicit]
    if not config.use_vllm and names:
        yield Finding(f"{', '.join(names[:4])}{', ...' if len(names) > 4 else ''} has no effect without use_vllm",
                      tuple(names), hint="set use_vllm: true, or remove the vllm_* keys")
