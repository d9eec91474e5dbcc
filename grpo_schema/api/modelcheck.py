"""The bridge between the rule engine and the Pydantic model: one engine, pydantic's error shape.

`GRPORunConfig.model_validate(data, context={...})` hands the raw input to `check_mapping` (the engine behind
`grpo validate`, the service, the form and the language server) and turns its error diagnostics into one
`pydantic.ValidationError`: each line's `type` is the stable code (`GRPO-B001`), `loc` the fields, `msg` the
message, `ctx` the hint, the fix and the position. Warnings and infos never raise; they stay on the instance.

The engine validates fields with the compiled validators (grpo_schema.engine.compiled), never with GRPORunConfig itself,
so building the model cannot recurse into it; the instance is then built from the fields the engine accepted,
with `TRUSTED` in the context so that the hook does not run the engine a second time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeVar

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from grpo_schema.engine.check import CheckResult
from grpo_schema.engine.check_input import Override
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.placing import path_of
from grpo_schema.engine.validate import check_mapping

if TYPE_CHECKING:
    from grpo_schema.api.config import GRPORunConfig

# Context key that marks input the engine has already checked (set by this module only).
TRUSTED = "grpo_schema.checked"
# Validation-context keys the engine reads, as check_mapping's keyword arguments.
CONTEXT_OPTIONS = ("world_size", "profiles", "allow_env", "overrides", "suggest_fixes", "trl_version")
_ALIASES = {"allowed_env": "allow_env", "env_allowlist": "allow_env"}

Model = TypeVar("Model", bound="GRPORunConfig")


def engine_options(context: Mapping[str, Any] | None) -> dict[str, Any]:
    """check_mapping's options from a validation context: world_size, profiles, allow_env, overrides.

    Profiles are names or Profile objects; a 'module:ATTR' name is never imported from here (the CLI's
    `--profile` does that), so a validation context cannot make grpo-config import code."""
    options: dict[str, Any] = {}
    for key, value in (context or {}).items():
        name = _ALIASES.get(key, key)
        if name in CONTEXT_OPTIONS:
            options[name] = value
    if isinstance(options.get("profiles"), str):
        options["profiles"] = (options["profiles"],)
    if isinstance(options.get("allow_env"), str):
        options["allow_env"] = (options["allow_env"],)
    if options.get("trl_version") is not None:  # a release the tables cannot judge: VersionError, a ValueError
        from grpo_schema.versions import parse_version

        parse_version(str(options["trl_version"]))
        options["trl_version"], options["trl_version_source"] = str(options["trl_version"]), "flag"
    return options


def run_engine(data: Any, context: Mapping[str, Any] | None) -> CheckResult:
    """check_mapping on a model's raw input, with the options the context declares."""
    options = engine_options(context)
    try:
        return check_mapping(data, path="<model>", **options)
    except KeyError as exc:  # an unknown profile name: a usage error, like `grpo validate --profile NAME`
        from grpo_schema.engine.profiles import known_profiles

        known = ", ".join(sorted(known_profiles()))
        raise ValueError(f"unknown profile {exc}; known profiles: {known} (or pass a Profile object)") from None


def errors_of(result: CheckResult) -> list[Diagnostic]:
    return [d for d in result.diagnostics if d.severity == "error"]


def validation_error(title: str, result: CheckResult) -> ValidationError:
    """One ValidationError with a line per error diagnostic, in the engine's order."""
    lines = [_line(d, result.raw) for d in errors_of(result)]
    return ValidationError.from_exception_data(title, lines)


def loc_of(diagnostic: Diagnostic) -> tuple[str | int, ...]:
    """One field: its path (('datasets', 0, 'path')); several: the field names, in order; none: ()."""
    if len(diagnostic.fields) == 1:
        return path_of(diagnostic.fields[0])
    return tuple(diagnostic.fields)


def _line(diagnostic: Diagnostic, raw: Mapping[str, Any]) -> InitErrorDetails:
    ctx: dict[str, Any] = {
        "hint": diagnostic.hint,
        "fix": diagnostic.fix.to_dict() if diagnostic.fix else None,
        "fields": list(diagnostic.fields),
        "line": diagnostic.line,
        "column": diagnostic.column,
    }
    if diagnostic.alternatives:
        ctx["alternatives"] = [fix.to_dict() for fix in diagnostic.alternatives]
    error = PydanticCustomError(diagnostic.code, _template(diagnostic.message, ctx), ctx)
    return InitErrorDetails(type=error, loc=loc_of(diagnostic), input=_input_of(diagnostic, raw))


def _template(message: str, ctx: Mapping[str, Any]) -> str:
    """The message as pydantic's template. pydantic-core replaces `{key}` for each ctx key (and has no escape), so
    a value quoted in the message that reads `{hint}` would be replaced: break such a placeholder apart."""
    for key in ctx:
        message = message.replace("{" + key + "}", "{\u200b" + key + "}")
    return message


def _input_of(diagnostic: Diagnostic, raw: Mapping[str, Any]) -> Any:
    """The value(s) the error is about, as given: one field's value, {field: value} for several, else the input."""
    if not diagnostic.fields:
        return dict(raw)
    values = {name: _value_at(raw, path_of(name)) for name in diagnostic.fields}
    given = {name: value for name, value in values.items() if value is not _MISSING}
    return given.get(diagnostic.fields[0]) if len(diagnostic.fields) == 1 else given


_MISSING = object()


def _value_at(raw: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        try:
            raw = raw[part]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return raw


def checked_fields(result: CheckResult) -> dict[str, Any]:
    """The TRL fields the engine accepted, as given (the instance's `model_fields_set`)."""
    from grpo_schema.engine.params.areas import FIELD_NAMES  # the pydantic models: loaded on first use

    return {key: value for key, value in result.raw.items() if key in FIELD_NAMES}


def validate_hook(
    cls: type[Model], data: Any, handler: Callable[[Any], Model], context: Mapping[str, Any] | None
) -> Model:
    """The body of GRPORunConfig's model validator: the engine first, then pydantic builds the instance."""
    if isinstance(data, cls) or (context is not None and context.get(TRUSTED)):
        return handler(data)
    result = run_engine(data, context)
    if errors_of(result):
        raise validation_error(cls.__name__, result)
    return attach(handler(checked_fields(result)), result)


def from_result(cls: type[Model], result: CheckResult, context: Mapping[str, Any] | None = None) -> Model:
    """The model for an engine result (from_yaml), or the ValidationError of its errors."""
    if errors_of(result):
        raise validation_error(cls.__name__, result)
    instance = cls.model_validate(checked_fields(result), context={**(context or {}), TRUSTED: True})
    return attach(instance, result)


def attach(instance: Model, result: CheckResult) -> Model:
    instance._result = result
    return instance


def as_overrides(items: Any) -> list[Override | str]:
    """Overrides from a mapping ({key: value}) or a list of Override / 'KEY=VALUE' strings."""
    if isinstance(items, Mapping):
        return [Override(str(key), value, f"override {key}") for key, value in items.items()]
    return list(items or ())
