"""Profiles in the schema: a downstream project's typed script keys, and the reward names its registry resolves.

Each profile gets its own schema file (schemas/grpo-config.open-r1.schema.json): a separate, complete schema is
what both the YAML language server and check-jsonschema handle without surprises, and it keeps
`additionalProperties: false` meaningful per project.
"""

from __future__ import annotations

import importlib
from typing import Any

from grpo_schema.engine.profiles import Profile, known_profiles

# Same form as grpo_schema.engine.rules.rewards checks (GRPO-R003): identifiers joined by dots, at least one dot.
DOTTED_PATH = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$"


def script_args_model(profile: Profile) -> Any:
    model = profile.script_args
    if isinstance(model, str):
        module, name = model.split(":")
        model = getattr(importlib.import_module(module), name)
    return model


def reward_item_schema(active: tuple[Profile, ...], lenient: bool) -> dict[str, Any]:
    """The schema of one reward_funcs entry under the active profiles (mirrors the Python rules R002/R007).

    Names the active registry resolves are valid; so are names of known profiles that are not active (Python
    only warns: the file is probably meant for that project). Dotted import paths are valid where the script
    imports them. In the lenient schema every string is valid and the names are suggestions.
    """
    from grpo_schema.engine.check import TRL_REWARD_FUNCS

    replacing = [p for p in active if p.replaces_builtin_rewards]
    names = [] if replacing else list(TRL_REWARD_FUNCS)
    for profile in active + tuple(p for p in known_profiles().values() if p not in active):
        names += [n for n in profile.reward_funcs if n not in names]
    if lenient:
        return {"anyOf": [{"type": "string", "enum": names}, {"type": "string"}]}
    dotted = all(p.allows_dotted_rewards for p in replacing)
    message = (
        "a reward function the script's registry does not know"
        + (" and not a dotted import path 'module.function'" if dotted else "")
        + " (GRPO-R002)"
    )
    branches: list[dict[str, Any]] = [{"type": "string", "enum": names, "errorMessage": message}]
    if dotted:
        branches.append({"type": "string", "pattern": DOTTED_PATH, "patternErrorMessage": message})
    return {"anyOf": branches}


def set_reward_items(properties: dict[str, Any], item: dict[str, Any], active: tuple[Profile, ...] = ()) -> None:
    """Give the reward_funcs list its item schema (pydantic says only 'string'); under a profile whose registry
    replaces TRL's, the description names that registry instead of TRL's built-ins."""
    prop = properties["reward_funcs"]
    for branch in prop.get("anyOf", [prop]):
        if branch.get("type") == "array":
            branch["items"] = item
    replacing = [p for p in active if p.replaces_builtin_rewards]
    if replacing:
        names = ", ".join(n for p in replacing for n in p.reward_funcs)
        text = (
            f"Reward functions by name from {replacing[0].name}'s registry ({names})"
            + (" or a dotted import path 'module.function'" if all(p.allows_dotted_rewards for p in replacing) else "")
            + ". Always a list, even for one function."
        )
        prop["description"] = text
        if "markdownDescription" in prop:
            prop["markdownDescription"] = text
