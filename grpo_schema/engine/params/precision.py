"""Numeric precision and device."""

from __future__ import annotations

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams


class PrecisionParams(AreaParams):
    area = "precision"
    title = "Precision and device"
    summary = (
        "Mixed precision. TRL turns bf16 on unless fp16 is set, and bf16 needs a bf16-capable GPU unless "
        "use_cpu: whether that holds depends on the machine that runs the job, not on this file."
    )

    bf16: bool | None = Field(
        None,
        examples=[True],
        description="bfloat16 mixed precision. Unset: TRL uses true unless fp16 is true, which then needs a "
        "bf16-capable accelerator (or use_cpu: true) on the training machine.",
    )
    fp16: bool = Field(False, description="float16 mixed precision (with loss scaling). Not with bf16.")
    bf16_full_eval: bool = Field(False, description="Evaluate fully in bfloat16. Not with fp16_full_eval.")
    fp16_full_eval: bool = Field(False, description="Evaluate fully in float16. Not with bf16_full_eval.")
    tf32: bool | None = Field(
        None, description="Allow TF32 matrix maths (Ampere or newer NVIDIA GPUs only); null keeps PyTorch's default."
    )
    use_cpu: bool = Field(False, description="Train on the CPU even if an accelerator is present.")
