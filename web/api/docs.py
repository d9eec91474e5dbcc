"""OpenAPI descriptions of the config endpoints: body examples (YAML and JSON) and response shapes.

The models here only document; the routes return grpo_schema's own dicts unchanged (no response_model), so the
HTTP answer is the CLI's `--format json` file object, byte for byte the same dict.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from grpo_web.api.body import JSON_TYPES, YAML_TYPES

VALID_YAML = """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [accuracy_reward]
per_device_train_batch_size: 8
num_generations: 8
"""
INVALID_YAML = VALID_YAML.replace("num_generations: 8", "num_generations: 3")
VALID_JSON = {
    "model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct",
    "dataset_name": "trl-lib/DeepMath-103K",
    "reward_funcs": ["accuracy_reward"],
    "per_device_train_batch_size": 8,
    "num_generations": 8,
}
TYPO_JSON = {**VALID_JSON, "num_generation": 4}


class FixDoc(BaseModel):
    set: dict[str, Any] = {}
    unset: list[str] = []
    rename: dict[str, str] = {}
    safe: bool = True
    title: str | None = None


class DiagnosticDoc(BaseModel):
    code: str = Field(examples=["GRPO-B001"])
    severity: Literal["error", "warning", "info"]
    message: str
    fields: list[str]
    line: int | None
    column: int | None
    hint: str
    fix: FixDoc | None


class FileResultDoc(BaseModel):
    """One file object of `grpo validate --format json`."""

    path: str
    valid: bool
    world_size: int
    diagnostics: list[DiagnosticDoc]
    derived: dict[str, Any] = Field(description="the batch schedule (only world_size when it cannot be derived)")


class DetailDoc(BaseModel):
    detail: Any


def config_body_doc() -> dict[str, Any]:
    """openapi_extra for a route whose body is a config: YAML text or a JSON object."""
    yaml_media = {
        "schema": {"type": "string"},
        "examples": {
            "valid": {"summary": "a valid config", "value": VALID_YAML},
            "invalid": {"summary": "num_generations does not divide the batch", "value": INVALID_YAML},
        },
    }
    json_media = {
        "schema": {"type": "object", "additionalProperties": True},
        "examples": {
            "valid": {"summary": "a valid config", "value": VALID_JSON},
            "typo": {"summary": "a misspelled key", "value": TYPO_JSON},
        },
    }
    content = {kind: yaml_media for kind in sorted(YAML_TYPES)}
    content.update({kind: json_media for kind in JSON_TYPES})
    return {
        "requestBody": {
            "required": True,
            "content": content,
            "description": "the config: YAML text (as `trl grpo --config` reads) or a JSON object",
        }
    }


ERRORS: dict[int | str, dict[str, Any]] = {
    408: {"model": DetailDoc, "description": "the body did not arrive within the service's body_timeout_s"},
    413: {"model": DetailDoc, "description": "the body is larger than the service's limit"},
    415: {"model": DetailDoc, "description": "the content type is neither YAML/plain text nor JSON"},
    422: {"model": DetailDoc, "description": "unusable request: bad query values, JSON that is not an object"},
}


def json_errors() -> dict[int | str, dict[str, Any]]:
    """ERRORS for a route whose success is not JSON: FastAPI documents a `model` response with the route's media
    type (text/plain for /api/v1/yaml), but the error handlers always answer application/json."""
    schema = {"content": {"application/json": {"schema": DetailDoc.model_json_schema()}}}
    return {code: {"description": doc["description"], **schema} for code, doc in ERRORS.items()}
