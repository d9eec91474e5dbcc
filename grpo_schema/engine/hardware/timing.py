"""Run time: FLOPs per optimizer step and the time they take at a stated model-FLOPs utilisation (MFU).

FLOPs per token: 2 x active parameters forward, 4 x backward (2 without weight gradients, LoRA), one more
forward with activation checkpointing; attention adds 2 x layers x q_width x context per token forward (causal).
Per optimizer step: training on completions_per_optimizer_step sequences of prompt + completion tokens;
generation of generation_batch_size completions (prefill + one forward per new token) and the no-grad old and
reference log-prob passes, both in proportion of the generations that fall on one optimizer step.

The default MFU is low on purpose: a GRPO step is dominated by generation, which is bound by memory bandwidth,
not FLOP/s; whole-step utilisations of 10-20% are what such runs usually report. Override it with --mfu.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from grpo_schema.engine.hardware.memory import Setup
from grpo_schema.engine.hardware.models import ModelFacts

DEFAULT_MFU = 0.15


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
            return text + " (no peak FLOP/s for this hardware: no time estimate)"
        text += f"; about {self.step_seconds:,.1f} s a step at MFU {self.mfu:g}"
        if self.total_hours is not None:
            text += f", about {self.total_hours:,.1f} h for {self.total_steps:,} steps"
        return text


def forward_flops_per_token(model: ModelFacts, context: int) -> float:
    return 2 * model.active_params() + 2 * model.num_layers * model.q_width * context


def estimate_time(model: ModelFacts, s: Setup, plan: Any, hardware: Any, mfu: float,
                  max_steps: int | None = None) -> TimeEstimate:
    T = s.sequence_length
    completions = plan.completions_per_optimizer_step if plan is not None else s.micro_batch * s.world_size
    per_generation = plan.generation_batch_size if plan is not None else completions
    generations = plan.generations_per_optimizer_step if plan is not None else 1.0
    forward = forward_flops_per_token(model, T)
    backward = 2 * forward if not s.use_peft else forward
    recompute = forward if s.activation_checkpointing else 0
    training = completions * T * (forward + backward + recompute)
    # generation: the prompt once, then each completion token sees on average half the completion as context
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
    step = None if not peak else (training + generation + logprobs) / (hardware.gpus * peak * 1e12 * mfu)
    hours = step * total_steps / 3600 if step is not None and total_steps else None
    return TimeEstimate(mfu, tokens, training, generation, logprobs, step, total_steps, hours)
