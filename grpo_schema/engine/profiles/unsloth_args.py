"""The keys Unsloth's GRPOConfig takes beyond TRL's, as a Pydantic model (the unsloth profile's typed keys; compiled
into grpo_schema/engine/compiled_models.json so a check never imports pydantic for it)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from grpo_schema.engine.types import Int


class UnslothArgs(BaseModel):
    """The keys UnslothGRPOConfig takes beyond TRL's GRPOConfig."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, arbitrary_types_allowed=True)

    vllm_sampling_params: Any = Field(
        None,
        description="A vllm.SamplingParams used for generation in place of "
        "the one built from temperature, top_p, ... (Unsloth only).",
    )
    unsloth_num_chunks: Int = Field(
        -1,
        ge=-1,
        description="Chunks the GRPO loss is computed in to save memory; "
        "-1 picks the number automatically (Unsloth only).",
    )
    unsloth_logit_chunk_multiplier: Int | None = Field(
        None, ge=1, description="Multiplier of the chunk size of the logits computation (Unsloth only)."
    )
