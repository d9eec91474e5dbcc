"""Memory of the generation phase: vLLM colocated (its share of the GPU, or on a CPU its own weights and KV
cache), or transformers' generate (the KV cache, ZeRO-3's gathered weights, the logits of one step); nothing
here for a vLLM server, which generates on GPUs of its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grpo_schema.engine.hardware.accelerators import GIB
from grpo_schema.engine.hardware.models import ModelFacts

if TYPE_CHECKING:
    from grpo_schema.engine.hardware.memory import MemoryEstimate, Setup

VLLM_RESERVE = 1.0 * GIB  # vLLM's CUDA graphs and profiled activations, taken from its share before the KV cache


def kv_bytes_per_token(model: ModelFacts, dtype_bytes: int = 2) -> int:
    return 2 * model.num_layers * model.kv_width * dtype_bytes


def generation_parts(model: ModelFacts, s: Setup, est: MemoryEstimate, capacity: float | None, add) -> None:
    rows, length = s.generation_rows, s.sequence_length
    if s.use_vllm and s.vllm_mode == "colocate" and s.device == "cpu":
        # vLLM's CPU backend: its own copy of the weights in the checkpoint's dtype and a KV cache of
        # VLLM_CPU_KVCACHE_SPACE, written in full when the engine starts (measured: memprobe in .venv-vllm)
        est.vllm_weights = s.weight_bytes * model.total_params()
        cache = s.vllm_cpu_kv_cache_gib * GIB
        est.kv_cache_tokens = int(cache // kv_bytes_per_token(model, s.weight_bytes))
        est.kv_cache_tokens_needed = rows * (s.vllm_max_model_length or length)
        add(
            "vllm",
            est.vllm_weights + cache,
            "held",
            f"vLLM on the CPU: weights {est.vllm_weights / GIB:.2f} GiB, KV cache {s.vllm_cpu_kv_cache_gib} GiB "
            "(VLLM_CPU_KVCACHE_SPACE)",
        )
        return
    if s.use_vllm and s.vllm_mode == "colocate":
        tp = max(s.vllm_tensor_parallel_size, 1)
        share = s.vllm_memory_utilization * (capacity or 0)
        est.vllm_weights = 2 * model.total_params() / tp
        cache = share - est.vllm_weights - VLLM_RESERVE
        est.kv_cache_tokens = max(int(cache // (kv_bytes_per_token(model) / tp)), 0)
        est.kv_cache_tokens_needed = rows * tp * (s.vllm_max_model_length or length)
        add(
            "vllm",
            share,
            "generation" if s.vllm_sleep else "held",
            f"vllm_gpu_memory_utilization x GPU memory: weights {est.vllm_weights / GIB:.1f} GiB, KV cache "
            f"{max(cache, 0) / GIB:.1f} GiB" + (" (released while training: sleep mode)" if s.vllm_sleep else ""),
        )
        return
    if s.use_vllm:  # server mode: generation runs on other GPUs
        return
    kv = rows * length * kv_bytes_per_token(model, s.compute_bytes)
    gathered = 0.0
    if s.strategy == "zero3":
        gathered = 2 * model.total_params() * (1 - 1 / s.world_size)
    add("kv cache", kv, "generation", f"transformers generate: {rows} sequences x {length} tokens")
    if gathered:
        add("gathered weights", gathered, "generation", "ZeRO-3 gathers the whole model to generate")
    add("generation logits", rows * model.vocab_size * 4 * 2, "generation", "")
