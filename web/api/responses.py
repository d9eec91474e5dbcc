"""JSON responses that are always valid JSON, whatever a config contained.

The dicts come unchanged from grpo_schema (the same objects the CLI prints). A YAML config can still carry values
JSON has no spelling for (`.nan`, dates) into a diagnostic's fix; those are written as their YAML text instead of
failing the response.
"""

from __future__ import annotations

import datetime
import json
import math
from typing import Any

from fastapi.responses import JSONResponse


def _yaml_spelling(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    return ".inf" if value > 0 else "-.inf"


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return _yaml_spelling(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _default(value: Any) -> Any:
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return str(value)


def dumps(content: Any) -> str:
    try:
        return json.dumps(content, ensure_ascii=False, allow_nan=False, default=_default)
    except ValueError:  # a non-finite float somewhere: rare, so only then walk the whole value
        return json.dumps(_finite(content), ensure_ascii=False, allow_nan=False, default=_default)


class ConfigJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return dumps(content).encode("utf-8")
