"""Typing the sorted keys, each group against its compiled model (the config's fields, the `accelerate launch`
keys, each profile's arguments): every field is validated, and a failed one falls back to its default so that the
rest can still be checked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from pydantic_core import ValidationError

from grpo_schema.engine import codes
from grpo_schema.engine.coerce import NOTES
from grpo_schema.engine.compiled import CompiledModel, compiled
from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.fielderrors import field_diagnostics
from grpo_schema.engine.profiles import Profile
from grpo_schema.engine.view import ConfigView

if TYPE_CHECKING:
    from grpo_schema.engine.keys import SortedKeys
    from grpo_schema.engine.release import Reading


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


def typed_config(reading: Reading, keys: SortedKeys) -> tuple[ConfigView, set[str], list[Diagnostic]]:
    """The fields validated against 1.16's types, with the release's defaults for keys the file leaves out; the
    diagnostics include those of the values written under renamed keys (validated, not read)."""
    typed = {k: v for k, v in keys.fields.items() if k not in reading.kept}
    config, failed, field_diags = validate_fields(compiled("config"), {**reading.implicit, **typed})
    if reading.kept:  # values the release's own value lists accept (optim: adamw_hf at 0.14), held as written
        config = ConfigView({**config._values, **{k: v for k, v in reading.kept.items() if k in keys.fields}})
    renamed_diags = validate_fields(compiled("config"), keys.renamed)[2] if keys.renamed else []
    return config, failed, field_diags + renamed_diags


def launch_of(
    launch_keys: dict[str, Any], reading_diagnostics: list[Diagnostic]
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The launch keys validated, less the findings a release's reading has already made about them."""
    launch, launch_diags = validate_launch(launch_keys)
    not_taken = {d.fields[0] for d in reading_diagnostics if d.code == codes.K_LAUNCH_NOT_IN_RELEASE}
    # one finding per cause: a launch key the release's `trl grpo` does not take is not also one it forwards
    launch_diags = [d for d in launch_diags if not (d.code == codes.K_LAUNCH and d.fields[0] in not_taken)]
    return launch, launch_diags
