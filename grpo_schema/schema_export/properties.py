"""Turn pydantic's JSON Schema of a model into the property schemas editors and validators understand.

pydantic leaves a bound it cannot place (a `ge=` on an `Optional[Annotated[...]]` field) as its own keyword
(`"gt": 0` inside an anyOf branch); JSON Schema tools ignore unknown keywords, so such bounds would silently
vanish. They become minimum/exclusiveMinimum/... here. Defaults made by a factory and examples are added from
the model's fields.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

# pydantic keyword -> JSON Schema keyword, for numbers.
_BOUNDS = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum", "le": "maximum"}
_LENGTHS = {"min_length": ("minLength", "minItems"), "max_length": ("maxLength", "maxItems")}


def standard_keywords(node: Any) -> Any:
    """Rewrite pydantic-only keywords into standard ones, recursively (in place; returns the node)."""
    if isinstance(node, list):
        for item in node:
            standard_keywords(item)
        return node
    if not isinstance(node, dict):
        return node
    for key in list(node):
        if key in _BOUNDS:
            node[_BOUNDS[key]] = node.pop(key)
        elif key in _LENGTHS:
            string_word, array_word = _LENGTHS[key]
            node[array_word if node.get("type") == "array" else string_word] = node.pop(key)
    for key, value in node.items():
        if key in ("properties", "$defs", "patternProperties"):
            for child in value.values():
                standard_keywords(child)
        elif key not in ("default", "examples", "const", "enum"):
            standard_keywords(value)
    return node


def field_default(model: type[BaseModel], name: str) -> Any:
    """The field's default as JSON data, or PydanticUndefined when it has none that JSON can hold."""
    info = model.model_fields[name]
    if info.default is not PydanticUndefined:
        value = info.default
    elif info.default_factory is not None:
        value = info.default_factory()  # type: ignore[call-arg]
    else:
        return PydanticUndefined
    try:
        json.dumps(value)
    except TypeError:
        return PydanticUndefined
    return value


def _coerced_inputs() -> dict[Any, dict[str, Any]]:
    """Inputs a field's own conversion (grpo_schema.engine.coerce) accepts besides its type, as a schema branch.

    Only conversions the Python validator accepts with at most a warning, so the schema never refuses a file
    Python accepts. Numeric log levels (GRPO-T009 warns and rewrites them to names) are the one such case.
    """
    from grpo_schema.engine import coerce

    levels = coerce.NUMERIC_LOG_LEVELS
    texts = [f"Numeric spelling of '{name}': write the name (GRPO-T009)" for name in levels.values()]
    return {
        coerce.level_name: {
            "type": "integer",
            "enum": list(levels),
            "enumDescriptions": texts,
            "markdownEnumDescriptions": [f"`{n}`: {t}" for n, t in zip(levels, texts)],
        }
    }


def _widen(prop: dict[str, Any], branch: dict[str, Any]) -> None:
    if "anyOf" not in prop:
        moved = {k: prop.pop(k) for k in list(prop) if k in ("type", "enum", "const")}
        prop["anyOf"] = [moved]
    prop["anyOf"].append(branch)


def model_properties(model: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(properties, $defs) of a model, with standard keywords, defaults and the fields' own examples."""
    schema = standard_keywords(model.model_json_schema())
    properties = schema.get("properties", {})
    for name, prop in properties.items():
        default = field_default(model, name)
        if default is not PydanticUndefined:
            prop["default"] = default
        elif "default" in prop:
            del prop["default"]
    extra_inputs = _coerced_inputs()
    for name, info in model.model_fields.items():
        for item in info.metadata:
            if getattr(item, "func", None) in extra_inputs:
                _widen(properties[name], extra_inputs[item.func])
    return properties, schema.get("$defs", {})


def derived_examples(prop: dict[str, Any]) -> list[Any]:
    """Examples for a field that declares none: its allowed values, else its (non-null) default."""
    choices = enum_values(prop)
    if choices:  # values other than the default first: they show what can be changed
        return sorted(choices, key=lambda value: value == prop.get("default"))[:3]
    default = prop.get("default")
    if default is not None and default != [] and default != {}:
        return [default]
    if "boolean" in types_of(prop):
        return [True]
    return []


def enum_nodes(prop: dict[str, Any]) -> list[dict[str, Any]]:
    """The schema nodes of a property that carry an `enum` (itself, its anyOf branches, its items)."""
    found = [prop] if isinstance(prop.get("enum"), list) else []
    for branch in prop.get("anyOf", []) + prop.get("oneOf", []):
        found += enum_nodes(branch)
    if isinstance(prop.get("items"), dict):
        found += enum_nodes(prop["items"])
    return found


def enum_values(prop: dict[str, Any]) -> list[Any]:
    values: list[Any] = []
    for node in enum_nodes(prop):
        values += [v for v in node["enum"] if v not in values]
    return values


def types_of(prop: dict[str, Any]) -> set[str]:
    kinds = prop.get("type", [])
    out = {kinds} if isinstance(kinds, str) else set(kinds)
    for branch in prop.get("anyOf", []) + prop.get("oneOf", []):
        out |= types_of(branch)
    return out


def bounds_of(prop: dict[str, Any]) -> dict[str, Any]:
    """The numeric bounds of a property, wherever they sit (top level or an anyOf branch)."""
    found = {k: prop[k] for k in _BOUNDS.values() if k in prop}
    for branch in prop.get("anyOf", []):
        found.update(bounds_of(branch))
    return found
