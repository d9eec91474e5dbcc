"""Importance sampling: sequence- or token-level ratios, and the correction for vLLM's sampling mismatch."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import Float

IS_MODES = ("token_truncate", "token_mask", "sequence_truncate", "sequence_mask")


class ImportanceSamplingParams(AreaParams):
    area = "importance_sampling"
    title = "Importance sampling"
    summary = (
        "Ratios between the current and the sampling policy: their level, and the correction applied when "
        "vLLM's log-probs differ from the trainer's."
    )
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "importance_sampling_level": {
            "token": "One ratio per token (GRPO, DAPO).",
            "sequence": "One ratio per completion: exp of the mean token log-ratio (GSPO).",
        },
        "vllm_importance_sampling_mode": {
            "token_truncate": "Per token: clamp each ratio into [clip_min, clip_max].",
            "token_mask": "Per token: drop tokens whose ratio lies outside [clip_min, clip_max].",
            "sequence_truncate": "Per completion: clamp the product of its token ratios into [clip_min, clip_max].",
            "sequence_mask": "Per completion: drop completions whose ratio lies outside [clip_min, clip_max].",
        },
    }

    importance_sampling_level: Literal["token", "sequence"] = Field(
        "token",
        description="'token': one ratio per token. 'sequence': one ratio per completion, the exponential of the "
        "mean token log-ratio (GSPO).",
    )
    vllm_importance_sampling_correction: bool = Field(
        True,
        description="With vLLM, reweight the loss by the ratio between the trainer's and vLLM's probabilities of "
        "the sampled tokens (truncated or masked per vllm_importance_sampling_mode).",
    )
    vllm_importance_sampling_mode: Literal[IS_MODES] = Field(  # type: ignore[valid-type]
        "sequence_mask",
        description="How the vLLM correction ratio is used: *_truncate clamps it into [clip_min, clip_max]; "
        "*_mask zeroes completions or tokens whose ratio falls outside; token_* per token, "
        "sequence_* per completion (product of token ratios).",
    )
    vllm_importance_sampling_clip_min: Float | None = Field(
        None, examples=[0.5], ge=0, description="Lower bound of the vLLM correction ratio; null means no lower bound."
    )
    vllm_importance_sampling_clip_max: Float | None = Field(
        3.0, gt=0, description="Upper bound of the vLLM correction ratio; null means no upper bound."
    )
    vllm_importance_sampling_cap: Float | None = Field(
        None,
        gt=0,
        description="Deprecated since TRL 1.6: use vllm_importance_sampling_clip_max. When set it overrides "
        "vllm_importance_sampling_clip_max.",
    )
    off_policy_mask_threshold: Float | None = Field(
        None,
        examples=[0.5],
        gt=0,
        description="Drop completions with negative advantage whose mean log-ratio between the sampling policy and "
        "the current one exceeds this value (DeepSeek-V3.2 off-policy mask). null disables it.",
    )
