"""Memory: activation checkpointing and cache emptying."""

from __future__ import annotations

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import Int, JsonDict


class MemoryParams(AreaParams):
    area = "memory"
    title = "Memory"
    summary = "Trade compute for memory: activation (gradient) checkpointing."

    activation_checkpointing: bool | None = Field(
        None,
        examples=[True],
        description="Recompute activations in the backward pass to save memory. null takes gradient_checkpointing.",
    )
    activation_checkpointing_kwargs: JsonDict | None = Field(
        None, description="Arguments of activation checkpointing, e.g. {use_reentrant: false}."
    )
    gradient_checkpointing: bool = Field(
        True, description="Older name of activation_checkpointing (TRL default true); prefer the new name."
    )
    gradient_checkpointing_kwargs: JsonDict | None = Field(
        None, description="Older name of activation_checkpointing_kwargs; prefer the new name."
    )
    torch_empty_cache_steps: Int | None = Field(
        None, ge=1, description="Empty the accelerator cache every this many steps; null never does."
    )
