"""Unsloth: the GRPOConfig that `import unsloth` swaps in for TRL's (UnslothGRPOConfig), as a profile.

Facts from unslothai/unsloth (its generated RL config classes): three keys of its own on top of TRL's, a TRL range
it supports, and a batch rewrite it makes without an error (grpo_schema.dialects.python applies and shows it).
"""

from __future__ import annotations

from grpo_schema.engine.profiles.profile import Profile

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


UNSLOTH = Profile(
    name="unsloth",
    description="Unsloth's patched GRPOConfig (UnslothGRPOConfig), swapped in by `import unsloth`",
    script_args="grpo_schema.engine.profiles.unsloth_args:UnslothArgs",
    compiled_key="unsloth",
    replaces_builtin_rewards=False,
    allows_dotted_rewards=True,
)
