"""The JSON Schema for a config written for an older TRL release (schemas/trl-X.Y.Z/grpo-config.schema.json).

TRL 1.16's schema, documented and laid out as the form reads it, made to say what that release reads: its keys
(old names such as torch_dtype and max_prompt_length included, 1.16's newer keys left out), its types and defaults
(scale_rewards a boolean up to 0.21, loss_type bnpo in 0.19), its own deprecations (and none of 1.16's it lacks),
texts that name no key it lacks, and `accelerate launch` keys only where its `trl grpo` hands them on (0.29 on). Built from grpo_schema.versions' tables, which come from each release's source.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from grpo_schema.engine.codes import D_IN_RELEASE
from grpo_schema.engine.release import REFERENCE
from grpo_schema.engine.release_choices import accepted_by, accepted_values
from grpo_schema.engine.release_deprecations import deprecation
from grpo_schema.engine.release_texts import for_release
from grpo_schema.schema_export.layout import PROFILE_GROUP_PREFIX
from grpo_schema.versions import FieldInfo, ReleaseSurface, surface

JSON_TYPES = {
    "bool": "boolean",
    "int": "integer",
    "float": "number",
    "str": "string",
    "list": "array",
    "dict": "object",
}
OWN_SECTIONS = ("env", "hardware")  # grpo-config's own sections, read by every release's check


def release_schema(base: dict[str, Any], release: ReleaseSurface, launch_keys: frozenset[str]) -> dict[str, Any]:
    """`base` (the 1.16 schema) reshaped for `release`."""
    schema = copy.deepcopy(base)
    properties: dict[str, Any] = schema["properties"]
    takes_launch_keys = release.front_end.unknown_keys == "accelerate"
    for name in list(properties):
        if name in OWN_SECTIONS or (name in launch_keys and takes_launch_keys) or _script_key(properties[name]):
            continue
        if name not in release.fields:
            del properties[name]
    for name, info in release.fields.items():
        if _script_key(properties.get(name)):  # a profile's own key wins, as in the 1.16 schema
            continue
        properties[name] = _property(properties.get(name), info, release.release)
        allowed = accepted_values(name, release)  # the release's own value list, as its check judges
        if allowed:
            _restrict(properties[name], allowed, accepted_by(name, release))
        if name == "reward_funcs":
            _release_rewards(properties[name], release)
        _said_for_release(properties[name], name, release)
    if not takes_launch_keys:
        schema.pop("patternProperties", None)
    schema["title"] = f"grpo-config for TRL {release.release}"
    schema["description"] = (
        f"A `trl grpo --config` file for TRL {release.release} (its keys, types and defaults; "
        f"TrainingArguments of transformers {release.transformers})."
    )
    schema["x-trl-release"] = release.release
    schema["allOf"] = [rule for rule in schema.get("allOf", []) if _mentions_only(rule, properties)]
    return schema


def _script_key(prop: dict[str, Any] | None) -> bool:
    """A key of a profile's script (open-r1's system_prompt, ...): its script reads it at every TRL release, and
    every release's check takes it under that profile."""
    return isinstance(prop, dict) and str(prop.get("x-group", "")).startswith(PROFILE_GROUP_PREFIX)


def _property(prop: dict[str, Any] | None, info: FieldInfo, release: str) -> dict[str, Any]:
    """A 1.16 property with this release's type and default, or a plain one for a key 1.16 no longer reads."""
    if prop is None or "not" in prop:  # absent from 1.16, or 1.16's entry refusing a renamed / removed key
        prop = {"title": info.name.replace("_", " ").title(), "description": f"Read by TRL {release} ({info.source})."}
    else:
        prop = dict(prop)
    kind = JSON_TYPES.get(info.type)
    if kind is not None and not _read_as_reference(info) and not _json_types(prop) <= _fits(kind):
        prop = _retyped(prop, info, kind, release)
    if info.choices and info.type == "str" and "enum" not in prop and "anyOf" not in prop:
        prop["enum"] = list(info.choices) + ([None] if info.nullable else [])
    if not info.required and info.default_expr is None and info.post_init is None:
        prop["default"] = info.default
        if isinstance(prop.get("markdownDescription"), str):  # the hover text says the release's default
            said = f"**Default:** `{_yaml(info.default)}`"
            prop["markdownDescription"] = re.sub(
                r"\*\*Default:\*\* `[^`]*`", lambda _: said, prop["markdownDescription"]
            )
    else:
        prop.pop("default", None)
    return prop


def _read_as_reference(info: FieldInfo) -> bool:
    """Whether the release reads the key as 1.16 does (same type, same conversion after parsing): then 1.16's
    property says what it takes (0.22's scale_rewards: the named values, true and false mapped onto them)."""
    reference = surface(REFERENCE).fields.get(info.name)
    return reference is not None and (reference.type, reference.post_init) == (info.type, info.post_init)


def _fits(kind: str) -> set[str]:
    return {kind, "integer"} if kind == "number" else {kind}


def _retyped(prop: dict[str, Any], info: FieldInfo, kind: str, release: str) -> dict[str, Any]:
    """1.16's property for a key the release reads as another type (scale_rewards, a boolean up to 0.21): the
    release's type, and of 1.16's value lists only one of that type (its values and their texts)."""
    named_values = any(isinstance(v, str) for node in _nodes(prop) for v in node.get("enum", []))
    kept = next((node for node in _nodes(prop)[1:] if node.get("enum") and _json_types(node) <= _fits(kind)), {})
    for key in _VALUE_KEYS:
        prop.pop(key, None)
    for key in ("enum", "enumDescriptions", "markdownEnumDescriptions"):
        if key in kept:
            prop[key] = list(kept[key])
    prop["type"] = [kind, "null"] if info.nullable else kind
    if kind == "boolean" and named_values:  # 1.16's texts describe the named values that replaced the boolean
        # (scale_rewards' 'group' / 'batch' / 'none' from 0.22), which this release refuses
        said = f"Read by TRL {release} as a boolean, true or false ({info.source}); the named values came later."
        prop["description"], prop["markdownDescription"] = said, said + "\n\n**Default:** `null`"
    return prop


_VALUE_KEYS = (
    "anyOf",
    "enum",
    "const",
    "enumDescriptions",
    "markdownEnumDescriptions",
    "items",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "examples",
    "defaultSnippets",
    "not",
)


def _nodes(prop: dict[str, Any]) -> list[dict[str, Any]]:
    """The property and its anyOf branches: where a value list may stand."""
    return [prop, *[o for o in prop.get("anyOf", []) if isinstance(o, dict)]]


def _yaml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return value if isinstance(value, str) else json.dumps(value)


def _restrict(prop: dict[str, Any], allowed: tuple[str, ...], said: str) -> None:
    """Offer exactly the string values the release accepts (0.19's trainer: grpo, bnpo, dr_grpo of 1.16's eight
    loss types; 0.16's transformers: its optimizers and schedules), each with 1.16's text where 1.16 has the value,
    else `said` (who accepts it)."""
    lists = [node for node in _nodes(prop) if any(isinstance(v, str) for v in node.get("enum", []))]
    if not lists:
        prop["enum"] = list(allowed) + ([None] if "null" in _listed_types(prop) else [])
        return
    for node in lists:
        texts = {key: dict(zip(node["enum"], node[key])) for key in _TEXT_KEYS if _aligned(node, key)}
        values = [v for v in node["enum"] if isinstance(v, str) and v in allowed]
        values += [v for v in allowed if v not in values]
        values += [v for v in node["enum"] if not isinstance(v, str)]  # null, true / false stay
        node["enum"] = values
        for key in texts:
            node[key] = [texts[key].get(v, _new_value_text(key, v, said)) for v in values]
    if "markdownDescription" in prop:  # the value list of the hover text: `- `cispo`: ...` lines
        lines = prop["markdownDescription"].split("\n")
        prop["markdownDescription"] = "\n".join(line for line in lines if _listed_value(line) in (None, *allowed))
    for key in ("examples", "defaultSnippets"):
        if isinstance(prop.get(key), list):
            kept = [e for e in prop[key] if not isinstance(e, str) or e in allowed]
            if kept:
                prop[key] = kept
            else:
                prop.pop(key)


_TEXT_KEYS = ("enumDescriptions", "markdownEnumDescriptions")


def _listed_value(line: str) -> str | None:
    """The string value a hover text's value line describes (`- `cispo`: ...`, `- `"no"`: ...`, quoted where
    YAML needs it), None for any other line and for true / false."""
    if not line.startswith("- `") or "`:" not in line:
        return None
    value = line[3 : line.index("`:")]
    return None if value in ("true", "false") else value.strip('"')


def _aligned(node: dict[str, Any], key: str) -> bool:
    return isinstance(node.get(key), list) and len(node[key]) == len(node["enum"])


def _new_value_text(key: str, value: Any, said: str) -> str:
    return f"`{value}`: {said}" if key == "markdownEnumDescriptions" else said


def _listed_types(prop: dict[str, Any]) -> set[str]:
    kind = prop.get("type")
    return set(kind if isinstance(kind, list) else [kind] if kind else [])


# 1.16's text names its script's registry: "(TRL's script: accuracy_reward, ..., get_soft_overlong_punishment)".
_SCRIPT_NAMES = re.compile(r"\(TRL's script: [^)]*\)")


def _release_rewards(prop: dict[str, Any], release: ReleaseSurface) -> None:
    """The reward names of the release's own `trl grpo` script (0.19: think_format_reward alone), in the names
    offered and in the texts; another project's names stay (they are GRPO-R007 at every release)."""
    from grpo_schema.engine.check import TRL_REWARD_FUNCS
    from grpo_schema.engine.profiles import known_profiles

    kept = set(release.reward_funcs).union(*(p.reward_funcs for p in known_profiles().values()))
    gone = set(TRL_REWARD_FUNCS) - kept
    for branch in prop.get("anyOf", [prop]):
        for item in (branch.get("items") or {}).get("anyOf", []):
            if isinstance(item.get("enum"), list):
                item["enum"] = [n for n in item["enum"] if n not in gone]
    names = ", ".join(release.reward_funcs) or "none: it takes only reward_model_name_or_path"
    example = list(release.reward_funcs[:2])
    for key in ("description", "markdownDescription"):
        if isinstance(prop.get(key), str):
            prop[key] = _SCRIPT_NAMES.sub(lambda _: f"(TRL {release.release}'s script: {names})", prop[key])
    if isinstance(prop.get("markdownDescription"), str) and example:  # the hover's example: names it resolves
        said = f"**Example:** `reward_funcs: {json.dumps(example)}`"
        prop["markdownDescription"] = re.sub(
            r"\*\*Example:\*\* `reward_funcs: [^`]*`",
            lambda m: said if any(n in m.group(0) for n in gone) else m.group(0),
            prop["markdownDescription"],
        )
    if isinstance(prop.get("examples"), list):
        kept_examples = [e for e in prop["examples"] if not (isinstance(e, list) and set(e) & gone)]
        if kept_examples or example:
            prop["examples"] = kept_examples or [example]
        else:
            prop.pop("examples")


def _said_for_release(prop: dict[str, Any], name: str, release: ReleaseSurface) -> None:
    """The texts as they hold for the release (engine.release_texts.for_release: no key it lacks, no deprecation it
    does not have), and the deprecation marks of the release's own deprecations, each naming what it reads instead."""
    for key in ("deprecated", "deprecationMessage", "markdownDeprecationMessage"):
        prop.pop(key, None)
    fallback = f"Read by TRL {release.release} ({release.fields[name].source})."
    for key in ("description", "markdownDescription"):
        if isinstance(prop.get(key), str):
            prop[key] = for_release(prop[key], name, release, fallback)
    for key in ("enumDescriptions", "markdownEnumDescriptions"):
        if isinstance(prop.get(key), list):
            prop[key] = [for_release(t, name, release) if isinstance(t, str) else t for t in prop[key]]
    if name in release.deprecations:
        prop["deprecated"] = True
        prop["deprecationMessage"] = deprecation(name, release.deprecations[name], release, D_IN_RELEASE).message


def _json_types(prop: dict[str, Any]) -> set[str]:
    """The JSON types a property allows, null aside (an empty set: not stated)."""
    kind = prop.get("type")
    kinds = set(kind if isinstance(kind, list) else [kind] if kind else [])
    for option in prop.get("anyOf", []):
        kinds |= _json_types(option) if isinstance(option, dict) else set()
    if "enum" in prop:
        kinds |= {JSON_TYPES.get(type(v).__name__, "string") for v in prop["enum"] if v is not None}
    return kinds - {"null"}


def _mentions_only(rule: Any, properties: dict[str, Any]) -> bool:
    """Whether a conditional of the 1.16 schema names only keys this release's schema still has."""
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            names.update(node.get("required", []) if isinstance(node.get("required"), list) else [])
            names.update(node.get("properties", {}) if isinstance(node.get("properties"), dict) else {})
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(rule)
    return names <= set(properties)
