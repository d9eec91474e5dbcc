"""The form's file operations: POST /api/v1/yaml (JSON object -> canonical YAML), POST /api/v1/export (the form's
config written into the imported file, keeping its comments), POST /api/v1/migrate (the form's config moved to a
newer TRL release, as `grpo migrate --from A --to B` moves a file) and POST /api/v1/load (a YAML or JSON file ->
the JSON object the form edits, with the file's diagnostics and the profiles its keys belong to)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse

from grpo_schema import check_text
from grpo_schema.api.modeline import base_url, schema_url
from grpo_schema.commands.verl import verl_import
from grpo_schema.dialects.verl.check import looks_like_verl
from grpo_schema.engine.loader import load_yaml
from grpo_schema.engine.profiles import Profile, suggest_profiles
from grpo_schema.engine.recognise import not_a_grpo_config, other_kind
from grpo_web.api.body import ConfigBody, config_body, media_type, parse_json_object, read_limited
from grpo_web.api.docs import ERRORS, TYPO_JSON, VALID_JSON, config_body_doc, json_errors
from grpo_web.api.params import RELEASE_PATTERN, profile_params
from grpo_web.api.responses import ConfigJSONResponse
from grpo_web.exporting import export_config, migrate_form_config
from grpo_web.settings import Settings, current_settings
from grpo_web.yamltext import config_yaml

router = APIRouter(prefix="/api/v1", tags=["files"])
_JSON_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {"type": "object", "additionalProperties": True},
                "examples": {"valid": {"value": VALID_JSON}, "typo": {"value": TYPO_JSON}},
            }
        },
    }
}
_YAML_OUT = {
    200: {
        "content": {"application/yaml": {"schema": {"type": "string"}}},
        "description": "the config as YAML, the schema modeline on its first line",
    }
}


@router.post(
    "/yaml",
    summary="Write a config as YAML",
    response_class=PlainTextResponse,
    responses={**_YAML_OUT, **json_errors()},
    openapi_extra=_JSON_BODY,
)
async def to_yaml(
    request: Request,
    settings: Annotated[Settings, Depends(current_settings)],
    profiles: Annotated[tuple[Profile, ...], Depends(profile_params)],
) -> PlainTextResponse:
    """The JSON object as canonical YAML, ready for `trl grpo --config` and for editors: the modeline names the
    schema file for the profiles given, relative to the YAML file (or the operator's GRPO_WEB_SCHEMA_URL)."""
    if media_type(request) != "application/json":
        raise HTTPException(415, "send the config as a JSON object (application/json)")
    mapping = parse_json_object(await read_limited(request, settings.max_body_bytes, settings.body_timeout_s))
    url = settings.schema_url or schema_url(profiles=[p.name for p in profiles])
    text = await run_in_threadpool(config_yaml, mapping, url)
    return PlainTextResponse(text, media_type="application/yaml; charset=utf-8")


_EXPORT_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["config"],
                    "properties": {
                        "config": {"type": "object", "additionalProperties": True},
                        "source": {"type": ["string", "null"], "description": "the imported file's text"},
                        "renames": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
                        "world_size": {
                            "type": ["integer", "null"],
                            "minimum": 1,
                            "maximum": Settings.model_fields["max_world_size"].default,
                        },
                        "write_world_size": {"type": "boolean", "default": True},
                        "source_kind": {
                            "type": "string",
                            "enum": ["file", "recipe"],
                            "default": "file",
                            "description": "where `source` came from: an imported file or a recipe",
                        },
                        "source_name": {
                            "type": ["string", "null"],
                            "maxLength": 200,
                            "description": "the recipe's title",
                        },
                    },
                }
            }
        },
    }
}


def _export_request(body: dict[str, Any], max_world_size: int) -> dict[str, Any]:
    config, source, renames = body.get("config"), body.get("source"), body.get("renames")
    renames = {} if renames is None else renames
    world_size, write = body.get("world_size"), body.get("write_world_size", True)
    if isinstance(world_size, float) and world_size.is_integer():  # 8.0 is an integer to JSON Schema
        world_size = int(world_size)
    if not isinstance(config, dict):
        raise HTTPException(422, "config must be a JSON object")
    if source is not None and not isinstance(source, str):
        raise HTTPException(422, "source must be the imported file's text or null")
    if not isinstance(renames, dict) or not all(isinstance(v, str) for v in renames.values()):
        raise HTTPException(422, "renames must map old key names to new ones")
    if world_size is not None and (
        isinstance(world_size, bool) or not isinstance(world_size, int) or not 1 <= world_size <= max_world_size
    ):
        raise HTTPException(422, f"world_size must be a whole number from 1 to {max_world_size}")
    if not isinstance(write, bool):
        raise HTTPException(422, "write_world_size must be true or false")
    kind, name = body.get("source_kind", "file"), body.get("source_name")
    if kind not in ("file", "recipe"):
        raise HTTPException(422, "source_kind must be file or recipe")
    if name is not None and (not isinstance(name, str) or len(name) > 200):
        raise HTTPException(422, "source_name must be a short text or null")
    return {
        "config": config,
        "source": source,
        "renames": renames,
        "world_size": world_size,
        "write_world_size": write,
        "source_kind": kind,
        "source_name": name,
    }


def download_schema_url(request: Request, settings: Settings, profiles: tuple[Profile, ...]) -> str:
    """The modeline of a file the form hands over for download: it lands anywhere (a Downloads folder), where a
    schema named by a relative path does not exist. The operator's URL, else the published folder
    (GRPO_SCHEMA_BASE_URL), else this service's own schema endpoint, an absolute URL that resolves while the
    service runs."""
    if settings.schema_url:
        return settings.schema_url
    if base_url():
        return schema_url(profiles=[p.name for p in profiles])
    query = "?" + "&".join(f"profile={p.name}" for p in profiles) if profiles else ""
    return f"{str(request.base_url).rstrip('/')}/api/v1/schema{query}"


@router.post(
    "/export",
    summary="Export the form's config, keeping the imported file's comments",
    responses={
        200: {
            "description": "`yaml`: the text; `notes`: what the export did (world size, "
            "comments kept or not); `kept_source`"
        },
        **ERRORS,
    },
    openapi_extra=_EXPORT_BODY,
)
async def export(
    request: Request,
    settings: Annotated[Settings, Depends(current_settings)],
    profiles: Annotated[tuple[Profile, ...], Depends(profile_params)],
) -> dict[str, Any]:
    """The config as YAML. With `source` (the file the form imported) the edits are made in that text by the
    engine of `grpo migrate`, so comments, key order and untouched values (`1.0`) stay as written."""
    if media_type(request) != "application/json":
        raise HTTPException(415, "send a JSON object (application/json)")
    body = parse_json_object(await read_limited(request, settings.max_body_bytes, settings.body_timeout_s))
    wanted = _export_request(body, settings.max_world_size)
    url = download_schema_url(request, settings, profiles)
    exported = await run_in_threadpool(export_config, schema_url=url, **wanted)
    return exported.to_dict()


_MIGRATE_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["config", "from"],
                    "properties": {
                        "config": {"type": "object", "additionalProperties": True},
                        "source": {"type": ["string", "null"], "description": "the imported file's text"},
                        "renames": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
                        "from": {
                            "type": "string",
                            "maxLength": 32,
                            "pattern": RELEASE_PATTERN,
                            "description": "the TRL release the config was written for",
                        },
                        "to": {
                            "type": ["string", "null"],
                            "maxLength": 32,
                            "pattern": RELEASE_PATTERN,
                            "description": "the release to migrate to (default: 1.16); one older than `from` is a 422",
                        },
                    },
                }
            }
        },
    }
}


def _is_release(value: Any) -> bool:
    # the body schema's own test (JSON Schema's pattern is a search), so the schema and the service agree
    return isinstance(value, str) and len(value) <= 32 and re.search(RELEASE_PATTERN, value) is not None


def _migrate_request(body: dict[str, Any]) -> dict[str, Any]:
    config, source, renames = body.get("config"), body.get("source"), body.get("renames")
    renames = {} if renames is None else renames
    written_for, target = body.get("from"), body.get("to")
    if not isinstance(config, dict):
        raise HTTPException(422, "config must be a JSON object")
    if source is not None and not isinstance(source, str):
        raise HTTPException(422, "source must be the imported file's text or null")
    if not isinstance(renames, dict) or not all(isinstance(v, str) for v in renames.values()):
        raise HTTPException(422, "renames must map old key names to new ones")
    if not _is_release(written_for) or (target is not None and not _is_release(target)):
        raise HTTPException(422, "from (and to, when given) must be TRL versions such as 0.19.1, from 0.14 on")
    return {"config": config, "source": source, "renames": renames, "written_for": written_for, "target": target}


@router.post(
    "/migrate",
    summary="Migrate the form's config to a newer TRL release, as grpo migrate does",
    responses={
        200: {
            "description": "`yaml` and `config`: the migrated file and its mapping; `settings`: "
            "its `# grpo:` comment; `done`, `failed`, `cannot_keep`: what "
            "grpo migrate prints"
        },
        **ERRORS,
    },
    openapi_extra=_MIGRATE_BODY,
)
async def migrate(
    request: Request,
    settings: Annotated[Settings, Depends(current_settings)],
    profiles: Annotated[tuple[Profile, ...], Depends(profile_params)],
) -> dict[str, Any]:
    """`grpo migrate --from A [--to B]` on the form's config, written into the imported file when there is one:
    renamed and removed keys rewritten, and A's defaults that B changed written out, so the run trains as it did."""
    if media_type(request) != "application/json":
        raise HTTPException(415, "send a JSON object (application/json)")
    body = parse_json_object(await read_limited(request, settings.max_body_bytes, settings.body_timeout_s))
    try:
        migrated = await run_in_threadpool(migrate_form_config, profiles=profiles, **_migrate_request(body))
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
    migrated["settings"] = settings_of(migrated["yaml"].encode("utf-8"))[0]
    return migrated


@router.post(
    "/load",
    summary="Read a config file for the form",
    response_class=ConfigJSONResponse,
    responses={
        200: {
            "description": "`config`: the mapping (null when the file has none); "
            "`diagnostics`: the file's diagnostics, with lines"
        },
        **ERRORS,
    },
    openapi_extra=config_body_doc(),
)
async def load(body: Annotated[ConfigBody, Depends(config_body)]) -> ConfigJSONResponse:
    """A file as the JSON object the form edits, plus what `grpo validate` says of the file itself."""
    if body.mapping is not None:
        return ConfigJSONResponse(
            {"config": body.mapping, "diagnostics": [], "profiles": suggest_profiles(body.mapping), "settings": None}
        )
    return ConfigJSONResponse(await run_in_threadpool(_load_yaml, body.yaml))


def _load_yaml(data: bytes) -> dict[str, Any]:
    if looks_like_verl(data.decode("utf-8", "replace")):  # converted to TRL for the form, as grpo convert does
        return {**verl_import(data), "profiles": [], "settings": None}
    skipped = other_kind(data)  # an accelerate config, an SFT recipe...: said so, not put into the form
    if skipped is not None:
        return {"config": None, "diagnostics": [not_a_grpo_config(skipped).to_dict()], "profiles": [], "settings": None}
    loaded = load_yaml(data)
    config = loaded.data if loaded.ok and isinstance(loaded.data, dict) else None
    # What only the text shows (duplicate keys, tags, syntax); the form validates the mapping itself next.
    diagnostics = loaded.diagnostics if config is not None else check_text(data, path="<import>").diagnostics
    file_settings, problems = settings_of(data)
    if config is not None:
        diagnostics = [*problems, *diagnostics]
    return {
        "config": config,
        "diagnostics": [d.to_dict() for d in diagnostics],
        "profiles": suggest_profiles(config) if config is not None else [],
        "settings": file_settings,
    }


def settings_of(data: bytes) -> tuple[dict[str, Any] | None, list]:
    """The file's `# grpo:` settings (how `grpo validate` checks it: world size, profiles, hardware, allowed env
    names, TRL release) for the form to check it the same way, and what of the comment cannot be used (Y015)."""
    if b"grpo:" not in data:
        return None, []
    from grpo_schema.engine.check import file_options
    from grpo_schema.engine.infile import read_file_settings

    found = read_file_settings(data)
    if not found.lines:
        return None, []
    _, problems = file_options(data, {}, found)
    return {
        "world_size": found.world_size,
        "profiles": list(found.profiles),
        "hardware": found.hardware,
        "allow_env": list(found.allow_env),
        "trl_version": found.trl_version,
        "lines": list(found.lines),
    }, problems
