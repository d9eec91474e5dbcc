"""Query parameters: world_size, profile (repeatable), dataset_size and path, validated once (422 when wrong)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Query
from fastapi.concurrency import run_in_threadpool

from grpo_schema.engine.coerce import INT64_MAX
from grpo_schema.engine.profiles import Profile, get_profile, known_profiles
from grpo_web.settings import Settings, current_settings

PATH_MAX_CHARS = 1000  # the ?path= query: the name a result reports as its path

# The OpenAPI document lists what the service accepts (schemathesis holds it to that): the registered profile names,
# world sizes up to the default max_world_size, dataset sizes that fit in 64 bits (larger ones overflowed the plan).
PROFILE_DOC = {"items": {"type": "string", "enum": sorted(known_profiles())}}
ProfileNames = Annotated[
    list[str], Query(description="downstream script profile, repeatable (e.g. open-r1)", json_schema_extra=PROFILE_DOC)
]
DatasetSize = Annotated[
    int | None, Query(ge=1, le=INT64_MAX, description="rows in the training dataset (adds steps per epoch)")
]
WORLD_SIZE_DOC = {"maximum": Settings.model_fields["max_world_size"].default}


@dataclass(frozen=True)
class CheckParams:
    world_size: int | None
    profiles: tuple[Profile, ...]
    path: str
    trl_version: str | None = None  # None: the service's own (grpo serve --trl-version, else its installed trl)
    trl_version_source: str | None = None

    def options(self) -> dict:
        """Keyword arguments for grpo_schema.check_text / check_mapping."""
        return {
            "path": self.path,
            "world_size": self.world_size,
            "profiles": self.profiles,
            "trl_version": self.trl_version,
            "trl_version_source": self.trl_version_source,
        }


# Releases with `trl grpo`: 0.14 on (a newer one than the tables is judged as the newest).
RELEASE_PATTERN = r"^v?(0\.(1[4-9]|[2-9][0-9]|[1-9][0-9]{2,})|[1-9][0-9]*\.[0-9]+)(\.[0-9]+)?$"
TrlVersion = Annotated[
    str | None,
    Query(
        max_length=32,
        json_schema_extra={"pattern": RELEASE_PATTERN},  # the
        # check itself is trl_version_of's: its 422 names the supported range
        description="the TRL release to judge against (0.14 on), e.g. 0.19.1; "
        "default: the service's (grpo serve --trl-version, else the "
        "installed trl, else 1.16)",
    ),
]


def trl_version_of(asked: str | None, settings: Settings) -> tuple[str, str]:
    """(version, source) for a request: ?trl_version=, else the service's own; 422 for a release the tables cannot
    judge, naming the supported range."""
    from grpo_schema.versions import VersionError, parse_version

    if asked is None:
        return settings.judged_trl()
    try:
        parse_version(asked)
    except VersionError as exc:
        raise HTTPException(422, str(exc))
    return asked, "flag"


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


async def profile_params(profile: ProfileNames = []) -> tuple[Profile, ...]:
    """Dependency: the profiles named by ?profile=. An unknown name makes get_profile read the installed packages'
    entry points, so names are resolved in the thread pool; none (the usual case) costs nothing."""
    return await run_in_threadpool(profiles_named, profile) if profile else ()


async def check_params(
    settings: Annotated[Settings, Depends(current_settings)],
    profiles: Annotated[tuple[Profile, ...], Depends(profile_params)],
    world_size: Annotated[
        int | None,
        Query(
            ge=1,
            description="training processes over all machines; default: "
            "num_processes from the config, else 1; at most the service's "
            "max_world_size",
            json_schema_extra=WORLD_SIZE_DOC,
        ),
    ] = None,
    path: Annotated[
        str, Query(max_length=PATH_MAX_CHARS, description="name to report as the file object's path")
    ] = "<request>",
    trl_version: TrlVersion = None,
) -> CheckParams:
    """Dependency: everything the check endpoints read from the query."""
    if world_size is not None and world_size > settings.max_world_size:
        raise HTTPException(422, f"world_size must be at most {settings.max_world_size}")
    return CheckParams(world_size, profiles, path, *trl_version_of(trl_version, settings))
