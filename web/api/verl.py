"""POST /api/v1/convert: the form's TRL config written in verl's dialect (`grpo convert --to verl`'s script).

The other direction, a verl launch script or YAML into the form, is POST /api/v1/load (yaml_io), which answers a
verl file with its diagnostics, its schedule cards and the conversion to TRL.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.concurrency import run_in_threadpool

from grpo_schema import check_mapping
from grpo_schema.commands.verl import trl_to_verl_script
from grpo_web.api.body import media_type, parse_json_object, read_limited
from grpo_web.api.docs import ERRORS
from grpo_web.settings import Settings, current_settings

router = APIRouter(prefix="/api/v1", tags=["files"])
_CONVERT_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["config", "to"],
                    "properties": {
                        "config": {"type": "object", "additionalProperties": True},
                        "to": {"type": "string", "enum": ["verl"]},
                        "world_size": {
                            "type": ["integer", "null"],
                            "minimum": 1,
                            "maximum": Settings.model_fields["max_world_size"].default,
                        },
                    },
                }
            }
        },
    }
}


@router.post(
    "/convert",
    summary="Write the form's config as a verl launch script",
    responses={
        200: {
            "description": "`text`: the script (empty when refused); `lossy`: each mapping that "
            "does not keep the exact meaning; `refused`: why there is no script"
        },
        **ERRORS,
    },
    openapi_extra=_CONVERT_BODY,
)
async def convert(request: Request, settings: Annotated[Settings, Depends(current_settings)]) -> dict[str, Any]:
    """`grpo convert --to verl` on the form's config at its world size: the same check and the same conversion."""
    if media_type(request) != "application/json":
        raise HTTPException(415, "send a JSON object (application/json)")
    body = parse_json_object(await read_limited(request, settings.max_body_bytes, settings.body_timeout_s))
    config, to, world_size = body.get("config"), body.get("to"), body.get("world_size")
    if not isinstance(config, dict):
        raise HTTPException(422, "config must be a JSON object")
    if isinstance(world_size, float) and world_size.is_integer():  # 8.0 is an integer to JSON Schema
        world_size = int(world_size)
    if to != "verl":
        raise HTTPException(422, "to must be verl (a verl file comes into the form through POST /api/v1/load)")
    if world_size is not None and (
        isinstance(world_size, bool)
        or not isinstance(world_size, int)
        or not 1 <= world_size <= settings.max_world_size
    ):
        raise HTTPException(422, f"world_size must be a whole number from 1 to {settings.max_world_size}")
    options = {"world_size": world_size} if world_size else {}
    result = await run_in_threadpool(check_mapping, config, path="<form>", **options)
    text, lossy, refused = trl_to_verl_script(result)
    return {"text": text, "lossy": lossy, "refused": refused, "world_size": result.world_size}
