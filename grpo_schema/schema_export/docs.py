"""What an editor shows for a field: per-value docs and a markdownDescription with default, range, example and
the rule codes that read the field.

The texts come from the models (field descriptions, the area classes' `value_docs`) and from the rule registry
(each rule declares the fields it `reads`); nothing here is written per field.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from grpo_schema.schema_export.properties import bounds_of, enum_nodes

_BOUND_SIGNS = {"minimum": "≥", "exclusiveMinimum": ">", "maximum": "≤", "exclusiveMaximum": "<"}


@lru_cache(maxsize=None)
def rules_by_field() -> dict[str, tuple[tuple[str, str, str], ...]]:
    """Field name -> ((code, severity, title), ...) of the cross-field rules that read it."""
    from grpo_schema.engine.codes import CODES
    from grpo_schema.engine.rules import load_rules

    found: dict[str, list[tuple[str, str, str]]] = {}
    for rule in load_rules():
        for name in rule.reads:
            entries = found.setdefault(name, [])
            if all(code != rule.code for code, _, _ in entries):
                entries.append((rule.code, rule.severity, CODES[rule.code].title))
    return {name: tuple(sorted(entries)) for name, entries in found.items()}


def yaml_value(value: Any) -> str:
    """A value as it would be written in the YAML file (flow style for lists and mappings)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if (
        isinstance(value, str)
        and value
        and value.strip() == value
        and value.replace("_", "").replace("-", "").replace("/", "").replace(".", "").isalnum()
        and not value[0].isdigit()
        and value.lower() not in ("null", "true", "false", "yes", "no", "on", "off", "y", "n")
    ):
        return value
    return json.dumps(value, ensure_ascii=False)


def add_enum_descriptions(prop: dict[str, Any], value_docs: dict[Any, str]) -> None:
    """Attach one description per allowed value to every node that lists the values (what editors read)."""
    for node in enum_nodes(prop):
        if all(value in value_docs for value in node["enum"]):
            texts = [value_docs[value] for value in node["enum"]]
            node["enumDescriptions"] = texts
            node["markdownEnumDescriptions"] = [f"`{yaml_value(v)}`: {t}" for v, t in zip(node["enum"], texts)]


def range_text(prop: dict[str, Any]) -> str:
    bounds = bounds_of(prop)
    return ", ".join(f"{_BOUND_SIGNS[k]} {yaml_value(v)}" for k, v in bounds.items())


def markdown_description(name: str, prop: dict[str, Any], value_docs: dict[Any, str]) -> str:
    """Description, per-value docs, default, range, example and the rules that read the field."""
    parts = [prop.get("description", "")]
    if value_docs:
        parts.append("\n".join(f"- `{yaml_value(v)}`: {text}" for v, text in value_docs.items()))
    facts = []
    if "default" in prop:
        facts.append(f"**Default:** `{yaml_value(prop['default'])}`")
    if range_text(prop):
        facts.append(f"**Range:** {range_text(prop)}")
    if prop.get("examples"):
        facts.append(f"**Example:** `{name}: {yaml_value(prop['examples'][0])}`")
    if facts:
        parts.append(" · ".join(facts))
    rules = rules_by_field().get(name, ())
    if rules:
        listed = "; ".join(f"`{code}` {title} ({severity})" for code, severity, title in rules)
        parts.append(f"**Checked with other fields by:** {listed}. `grpo codes CODE` explains each.")
    return "\n\n".join(part for part in parts if part)
