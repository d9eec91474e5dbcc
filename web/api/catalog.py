"""What the form is built from: GET /api/v1/schema, /api/v1/profiles, /api/v1/presets[/{name}], and what the
service offers (GET /api/v1/capabilities)."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.concurrency import run_in_threadpool

from grpo_schema.commands.export import export_schema
from grpo_schema.engine.check import TRL_REWARD_FUNCS
from grpo_schema.engine.profiles import Profile, adapt_rewards, known_profiles
from grpo_web.api.params import profile_params
from grpo_web.presets import all_presets

router = APIRouter(prefix="/api/v1", tags=["catalog"])


@lru_cache(maxsize=16)
def _schema(profile_names: tuple[str, ...]) -> dict[str, Any]:
    return export_schema(profiles=profile_names)  # building it takes a while: once per profile set


def warm_cache() -> None:
    """Build the default schema ahead of the first page load (called in a background thread at startup)."""
    _schema(())


@router.get("/schema", summary="The JSON Schema of a config", responses={422: {"description": "unknown profile"}})
async def schema(profiles: Annotated[tuple[Profile, ...], Depends(profile_params)]) -> dict[str, Any]:
    """The same document as `grpo schema [--profile P]...`, with the form's layout hints (x-groups, x-group,
    x-order, x-advanced)."""
    return await run_in_threadpool(_schema, tuple(p.name for p in profiles))


@router.get("/profiles", summary="Known downstream script profiles")
def profiles() -> list[dict[str, Any]]:
    """Each profile with the reward names its registry resolves (the form's reward_funcs picker)."""
    return [{"name": p.name, "description": p.description, "reward_funcs": list(p.reward_funcs),
             "default_reward_funcs": list(p.default_reward_funcs or [])} for p in known_profiles().values()]


@router.get("/rewards", summary="Reward names TRL's `trl grpo` resolves without a profile")
def rewards() -> list[str]:
    return list(TRL_REWARD_FUNCS)


@router.get("/capabilities", summary="What this service offers the form")
def capabilities(request: Request) -> dict[str, Any]:
    """`runs`: whether the operator turned runs on (the form then shows the run policy's findings live)."""
    return {"runs": bool(getattr(request.app.state.settings, "runs", False))}


@router.get("/presets", summary="Recipe presets to start from")
def presets() -> list[dict[str, str | None]]:
    return [p.summary() for p in all_presets().values()]


@router.get("/presets/{name}", summary="One preset: its YAML and the config as JSON",
            responses={404: {"description": "no preset of that name"}, 422: {"description": "unknown profile"}})
def preset(name: str, profiles: Annotated[tuple[Profile, ...], Depends(profile_params)]) -> dict[str, Any]:
    """With ?profile=, the recipe is adapted to that profile's reward registry; `notes` says what changed."""
    found = all_presets().get(name)
    if found is None:
        raise HTTPException(404, f"no preset {name!r}; known: {', '.join(all_presets())}")
    document = {**found.document(), "notes": []}
    for profile in profiles:
        document["config"], notes = adapt_rewards(document["config"], profile)
        document["notes"] += notes
    return document
