"""JSON Schema export of the config model, for editors, CI tools and the web form."""

from __future__ import annotations

import json
from typing import Any

from grpo_schema.config import GRPORunConfig, field_areas
from grpo_schema.params.launch import LaunchParams

SCHEMA_ID = "https://raw.githubusercontent.com/grpo-config/grpo-config/main/schemas/grpo-config.schema.json"


def export_schema(draft: str = "2020-12") -> dict[str, Any]:
    schema = GRPORunConfig.model_json_schema()
    areas = field_areas()
    for name, prop in schema.get("properties", {}).items():
        area = areas[name]
        prop["x-group"] = area.area
        prop["x-group-title"] = area.title
    launch = LaunchParams.model_json_schema()
    for name, prop in launch.get("properties", {}).items():
        prop["x-group"], prop["x-group-title"] = LaunchParams.area, LaunchParams.title
        schema["properties"][name] = prop
    schema["properties"]["env"] = {"type": "object", "additionalProperties": {"type": "string"},
                                   "description": "Environment variables set before training (string values).",
                                   "x-group": "env", "x-group-title": "Environment"}
    schema["additionalProperties"] = False
    schema["$schema"] = ("https://json-schema.org/draft/2020-12/schema" if draft == "2020-12"
                         else "http://json-schema.org/draft-07/schema#")
    schema["$id"] = SCHEMA_ID
    return schema


def schema_text(draft: str = "2020-12") -> str:
    return json.dumps(export_schema(draft), indent=2, sort_keys=False) + "\n"
