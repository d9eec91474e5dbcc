"""Unsloth: the GRPOConfig that `import unsloth` swaps in for TRL's (UnslothGRPOConfig), as a profile.

Facts from unslothai/unsloth (its generated RL config classes): three keys of its own on top of TRL's, a TRL range
it supports, and a batch rewrite it makes without an error (grpo_schema.dialects.python applies and shows it).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from grpo_schema.engine.profiles.profile import Profile
from grpo_schema.engine.types import Int

# The trl requirement of Unsloth's releases from December 2025 on; March 2025 releases required trl<=0.15.2, and
# those of mid-2025 gave no upper bound.
TRL_RANGE = ">=0.18.2,!=0.19.0,<=0.24.0"
EARLY_TRL_RANGE = "<=0.15.2"


def trl_range_of(year: int, month: int) -> str | None:
    """The trl range an `unsloth==YYYY.M.x` release requires, where it has an upper bound."""
    if (year, month) < (2025, 7):
        return EARLY_TRL_RANGE
    if (year, month) >= (2025, 12):
        return TRL_RANGE
    return None


class UnslothArgs(BaseModel):
    """The keys UnslothGRPOConfig takes beyond TRL's GRPOConfig."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, arbitrary_types_allowed=True)

    vllm_sampling_params: Any = Field(None, description="A vllm.SamplingParams used for generation in place of "
                                      "the one built from temperature, top_p, ... (Unsloth only).")
    unsloth_num_chunks: Int = Field(-1, ge=-1, description="Chunks the GRPO loss is computed in to save memory; "
                                    "-1 picks the number automatically (Unsloth only).")
    unsloth_logit_chunk_multiplier: Int | None = Field(None, ge=1, description="Multiplier of the chunk size of "
                                                       "the logits computation (Unsloth only).")


UNSLOTH = Profile(
    name="unsloth",
    description="Unsloth's patched GRPOConfig (UnslothGRPOConfig), swapped in by `import unsloth`",
    script_args=UnslothArgs,
    replaces_builtin_rewards=False,
    allows_dotted_rewards=True,
)
