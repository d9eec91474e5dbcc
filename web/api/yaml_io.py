"""The form's file operations: POST /api/v1/yaml (JSON object -> canonical YAML) and POST /api/v1/load
(a YAML or JSON file -> the JSON object the form edits, with the file's diagnostics)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse

from grpo_schema import check_text
from grpo_schema.export import schema_url
from grpo_schema.loader import load_yaml
from grpo_schema.profiles import Profile
from web.api.body import ConfigBody, config_body, media_type, parse_json_object, read_limited
from web.api.docs import ERRORS, TYPO_JSON, VALID_JSON, config_body_doc, json_errors
from web.api.params import profile_params
from web.api.responses import ConfigJSONResponse
from web.settings import Settings, current_settings
from web.yamltext import config_yaml

router = APIRouter(prefix="/api/v1", tags=["files"])
_JSON_BODY = {"requestBody": {"required": True, "content": {"application/json": {
    "schema": {"type": "object", "additionalProperties": True},
    "examples": {"valid": {"value": VALID_JSON}, "typo": {"value": TYPO_JSON}}}}}}
_YAML_OUT = {200: {"content": {"application/yaml": {"schema": {"type": "string"}}},
                   "description": "the config as YAML, the schema modeline on its first line"}}


@router.post("/yaml", summary="Write a config as YAML", response_class=PlainTextResponse,
             responses={**_YAML_OUT, **json_errors()}, openapi_extra=_JSON_BODY)
async def to_yaml(request: Request, settings: Annotated[Settings, Depends(current_settings)],
                  profiles: Annotated[tuple[Profile, ...], Depends(profile_params)]) -> PlainTextResponse:
    """The JSON object as canonical YAML, ready for `trl grpo --config` and for editors: the modeline names the
    schema file for the profiles given, relative to the YAML file (or the operator's GRPO_WEB_SCHEMA_URL)."""
    if media_type(request) != "application/json":
        raise HTTPException(415, "send the config as a JSON object (application/json)")
    mapping = parse_json_object(await read_limited(request, settings.max_body_bytes, settings.body_timeout_s))
    url = settings.schema_url or schema_url(profiles=[p.name for p in profiles])
    text = await run_in_threadpool(config_yaml, mapping, url)
    return PlainTextResponse(text, media_type="application/yaml; charset=utf-8")


@router.post("/load", summary="Read a config file for the form", response_class=ConfigJSONResponse,
             responses={200: {"description": "`config`: the mapping (null when the file has none); "
                                             "`diagnostics`: the file's diagnostics, with lines"}, **ERRORS},
             openapi_extra=config_body_doc())
async def load(body: Annotated[ConfigBody, Depends(config_body)]) -> ConfigJSONResponse:
    """A file as the JSON object the form edits, plus what `grpo validate` says of the file itself."""
    if body.mapping is not None:
        return ConfigJSONResponse({"config": body.mapping, "diagnostics": []})
    return ConfigJSONResponse(await run_in_threadpool(_load_yaml, body.yaml))


def _load_yaml(data: bytes) -> dict[str, Any]:
    loaded = load_yaml(data)
    config = loaded.data if loaded.ok and isinstance(loaded.data, dict) else None
    # What only the text shows (duplicate keys, tags, syntax); the form validates the mapping itself next.
    diagnostics = loaded.diagnostics if config is not None else check_text(data, path="<import>").diagnostics
    return {"config": config, "diagnostics": [d.to_dict() for d in diagnostics]}
