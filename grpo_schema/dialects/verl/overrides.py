"""Hydra's verdict on each override of a run, before verl sees the config: its key (an existing key, `+` adding
one, a field of a config dataclass, a free-form mapping) and its value (Hydra's grammar, the field's type)."""

from __future__ import annotations

from typing import Any

from grpo_schema.dialects.verl import codes
from grpo_schema.dialects.verl.fields import FieldTable
from grpo_schema.dialects.verl.hydra_grammar import value_problem
from grpo_schema.dialects.verl.launch import Setting
from grpo_schema.engine.diagnostics import Diagnostic, Fix

# sections whose config class verl declares but never builds them from: verl 0.9.1 reads `reward` as a mapping
# (its reward loop takes reward.reward_kwargs, which DAPO's recipes add with +)
_NOT_BUILT = ("reward",)
# mappings verl hands on whole to another library, whose keys it does not list: ray.init's keyword arguments
_PASSED_ON = ("ray_kwargs.ray_init.",)


def key_problem(setting: Setting, fields: FieldTable, current: dict[str, Any]) -> Diagnostic | None:
    """Hydra's verdict on the key: an override must name an existing key; `+` adds one, and may fill a key whose
    value is null, but not replace a value."""
    field = fields.get(setting.key)
    known = field is not None
    where = {"line": setting.line, "column": setting.column, "fields": (setting.key,)}
    if field is not None and field.absent:
        return None if setting.op != "" else _absent_key(setting, fields, where)
    if setting.op == "+" and known and (current.get(setting.key) is not None or fields.get(setting.key).type == "dict"):
        return Diagnostic(
            codes.APPEND_EXISTING,
            "error",
            f"+{setting.key} adds a key verl already has",
            **where,
            hint=f"write {setting.key}={setting.text}",
            fix=Fix(set={setting.key: setting.value}, title="override instead of adding"),
        )
    if known or setting.op == "~":
        return None
    if setting.op == "":
        return _unknown_key(setting, fields, where)
    parent = fields.nearest_parent(setting.key)
    if fields.is_dataclass_node(parent) and parent not in _NOT_BUILT:
        return _not_a_dataclass_field(setting, fields, parent, where)
    if fields.inside_dataclass(setting.key) or setting.key.startswith(_PASSED_ON):
        return None  # a key of a free-form mapping (engine_kwargs, ray.init's arguments, ...): read as given
    how = "the file adds it" if setting.op == "file" else f"`{setting.op}` adds it"
    return Diagnostic(
        codes.ADDED_KEY,
        "warning",
        f"{setting.key} is not a key of verl {fields.release}'s "
        f"{fields.base} config ({how}); verl's trainer does not read it",
        **where,
        hint=_did_you_mean(setting.key, fields) or "a recipe or fork of verl may read it",
    )


def _absent_key(setting: Setting, fields: FieldTable, where: dict[str, Any]) -> Diagnostic:
    return Diagnostic(
        codes.UNKNOWN_KEY,
        "error",
        f"{setting.key} is a field of verl {fields.release}'s config class "
        f"but not of its {fields.base} YAML, so Hydra refuses to override it",
        **where,
        hint=f"add it: +{setting.key}={setting.text}",
    )


def _unknown_key(setting: Setting, fields: FieldTable, where: dict[str, Any]) -> Diagnostic:
    suggestion = fields.suggestion(setting.key)
    return Diagnostic(
        codes.UNKNOWN_KEY,
        "error",
        f"{setting.key} is not a key of verl {fields.release}'s {fields.base} config: Hydra refuses the override",
        **where,
        hint=(f"did you mean {suggestion}? " if suggestion else "")
        + f"to add a key of your own, write +{setting.key}=...",
        fix=Fix(rename={setting.key: suggestion}, safe=False, title=f"rename to {suggestion}") if suggestion else None,
    )


def _not_a_dataclass_field(setting: Setting, fields: FieldTable, parent: str, where: dict[str, Any]) -> Diagnostic:
    actor = parent.startswith("actor_rollout_ref.actor")
    when = "before Ray starts" if actor else "when its worker builds it, on the cluster"
    hint = _did_you_mean(setting.key, fields) or f"{parent} takes only the fields of its config class"
    code = codes.DATACLASS_KEY if actor else codes.WORKER_DATACLASS_KEY
    return Diagnostic(
        code,
        "error",
        f"{setting.key}: verl builds {parent} as a config dataclass, "
        f"which has no field {setting.key.rsplit('.', 1)[1]!r}; it fails {when}",
        **where,
        hint=hint,
    )


def _did_you_mean(key: str, fields: FieldTable) -> str:
    suggestion = fields.suggestion(key)
    return f"did you mean {suggestion}?" if suggestion else ""


_PYTHON_TYPES = {"int": (int,), "float": (int, float), "bool": (bool,)}


def override_value_problem(setting: Setting, fields: FieldTable) -> Diagnostic | None:
    grammar = value_problem(setting.text) if setting.known and setting.text and setting.op != "file" else None
    if grammar is not None:
        return Diagnostic(
            codes.BAD_OVERRIDE,
            "error",
            f"the value of {setting.key}, {setting.text!r}, does not parse as a Hydra override: {grammar}",
            line=setting.line,
            column=setting.column,
            fields=(setting.key,),
            hint="quote the value for Hydra inside the shell's quotes: 'key=\"a value\"', and lists as 'key=[a,b]'",
        )
    field = fields.get(setting.key)
    if field is None or not setting.known or field.type not in _PYTHON_TYPES:
        return None
    value = setting.value
    if value is None and field.nullable:
        return None
    wanted = _PYTHON_TYPES[field.type]
    if isinstance(value, wanted) and not (isinstance(value, bool) and field.type != "bool"):
        return None
    if field.type == "float" and isinstance(value, str) and _float_text(value):
        return None
    return Diagnostic(
        codes.BAD_VALUE,
        "error",
        f"{setting.key} is {setting.text!r}, not {_article(field.type)}",
        line=setting.line,
        column=setting.column,
        fields=(setting.key,),
        hint=f"verl's default is {field.default!r}" if field.default is not None else "",
    )


def _float_text(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _article(kind: str) -> str:
    return {"int": "a whole number", "float": "a number", "bool": "true or false"}[kind]
