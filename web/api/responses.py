"""JSON responses that are always valid JSON, whatever a config contained.

The dicts come unchanged from grpo_schema (the same objects the CLI prints). A YAML config can still carry values
JSON has no spelling for (`.nan`, dates) into a diagnostic's fix; those are written as their YAML text instead of
failing the response.
"""

from __future__ import annotations

import datetime
from typing import Any

from fastapi.responses import JSONResponse

from grpo_schema.render.machine import dumps as strict_dumps


def _default(value: Any) -> Any:
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return str(value)


def dumps(content: Any) -> str:
    """The CLI's strict JSON (non-finite floats as their YAML spelling), plus dates and sets."""
    return strict_dumps(content, ensure_ascii=False, default=_default)


class ConfigJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return dumps(content).encode("utf-8")
