"""Entropy: train only on high-entropy tokens, and an optional entropy bonus with an adaptive coefficient."""

from __future__ import annotations

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import Float


class EntropyParams(AreaParams):
    area = "entropy"
    title = "Entropy"
    summary = "Token-entropy filtering and the entropy bonus (static or adaptive, as in Skywork-OR1)."

    top_entropy_quantile: Float = Field(
        1.0,
        ge=0,
        le=1,
        description="Train only on the tokens whose entropy is in this top fraction of the micro-batch (0.2 keeps "
        "the 20% most uncertain tokens). 1.0 keeps all tokens.",
    )
    entropy_coef: Float = Field(
        0.0,
        description="Weight of the entropy bonus subtracted from the loss. 0 disables it (unless "
        "use_adaptive_entropy), and with the adaptive controller it is the starting value.",
    )
    use_adaptive_entropy: bool = Field(
        False,
        description="Adjust the entropy coefficient each optimizer step: up by entropy_coef_delta while entropy "
        "is below entropy_target, down otherwise, within [entropy_coef_min, entropy_coef_max].",
    )
    entropy_coef_min: Float = Field(0.0, description="Lower bound of the adaptive entropy coefficient.")
    entropy_coef_max: Float = Field(1.0, description="Upper bound of the adaptive entropy coefficient.")
    entropy_coef_delta: Float = Field(0.005, ge=0, description="Step of the adaptive entropy coefficient.")
    entropy_target: Float = Field(0.2, ge=0, description="Target mean token entropy, in nats.")
