"""Dialects: the schema is built in draft 2020-12 and rewritten for draft-07 on request.

Draft-07 is what SchemaStore recommends and what older editor plugins understand. The only 2020-12 keyword the
export uses that draft-07 lacks is `$defs` (draft-07 says `definitions`); `deprecated` is a plain annotation there.
"""

from __future__ import annotations

from typing import Any

DIALECTS = {"2020-12": "https://json-schema.org/draft/2020-12/schema", "07": "http://json-schema.org/draft-07/schema#"}


def to_draft_07(node: Any) -> Any:
    """A copy of a 2020-12 schema in draft-07 spelling."""
    if isinstance(node, list):
        return [to_draft_07(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ("$defs", "properties", "patternProperties"):  # maps of names to schemas
            out["definitions" if key == "$defs" else key] = {name: to_draft_07(sub) for name, sub in value.items()}
        elif key == "$ref" and isinstance(value, str):
            out[key] = value.replace("#/$defs/", "#/definitions/")
        elif key in ("default", "examples", "const", "enum"):
            out[key] = value
        else:
            out[key] = to_draft_07(value)
    return out
