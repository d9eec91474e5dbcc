"""Typing the sorted keys, each group against its compiled model (the config's fields, the `accelerate launch`
keys, each profile's arguments): every field is validated, and a failed one falls back to its default so that the
rest can still be checked."""

from __future__ import annotations

from typing import Any, cast

from pydantic_core import ValidationError

from grpo_schema.engine import codes
from grpo_schema.engine.coerce import NOTES
from grpo_schema.engine.compiled import CompiledModel, compiled
from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.fielderrors import field_diagnostics
from grpo_schema.engine.profiles import Profile
from grpo_schema.engine.view import ConfigView


def validate_fields(model: CompiledModel, given: dict[str, Any]) -> tuple[ConfigView, set[str], list[Diagnostic]]:
    """Validate every field; failed fields fall back to their defaults so the rest can still be checked."""
    context: dict[str, Any] = {}
    try:
        values = model.validate(given, context)
        return ConfigView(values, model.nested, owned=True), set(), _notes(context)
    except ValidationError as exc:
        diagnostics, failed = field_diagnostics(
            model.fields, cast("list[dict[str, Any]]", exc.errors(include_url=False)), given
        )
    context = {}
    values = model.validate({k: v for k, v in given.items() if k not in failed}, context)
    return ConfigView(values, model.nested, owned=True), failed, diagnostics + _notes(context)


def _notes(context: dict[str, Any]) -> list[Diagnostic]:
    return [
        Diagnostic(
            code,
            "warning",
            f"{name}: {message}",
            fields=(name,),
            hint=message,
            fix=Fix(set={name: value}, title=f"write {value}"),
        )
        for name, code, message, value in context.get(NOTES, [])
    ]


def validate_launch(launch: dict[str, Any]) -> tuple[dict[str, Any], list[Diagnostic]]:
    model = compiled("launch")
    typed = {k: v for k, v in launch.items() if k in model.fields}
    infos = [
        Diagnostic(
            codes.K_LAUNCH, "info", f"{key} is an `accelerate launch` option; `trl grpo` forwards it", fields=(key,)
        )
        for key in launch
    ]
    view, failed, diagnostics = validate_fields(model, typed)
    return (
        {
            **{k: v for k, v in launch.items() if k not in failed},
            **{k: getattr(view, k) for k in typed if k not in failed},
        },
        infos + diagnostics,
    )


def validate_profiles(
    active: tuple[Profile, ...], args: dict[str, dict[str, Any]]
) -> tuple[dict[str, ConfigView], list[Diagnostic]]:
    parsed: dict[str, ConfigView] = {}
    diagnostics: list[Diagnostic] = []
    for profile in active:
        view, _, found = validate_fields(profile.validator, args.get(profile.name, {}))
        parsed[profile.name] = view
        diagnostics += found
    return parsed, diagnostics
