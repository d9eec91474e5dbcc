"""Assemble the schema body: TRL fields, launch keys, `env:`, profile keys and legacy keys, each documented.

The order of steps matters: documentation (examples, markdownDescription) is written once every property has
its final shape, and layout last, so the form order follows the sections.
"""

from __future__ import annotations

from typing import Any

from grpo_schema.schema_export import docs, layout, legacy
from grpo_schema.schema_export.conditionals import conditional_schemas
from grpo_schema.schema_export.envsection import env_property
from grpo_schema.schema_export.hardwaresection import hardware_property
from grpo_schema.schema_export.profiles import reward_item_schema, script_args_model, set_reward_items
from grpo_schema.schema_export.properties import derived_examples, enum_values, model_properties
from grpo_schema.schema_export.snippets import default_snippets

# Key order inside each property, for readable diffs of the committed files; unlisted keys keep their place.
_KEY_ORDER = (
    "title",
    "description",
    "markdownDescription",
    "deprecated",
    "deprecationMessage",
    "type",
    "const",
    "enum",
    "enumDescriptions",
    "markdownEnumDescriptions",
    "anyOf",
    "items",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "default",
    "examples",
)
LAUNCH_PATTERN_DOC = (
    "An `accelerate launch` option of one of its families (fsdp_*, deepspeed_*, dynamo_*, ...); "
    "`trl grpo` forwards it to `accelerate launch`."
)


def _document(properties: dict[str, Any], value_docs: dict[str, dict[Any, str]]) -> None:
    for name, prop in properties.items():
        if "examples" not in prop and derived_examples(prop):
            prop["examples"] = derived_examples(prop)
        own_docs = value_docs.get(name, {})
        docs.add_enum_descriptions(prop, own_docs)
        prop["markdownDescription"] = docs.markdown_description(name, prop, own_docs)


def _value_docs(model: Any) -> dict[str, dict[Any, str]]:
    """Per-value docs declared by a model class and its bases (the `value_docs` class attribute)."""
    merged: dict[str, dict[Any, str]] = {}
    for cls in reversed(getattr(model, "__mro__", ())):
        merged.update(cls.__dict__.get("value_docs", {}) or {})
    return merged


def _trl_fields(groups: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    from grpo_schema.api.config import AREA_CLASSES, GRPORunConfig

    properties, defs = model_properties(GRPORunConfig)
    value_docs: dict[str, dict[Any, str]] = {}
    for area in AREA_CLASSES:
        value_docs.update(_value_docs(area))
    legacy.mark_deprecated(properties)
    _document(properties, value_docs)
    for area in AREA_CLASSES:
        names = [n for n in area.model_fields if n in properties and "x-group" not in properties[n]]
        layout.place(properties, (area.area, area.title, area.summary), groups, names)
    return properties, defs


def _launch_fields(properties: dict[str, Any], groups: list[dict[str, Any]]) -> dict[str, Any]:
    from grpo_schema.engine.keys import LAUNCH_PREFIXES
    from grpo_schema.engine.params.launch import LaunchParams

    launch, _ = model_properties(LaunchParams)
    _document(launch, _value_docs(LaunchParams))
    properties.update(launch)
    layout.place(properties, (LaunchParams.area, LaunchParams.title, LaunchParams.summary), groups, list(launch))
    pattern = "^(" + "|".join(LAUNCH_PREFIXES) + ")"
    return {pattern: {"description": LAUNCH_PATTERN_DOC, "markdownDescription": LAUNCH_PATTERN_DOC}}


def _profile_fields(properties: dict[str, Any], defs: dict[str, Any], active: tuple, groups: list) -> None:
    for profile in active:
        model = script_args_model(profile)
        extra, extra_defs = model_properties(model)
        _document(extra, _value_docs(model))
        defs.update(extra_defs)
        properties.update(extra)  # a profile's own key wins (open-r1 still reads wandb_log_unique_prompts)
        group = (
            f"{layout.PROFILE_GROUP_PREFIX}{profile.name}",
            f"{profile.name} script arguments",
            profile.description,
        )
        layout.place(properties, group, groups, list(extra))


def _legacy_fields(properties: dict[str, Any], groups: list[dict[str, Any]]) -> None:
    old = legacy.migrated_properties(skip=frozenset(properties))
    properties.update(old)
    layout.place(properties, legacy.LEGACY_GROUP, groups, list(old))


def _tidy(prop: dict[str, Any]) -> dict[str, Any]:
    rank = {key: i for i, key in enumerate(_KEY_ORDER)}
    return dict(sorted(prop.items(), key=lambda item: (item[0].startswith("x-"), rank.get(item[0], len(rank)))))


def build_schema(active: tuple, lenient: bool) -> dict[str, Any]:
    groups: list[dict[str, Any]] = []
    properties, defs = _trl_fields(groups)
    patterns = _launch_fields(properties, groups)
    properties["env"] = env_property(lenient)
    layout.place(properties, ("env", "Environment variables", properties["env"]["description"]), groups, ["env"])
    properties["hardware"] = hardware_property()
    layout.place(
        properties, ("hardware", "Hardware (grpo plan)", properties["hardware"]["description"]), groups, ["hardware"]
    )
    _profile_fields(properties, defs, active, groups)
    for nested in defs.values():  # datasets entries, an open-r1 mixture, ...
        _document(nested.get("properties", {}), {})
    set_reward_items(properties, reward_item_schema(active, lenient), active)
    _legacy_fields(properties, groups)
    choices = {name: enum_values(prop) for name, prop in properties.items()}
    properties = {name: _tidy(prop) for name, prop in properties.items()}
    body: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "patternProperties": patterns,
        "additionalProperties": lenient,
        "allOf": conditional_schemas(choices),
    }
    if defs:
        body["$defs"] = defs
    body["defaultSnippets"] = default_snippets()
    body["x-groups"] = groups
    return body
