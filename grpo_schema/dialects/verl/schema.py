"""A JSON Schema for verl YAML, from the same field table the checker reads (one source, no second list of keys).

Sections verl builds as config dataclasses refuse other keys (`additionalProperties: false`), as verl does;
free-form mappings (engine_kwargs, ...) take any. Types and defaults are the table's; the choices of
algorithm.adv_estimator are verl's estimators. Hydra's own `defaults:` and `hydra:` are allowed at the top.
"""

from __future__ import annotations

from typing import Any

from grpo_schema.dialects.verl.fields import FieldTable, table

_JSON_TYPES = {"int": "integer", "float": "number", "bool": "boolean", "str": "string", "list": "array"}


def verl_json_schema(base: str = "ppo_trainer") -> dict[str, Any]:
    fields = table(base)
    root: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://grpo-config.dev/schemas/verl-{fields.release}.{fields.base}.schema.json",
        "title": f"verl {fields.release} {fields.base} config (YAML)",
        "type": "object",
        "properties": {"defaults": {"type": "array"}, "hydra": {"type": "object"}},
        "additionalProperties": False,
    }
    for key in sorted(fields.fields, key=lambda k: k.count(".")):
        if key.rsplit(".", 1)[-1] == "_target_":
            continue
        _place(root, key, fields)
    return root


def _node(field: Any, fields: FieldTable) -> dict[str, Any]:
    if field.type == "dict":  # a config dataclass takes only its fields; any other mapping is free-form
        return {
            "type": ["object", "null"],
            "properties": {},
            "additionalProperties": not fields.is_dataclass_node(field.key),
        }
    node: dict[str, Any] = {}
    if field.type in _JSON_TYPES:
        kinds = [_JSON_TYPES[field.type]] + (["null"] if field.nullable else [])
        node["type"] = kinds[0] if len(kinds) == 1 else kinds
    if field.default is not None and not (isinstance(field.default, str) and field.default.startswith("???")):
        node["default"] = field.default
    if field.choices:
        node["enum"] = list(field.choices)
    if field.follows:
        node["description"] = f"follows {field.follows} unless set"
    return node


def _place(root: dict[str, Any], key: str, fields: FieldTable) -> None:
    parts = key.split(".")
    parent = root
    for part in parts[:-1]:
        parent = parent["properties"].setdefault(part, {"type": "object", "properties": {}})
        parent.setdefault("properties", {})
    field = fields.get(key)
    if field is not None:
        node = _node(field, fields)
        existing = parent["properties"].get(parts[-1])
        if existing and "properties" in existing:
            node["properties"] = existing["properties"]
        parent["properties"][parts[-1]] = node
