"""Query parameters: world_size, profile (repeatable), dataset_size and path, validated once (422 when wrong)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Query

from grpo_schema.profiles import Profile, get_profile, known_profiles
from web.settings import Settings, current_settings

ProfileNames = Annotated[list[str], Query(description="downstream script profile, repeatable (e.g. open-r1)")]
DatasetSize = Annotated[int | None, Query(ge=1, description="rows in the training dataset (adds steps per epoch)")]


@dataclass(frozen=True)
class CheckParams:
    world_size: int | None
    profiles: tuple[Profile, ...]
    path: str

    def options(self) -> dict:
        """Keyword arguments for grpo_schema.check_text / check_mapping."""
        return {"path": self.path, "world_size": self.world_size, "profiles": self.profiles}


def profiles_named(names: list[str]) -> tuple[Profile, ...]:
    # Only registered names: the service never imports a 'module:ATTR' profile a client sends.
    found = []
    for name in names:
        try:
            found.append(get_profile(name, allow_import=False))
        except KeyError:
            known = ", ".join(sorted(known_profiles()))
            raise HTTPException(422, f"unknown profile {name!r}; known profiles: {known}")
    return tuple(found)


def profile_params(profile: ProfileNames = []) -> tuple[Profile, ...]:
    """Dependency: the profiles named by ?profile=."""
    return profiles_named(profile)


def check_params(
    settings: Annotated[Settings, Depends(current_settings)],
    profiles: Annotated[tuple[Profile, ...], Depends(profile_params)],
    world_size: Annotated[int | None, Query(ge=1, description="training processes over all machines; default: "
                                                "num_processes from the config, else 1")] = None,
    path: Annotated[str, Query(max_length=1000, description="name to report as the file object's path")]
    = "<request>",
) -> CheckParams:
    """Dependency: everything the check endpoints read from the query."""
    if world_size is not None and world_size > settings.max_world_size:
        raise HTTPException(422, f"world_size must be at most {settings.max_world_size}")
    return CheckParams(world_size, profiles, path)
