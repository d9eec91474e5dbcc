"""Machine-readable output: the JSON document of interface.md §4 and GitHub Actions annotations."""

from __future__ import annotations

import json
import math
from typing import Any

from grpo_schema.engine.check import CheckResult
from grpo_schema.render.text import printable

_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def render_json(results: list[CheckResult]) -> str:
    return dumps({"version": 1, "files": [r.to_dict() for r in results]}, indent=2) + "\n"


def dumps(value: Any, **options: Any) -> str:
    """json.dumps for every JSON output: always strict JSON. A YAML config may hold .nan or .inf, and a fix that
    quotes the value carried it into the document as NaN / Infinity, which JSON parsers refuse; such a number is
    written as its YAML spelling, as the service does (grpo_web.api.responses)."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:  # rare: only then walk the whole value
        return json.dumps(_finite(value), allow_nan=False, **options)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(results: list[CheckResult]) -> str:
    lines = []
    for result in results:
        for diag in result.diagnostics:
            from grpo_schema.render.notebooks import in_file

            path, line, column, prefix = in_file(result.path, diag.line, diag.column)
            props = [f"file={_escape_property(printable(path))}"]
            if line:
                props += [f"line={line}", f"col={column or 1}"]
            props.append(f"title={_escape_property(diag.code)}")
            message = printable(prefix + diag.message + (f" ({diag.hint})" if diag.hint else ""))  # no ESC in the log
            lines.append(f"::{_GITHUB_LEVEL[diag.severity]} {','.join(props)}::{_escape_data(message)}")
    return "\n".join(lines) + ("\n" if lines else "")
