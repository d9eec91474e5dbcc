"""Run time of one optimizer step: generation from memory bandwidth, training and scoring from FLOPs.

Generation (docs/planner.md): decoding is bound by memory bandwidth, not FLOP/s. Each decoded token of a batch
reads the generating GPU's share of the weights once and every sequence's KV cache so far, so one decode step of
`rows` sequences takes

    max((weight bytes / tp + rows x context x KV bytes per token / tp) / (bandwidth x BANDWIDTH_EFFICIENCY),
        rows x 2 x active parameters / tp / (peak x DECODE_MFU)) + a per-step overhead

(the scheduler, sampling and kernel launches: vLLM's CUDA graphs keep it small, transformers' generate does not),
and a batch takes max_completion_length steps (it runs until its longest completion ends). The prompts' prefill is
FLOP bound. The GPUs that generate are the training processes (transformers, vLLM colocate) or the vLLM
server's GPUs (the declared GPUs the training processes do not use), each server instance taking its share of the
generation batch. A generation batch larger than a colocated vLLM's KV cache is decoded in rounds.

Training and the no-grad old/reference log-prob passes are FLOP bound and run on the training processes only:
2 x active parameters forward per token (plus attention, 2 x layers x q_width x context), 4 x backward (2 with
LoRA, no weight gradients), one more forward with activation checkpointing; the time is the FLOPs over the
training GPUs' peak at a model-FLOPs utilisation (`--mfu`, default DEFAULT_MFU).

The step is the sum: TRL 1.16 and grpo_runtime generate synchronously (training waits for the completions).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from grpo_schema.engine.hardware.generation_memory import kv_bytes_per_token
from grpo_schema.engine.hardware.memory import Setup
from grpo_schema.engine.hardware.models import ModelFacts

DEFAULT_MFU = 0.3  # training and scoring: what GRPO training steps on H100-class GPUs usually reach
BANDWIDTH_EFFICIENCY = 0.7  # of the datasheet bandwidth, that decode kernels sustain
DECODE_MFU = 0.5  # when a decode step is compute bound (large batches)
PREFILL_MFU = 0.5
STEP_OVERHEAD_S = {"vllm": 0.003, "transformers": 0.02}  # per decode step
SYNC_BANDWIDTH = 25e9  # bytes/s: the policy's weights sent to a vLLM server after each optimizer step


@dataclass(frozen=True)
class TimeEstimate:
    mfu: float
    tokens_per_step: int
    training_flops: float
    generation_flops: float
    logprob_flops: float
    step_seconds: float | None
    total_steps: int | None
    total_hours: float | None
    generation_seconds: float | None = None
    training_seconds: float | None = None
    generating_gpus: int = 0
    training_gpus: int = 0

    @property
    def flops_per_step(self) -> float:
        return self.training_flops + self.generation_flops + self.logprob_flops

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["flops_per_step"] = self.flops_per_step
        return out

    def describe(self) -> str:
        text = f"{self.flops_per_step:.3g} FLOPs and {self.tokens_per_step:,} tokens per optimizer step"
        if self.step_seconds is None:
            return text + " (no peak FLOP/s or bandwidth for this hardware: no time estimate)"
        text += (
            f"; about {self.step_seconds:,.1f} s a step (generation {self.generation_seconds:,.1f} s on "
            f"{self.generating_gpus} GPU(s) from memory bandwidth, training and scoring "
            f"{self.training_seconds:,.1f} s on {self.training_gpus} at MFU {self.mfu:g})"
        )
        if self.total_hours is not None:
            text += f", about {self.total_hours:,.1f} h for {self.total_steps:,} steps"
        return text


def forward_flops_per_token(model: ModelFacts, context: int) -> float:
    return 2 * model.active_params() + 2 * model.num_layers * model.q_width * context


def generation_seconds(
    model: ModelFacts, s: Setup, hardware: Any, batch: int, kv_rounds: int = 1
) -> tuple[float | None, int]:
    """(seconds to generate one generation batch of `batch` completions, GPUs that generate)."""
    acc = hardware.accelerator
    if not acc.peak_tflops or not acc.bandwidth_tbs:
        return None, 0
    tp = max(s.vllm_tensor_parallel_size, 1) if s.use_vllm else 1
    if s.use_vllm and s.vllm_mode == "server":
        gpus = max(hardware.gpus - s.world_size, tp)
    else:
        gpus = s.world_size
    instances = max(gpus // tp, 1)
    rows = math.ceil(batch / instances / kv_rounds)
    bandwidth = acc.bandwidth_tbs * 1e12 * BANDWIDTH_EFFICIENCY
    peak = acc.peak_tflops * 1e12
    weights = 2 * model.total_params() / tp
    kv = kv_bytes_per_token(model) / tp
    context = s.prompt_length + s.completion_length / 2
    read = (weights + rows * context * kv) / bandwidth
    compute = rows * 2 * model.active_params() / tp / (peak * DECODE_MFU)
    overhead = STEP_OVERHEAD_S["vllm" if s.use_vllm else "transformers"]
    decode = s.completion_length * (max(read, compute) + overhead)
    prefill = rows * s.prompt_length * forward_flops_per_token(model, s.prompt_length) / tp / (peak * PREFILL_MFU)
    sync = 2 * model.total_params() / SYNC_BANDWIDTH if s.use_vllm and s.vllm_mode == "server" else 0.0
    return kv_rounds * (decode + prefill) + sync, gpus


def estimate_time(
    model: ModelFacts, s: Setup, plan: Any, hardware: Any, mfu: float, max_steps: int | None = None, kv_rounds: int = 1
) -> TimeEstimate:
    T = s.sequence_length
    completions = plan.completions_per_optimizer_step if plan is not None else s.micro_batch * s.world_size
    per_generation = plan.generation_batch_size if plan is not None else completions
    generations = plan.generations_per_optimizer_step if plan is not None else 1.0
    forward = forward_flops_per_token(model, T)
    backward = 2 * forward if not s.use_peft else forward
    recompute = forward if s.activation_checkpointing else 0
    training = completions * T * (forward + backward + recompute)
    prefill = s.prompt_length * forward_flops_per_token(model, s.prompt_length)
    decode = s.completion_length * forward_flops_per_token(model, s.prompt_length + s.completion_length // 2)
    generation = generations * per_generation * (prefill + decode)
    passes = int(s.reference) + int(s.old_logprobs)
    logprobs = generations * per_generation * T * forward * passes
    tokens = int(completions * T)
    total_steps = max_steps
    if plan is not None and plan.total_optimizer_steps is not None:
        total_steps = plan.total_optimizer_steps
    peak = hardware.accelerator.peak_tflops
    one_batch, generating = generation_seconds(model, s, hardware, per_generation, kv_rounds)
    step = gen = train = None
    if peak and one_batch is not None:
        gen = generations * one_batch
        train = (training + logprobs) / (s.world_size * peak * 1e12 * mfu)
        step = gen + train
    hours = step * total_steps / 3600 if step is not None and total_steps else None
    return TimeEstimate(
        mfu, tokens, training, generation, logprobs, step, total_steps, hours, gen, train, generating, s.world_size
    )
