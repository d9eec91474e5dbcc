"""What the form is built from: GET /api/v1/schema, /api/v1/profiles, /api/v1/presets[/{name}], and what the
service offers (GET /api/v1/capabilities)."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.concurrency import run_in_threadpool

from grpo_schema.commands.export import export_schema
from grpo_schema.engine.check import TRL_REWARD_FUNCS
from grpo_schema.engine.keys import launch_keys
from grpo_schema.engine.profiles import Profile, adapt_rewards, known_profiles
from grpo_schema.engine.release import release_surface
from grpo_schema.schema_export.releases import release_schema
from grpo_schema.versions import releases
from grpo_web.api.params import TrlVersion, profile_params, trl_version_of
from grpo_web.presets import all_presets

router = APIRouter(prefix="/api/v1", tags=["catalog"])


@lru_cache(maxsize=16)
def _schema(profile_names: tuple[str, ...], trl_version: str | None = None) -> dict[str, Any]:
    schema = export_schema(profiles=profile_names)  # building it takes a while: once per profile set and release
    release = release_surface(trl_version)
    return schema if release is None else release_schema(schema, release, launch_keys())


def warm_cache() -> None:
    """Build the default schema ahead of the first page load (called in a background thread at startup)."""
    _schema(())


@router.get(
    "/schema",
    summary="The JSON Schema of a config",
    responses={422: {"description": "unknown profile, or a TRL release the tables cannot judge"}},
)
async def schema(
    request: Request, profiles: Annotated[tuple[Profile, ...], Depends(profile_params)], trl_version: TrlVersion = None
) -> dict[str, Any]:
    """The same document as `grpo schema [--profile P]... [--trl-version X]`, with the form's layout hints
    (x-groups, x-group, x-order, x-advanced). Without ?trl_version=, the service's own release."""
    version, _ = trl_version_of(trl_version, request.app.state.settings)
    return await run_in_threadpool(_schema, tuple(p.name for p in profiles), version)


@router.get("/trl-versions", summary="The TRL releases configs can be judged against")
def trl_versions(request: Request) -> dict[str, Any]:
    """Every release with a table (the last patch of each minor since 0.14), the service's default with where it
    came from (`grpo serve --trl-version`, the installed trl, or 1.16), and the diagnostic codes whose fixes
    `grpo migrate` makes (keys that predate the judged release)."""
    from grpo_schema.commands.migration_text import MIGRATION_CODES
    from grpo_schema.versions.detect import source_words

    version, source = request.app.state.settings.judged_trl()
    return {
        "default": {"version": version, "source": source, "says": source_words(source)},
        "releases": releases(),
        "migration_codes": list(MIGRATION_CODES),  # the form's "keys that predate the release" offer reads these
    }


@router.get("/profiles", summary="Known downstream script profiles")
def profiles() -> list[dict[str, Any]]:
    """Each profile with the reward names its registry resolves (the form's reward_funcs picker)."""
    return [
        {
            "name": p.name,
            "description": p.description,
            "reward_funcs": list(p.reward_funcs),
            "default_reward_funcs": list(p.default_reward_funcs or []),
        }
        for p in known_profiles().values()
    ]


@router.get(
    "/rewards",
    summary="Reward names TRL's `trl grpo` resolves without a profile",
    responses={422: {"description": "a TRL release the tables cannot judge"}},
)
def rewards(request: Request, trl_version: TrlVersion = None) -> list[str]:
    """The names the release's `trl grpo` script registers (0.19: think_format_reward alone); without
    ?trl_version=, the service's own release's."""
    version, _ = trl_version_of(trl_version, request.app.state.settings)
    release = release_surface(version)
    return list(TRL_REWARD_FUNCS if release is None else release.reward_funcs)


@router.get("/capabilities", summary="What this service offers the form")
def capabilities(request: Request) -> dict[str, Any]:
    """`runs`: whether the operator turned runs on (the form then shows the run policy's findings live)."""
    return {"runs": bool(getattr(request.app.state.settings, "runs", False))}


@router.get("/presets", summary="Recipe presets to start from")
def presets() -> list[dict[str, str | None]]:
    return [p.summary() for p in all_presets().values()]


@router.get(
    "/presets/{name}",
    summary="One preset: its YAML and the config as JSON",
    responses={404: {"description": "no preset of that name"}, 422: {"description": "unknown profile"}},
)
def preset(name: str, profiles: Annotated[tuple[Profile, ...], Depends(profile_params)]) -> dict[str, Any]:
    """With ?profile=, the recipe is adapted to that profile's reward registry; `notes` says what changed."""
    found = all_presets().get(name)
    if found is None:
        raise HTTPException(404, f"no preset {name!r}; known: {', '.join(all_presets())}")
    from grpo_web.api.yaml_io import settings_of

    # the recipe's `# grpo:` comment (the Demo's --hardware), as an imported file's is read
    document = {**found.document(), "notes": [], "settings": settings_of(found.text.encode())[0]}
    for profile in profiles:
        document["config"], notes = adapt_rewards(document["config"], profile)
        document["notes"] += notes
    return document
