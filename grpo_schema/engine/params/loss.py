"""The policy loss: which objective, its clipping, and the KL penalty."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import Float, Int

LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo")

LOSS_TYPE_DOCS = {
    "grpo": "Token mean per sequence, then mean over sequences (original GRPO). Biased towards short answers.",
    "dr_grpo": "Dr. GRPO: token sum divided by batch size x max_completion_length; removes the length bias.",
    "dapo": "DAPO: token sum over the whole generation batch divided by its active tokens (the default).",
    "bnpo": "Token mean over the local micro-batch; depends on the per-device batch size.",
    "cispo": "CISPO: clipped importance weight times log-prob; epsilon_high is an absolute cap (use ~5.0).",
    "sapo": "SAPO: a smooth sigmoid gate instead of hard clipping, with separate temperatures for signs.",
    "luspo": "LUSPO: length-weighted sequence loss; meant for importance_sampling_level 'sequence'.",
    "vespo": "VESPO: variance-reduced sequence weights (vespo_* knobs); meant for token-level ratios.",
}


class LossParams(AreaParams):
    area = "loss"
    title = "Loss"
    summary = "The GRPO objective, its clipping and the KL penalty against a reference model."
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {"loss_type": LOSS_TYPE_DOCS}

    loss_type: Literal[LOSS_TYPES] = Field(  # type: ignore[valid-type]
        "dapo",
        description="The policy objective: how per-token losses are clipped, weighted and normalised into one number.",
    )
    beta: Float = Field(
        0.0,
        ge=0,
        description="Weight of the KL penalty against the reference model. 0 (the default) skips the reference "
        "model entirely, saving its memory and forward passes.",
    )
    epsilon: Float = Field(
        0.2,
        gt=0,
        description="Lower clip: the ratio is clipped below at 1 - epsilon. Only matters when training is "
        "off-policy (num_iterations > 1, or steps_per_generation > gradient_accumulation_steps).",
    )
    epsilon_high: Float | None = Field(
        None,
        examples=[0.28],
        gt=0,
        description="Upper clip at 1 + epsilon_high ('clip-higher', DAPO recommends 0.28). null uses epsilon. "
        "For cispo it is an absolute cap on the ratio instead.",
    )
    delta: Float | None = Field(
        None,
        examples=[4.0],
        gt=0,
        description="Two-sided clipping: cap the unclipped ratio at delta (INTELLECT-2). Should exceed 1 + "
        "epsilon. null disables it.",
    )
    mask_truncated_completions: bool = Field(
        False,
        description="Leave completions that hit max_completion_length without EOS out of the loss (they still "
        "count in the group's reward statistics).",
    )
    use_bias_correction_kl: bool = Field(
        True, description="Multiply the KL term by the importance ratio, which corrects its bias off-policy."
    )
    sapo_temperature_neg: Float = Field(1.05, gt=0, description="sapo: gate temperature for negative advantages.")
    sapo_temperature_pos: Float = Field(1.0, gt=0, description="sapo: gate temperature for positive advantages.")
    vespo_k_pos: Float = Field(2.0, gt=0, description="vespo: shape k for non-negative advantages.")
    vespo_lambda_pos: Float = Field(3.0, gt=0, description="vespo: rate lambda for non-negative advantages.")
    vespo_k_neg: Float = Field(3.0, gt=0, description="vespo: shape k for negative advantages.")
    vespo_lambda_neg: Float = Field(2.0, gt=0, description="vespo: rate lambda for negative advantages.")


class ReferenceParams(AreaParams):
    area = "reference_model"
    title = "Reference model"
    summary = "The frozen model the KL penalty compares against (loaded only when beta > 0)."

    sync_ref_model: bool = Field(
        False,
        description="Every ref_model_sync_steps optimizer steps, move the reference model towards the policy. "
        "Needs beta > 0.",
    )
    ref_model_mixup_alpha: Float = Field(
        0.6, ge=0, le=1, description="Sync weight: reference <- alpha x policy + (1 - alpha) x reference."
    )
    ref_model_sync_steps: Int = Field(512, ge=1, description="Optimizer steps between reference-model syncs.")
