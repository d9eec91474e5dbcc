"""Profiles: typed script arguments and reward names of projects built on TRL's GRPO script.

A profile tells the validator about a downstream training script: the extra keys its argument dataclasses read
(typed by a Pydantic model), the reward-function names its registry resolves, and whether it also accepts dotted
import paths. `--profile open-r1` ships with grpo-config. Register your own:

    from pydantic import BaseModel
    from grpo_schema.profiles import Profile, register_profile

    class MyScriptArgs(BaseModel):
        system_prompt: str | None = None
        max_turns: int = 4

    register_profile(Profile(name="my-lab", description="our GRPO script", script_args=MyScriptArgs,
                             reward_funcs=("exact_match", "format")))

then run `grpo validate --profile my-lab run.yaml` from a program that registered it, expose it to the CLI under
the `grpo_config.profiles` entry-point group (`my-lab = my_package.profile:PROFILE`), or pass
`--profile my_package.profile:PROFILE` (the CLI imports that module; the web service never does unless its
operator allows it).
"""

from __future__ import annotations

from typing import Any, Iterable

from grpo_schema.engine.profiles.profile import Profile

__all__ = [
    "ENTRY_POINT_GROUP",
    "Profile",
    "adapt_rewards",
    "get_profile",
    "known_profiles",
    "register_profile",
    "suggest_profiles",
]

ENTRY_POINT_GROUP = "grpo_config.profiles"


_REGISTRY: dict[str, Profile] = {}


def register_profile(profile: Profile) -> Profile:
    """Make a profile available to `--profile NAME`; registering a name again replaces it."""
    _REGISTRY[profile.name] = profile
    return profile


def known_profiles() -> dict[str, Profile]:
    _load_builtin()
    return dict(_REGISTRY)


def suggest_profiles(mapping: dict[str, Any], active: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The known profiles (not active) whose script keys or reward names `mapping` uses, with what gave them away:
    [{"name": "open-r1", "keys": [...], "reward_funcs": [...]}], the strongest match first."""
    rewards = mapping.get("reward_funcs")
    rewards = [rewards] if isinstance(rewards, str) else rewards if isinstance(rewards, list) else []
    found = []
    for profile in known_profiles().values():
        if profile.name in active:
            continue
        keys = [k for k in mapping if k in profile.keys]
        names = [r for r in rewards if isinstance(r, str) and r in profile.reward_funcs]
        if keys or names:
            found.append({"name": profile.name, "keys": keys, "reward_funcs": names})
    return sorted(found, key=lambda f: -(len(f["keys"]) + len(f["reward_funcs"])))


def adapt_rewards(mapping: dict[str, Any], profile: Profile) -> tuple[dict[str, Any], list[str]]:
    """A recipe written for `trl grpo` made to use `profile`'s reward registry: each built-in reward name becomes
    the registry's equivalent (or the script's default rewards when it has none). Returns (mapping, notes)."""
    rewards = mapping.get("reward_funcs")
    if not isinstance(rewards, list) or not profile.replaces_builtin_rewards:
        return mapping, []
    new, notes = [], []
    for name in rewards:
        if name in profile.reward_funcs or not isinstance(name, str) or "." in name:
            new.append(name)
        elif name in profile.reward_equivalents:
            new.append(profile.reward_equivalents[name])
            notes.append(f"reward_funcs: {name} is {profile.reward_equivalents[name]} in {profile.name}'s registry")
        elif profile.default_reward_funcs:
            new.extend(profile.default_reward_funcs)
            notes.append(
                f"reward_funcs: {name} is not in {profile.name}'s registry; its default rewards "
                f"({', '.join(profile.default_reward_funcs)}) take its place"
            )
        else:
            new.append(name)
    return {**mapping, "reward_funcs": list(dict.fromkeys(new))}, notes


def get_profile(name: str, allow_import: bool = False) -> Profile:
    """Find a profile by name, entry point or (when allowed) 'module:attribute'. Raises KeyError."""
    _load_builtin()
    if name in _REGISTRY:
        return _REGISTRY[name]
    found = _from_entry_points(name)
    if found is not None:
        return register_profile(found)
    if allow_import and ":" in name:
        import importlib

        module_name, attr = name.split(":", 1)
        profile = getattr(importlib.import_module(module_name), attr)
        if not isinstance(profile, Profile):
            raise KeyError(f"{name} is not a grpo_schema.profiles.Profile")
        return register_profile(profile)
    raise KeyError(name)


def _from_entry_points(name: str) -> Profile | None:
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name == name:
            profile = entry.load()
            return profile if isinstance(profile, Profile) else None
    return None


def _load_builtin() -> None:
    if "open-r1" not in _REGISTRY:
        from grpo_schema.engine.profiles.open_r1 import OPEN_R1

        _REGISTRY.setdefault(OPEN_R1.name, OPEN_R1)
    if "unsloth" not in _REGISTRY:
        from grpo_schema.engine.profiles.unsloth import UNSLOTH

        _REGISTRY.setdefault(UNSLOTH.name, UNSLOTH)
