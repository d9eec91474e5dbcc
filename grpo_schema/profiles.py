"""Kept at this path for `from grpo_schema.profiles import Profile, register_profile`: the package is
grpo_schema.engine.profiles (one registry: a profile registered here is the one `--profile NAME` finds)."""

from grpo_schema.engine.profiles import (
    ENTRY_POINT_GROUP,
    Profile,
    adapt_rewards,
    get_profile,
    known_profiles,
    register_profile,
    suggest_profiles,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Profile",
    "adapt_rewards",
    "get_profile",
    "known_profiles",
    "register_profile",
    "suggest_profiles",
]
