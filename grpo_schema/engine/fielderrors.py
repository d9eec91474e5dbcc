"""Pydantic validation errors -> coded diagnostics that name the field, the value and the fix.

Pydantic reports one error per failed union branch with terse, internal wording. Here the errors of one field
are folded into one diagnostic whose message states what the field takes ("an integer >= 2", "a number in
(0, 1]", "one of grpo, dr_grpo, ...") and the value given, with a did-you-mean for misspelled choices.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from grpo_schema.engine import codes
from grpo_schema.engine.diagnostics import Diagnostic, Fix, show_value

_CUSTOM_CODES = {
    "grpo_bool_for_number": codes.T_TYPE,
    "grpo_int_string": codes.T_TYPE,
    "grpo_json": codes.T_JSON,
    "grpo_scalar_for_list": codes.T_SCALAR_FOR_LIST,
    "grpo_yaml_bool": codes.T_YAML_BOOL,
    "grpo_pad_multiple": codes.T_TYPE,
    "grpo_choice_words": codes.T_CHOICE,
    "grpo_int_too_large": codes.T_RANGE,
    "grpo_bool_string": codes.T_BOOL_STRING,
    "grpo_bool_option": codes.T_BOOL_OPTION,
}
_RANGE_TYPES = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}
_NOISE = {"none_required", "is_instance_of"}


# Per-field facts (computed from the pydantic FieldInfo by grpo_schema.engine.compiled, cached with the validator):
# {"expected": "an integer >= 2", "choices": [...], "only_choices": bool, "nested": bool, "default": ...}
Facts = dict[str, Any]


def field_diagnostics(
    facts: dict[str, Facts], errors: list[dict[str, Any]], given: dict[str, Any], prefix: str = ""
) -> tuple[list[Diagnostic], set[str]]:
    """One diagnostic per failed top-level key of `given`; also returns the failed keys."""
    by_field: dict[str, list[dict[str, Any]]] = {}
    for error in errors:
        by_field.setdefault(str(error["loc"][0]) if error["loc"] else "", []).append(error)
    out = []
    for name, field_errors in by_field.items():
        fact = facts.get(name)
        if fact is None:
            continue
        if fact["nested"]:
            out.extend(_nested(name, field_errors, prefix, given.get(name)))
        else:
            out.append(_one_field(prefix + name, fact, field_errors, given.get(name)))
    return out, set(by_field)


def nested_model(info: Any) -> Any:
    """The model class a field holds (directly, in a list or optional), else None."""
    from pydantic import BaseModel

    def walk(annotation: Any) -> Any:
        annotation = _strip(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return annotation
        return next((found for arg in typing.get_args(annotation) if (found := walk(arg)) is not None), None)

    return walk(info.annotation)


def _input_loc(loc: tuple[Any, ...], value: Any, missing: bool) -> list[Any]:
    """The parts of an error location that index the input (keys as written, list indices), without the tags
    pydantic inserts for union members and validators ('list[...]', 'DatasetEntry', 'function-after[...]').
    A missing key is kept although the input lacks it."""
    out = []
    for i, part in enumerate(loc):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        elif not (missing and i == len(loc) - 1):
            continue
        out.append(part)
    return out


def _nested(name: str, errors: list[dict[str, Any]], prefix: str, value: Any) -> list[Diagnostic]:
    """Errors inside nested models (datasets entries, profile mixtures): report each at its own key."""
    out = []
    for error in errors:
        # Tags are told apart from keys by the input itself: a key such as 'Path' or 'a[0]' is kept as written.
        loc = [name] + _input_loc(error["loc"][1:], value, error["type"] == "missing")
        path = prefix + name + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:])
        kind = error["type"]
        if kind == "missing":
            out.append(
                Diagnostic(
                    codes.T_MISSING,
                    "error",
                    f"{path} is required",
                    fields=(path,),
                    hint=f"add {str(loc[-1])}: to this entry",
                )
            )
        elif kind == "extra_forbidden":
            out.append(
                Diagnostic(
                    codes.K_NESTED_UNKNOWN,
                    "error",
                    f"unknown key {str(loc[-1])!r} in {name}",
                    fields=(path,),
                    hint="remove it, or check the spelling",
                )
            )
        else:
            out.append(
                Diagnostic(
                    _code_of([error]),
                    "error",
                    f"{path}: {_plain(error)} (got {show_value(error.get('input'))})",
                    fields=(path,),
                )
            )
    return out


def _plain(error: dict[str, Any]) -> str:
    msg = str(error.get("msg", "invalid value"))
    return msg[0].lower() + msg[1:] if msg else msg


def _code_of(errors: list[dict[str, Any]]) -> str:
    kinds = [e["type"] for e in errors]
    for kind in kinds:
        if kind in _CUSTOM_CODES:
            return _CUSTOM_CODES[kind]
    if any(k in _RANGE_TYPES for k in kinds):
        return codes.T_RANGE
    if any(k in ("literal_error", "enum") for k in kinds):
        return codes.T_CHOICE
    return codes.T_TYPE


def _one_field(name: str, fact: Facts, errors: list[dict[str, Any]], value: Any) -> Diagnostic:
    meaningful = [e for e in errors if e["type"] not in _NOISE] or errors
    code = _code_of(meaningful)
    expected = fact["expected"]
    message = f"{name} must be {expected} (got {show_value(value)})"
    hint, fix = _hint_and_fix(name, fact, meaningful, value)
    if code == codes.T_SCALAR_FOR_LIST:
        message = f"{name} must be a list, not the single value {show_value(value)}" + (
            "; a bare string is iterated character by character" if isinstance(value, str) else ""
        )
    elif code == codes.T_YAML_BOOL:
        message = f"{name}: unquoted no is read by YAML as the boolean false, which is not a valid value"
    elif code == codes.T_JSON:
        message = f"{name} is not a valid JSON object string ({meaningful[0].get('ctx', {}).get('error', '')})"
    elif code in (codes.T_BOOL_STRING, codes.T_BOOL_OPTION):
        message = f"{name}: {_plain(next(e for e in meaningful if e['type'] in _CUSTOM_CODES))}"
    elif any(e["type"] == "grpo_int_too_large" for e in meaningful):
        message = f"{name} must be {expected} (got {show_value(value)}, which does not fit in 64 bits)"
    elif isinstance(value, bool) and code == codes.T_TYPE and "true or false" not in expected:
        message = f"{name} must be {expected}, not a boolean (got {show_value(value)})"
    return Diagnostic(code, "error", message, fields=(name,), hint=hint, fix=fix)


def _hint_and_fix(name: str, fact: Facts, errors: list[dict[str, Any]], value: Any) -> tuple[str, Fix | None]:
    kinds = {e["type"] for e in errors}
    base = name.rsplit(".", 1)[-1]
    choices = fact["choices"]
    expected = fact["expected"]
    if "grpo_scalar_for_list" in kinds:
        return f"write it as a list: {base}: [{value}]", Fix(set={name: [value]}, title="wrap in a list")
    if kinds & {"grpo_bool_string", "grpo_bool_option"}:
        return _bool_string_hint(name, base, errors)
    if "grpo_yaml_bool" in kinds:
        return f'quote it: {base}: "no"', Fix(set={name: "no"}, title="quote no")
    words = (
        [value]
        if isinstance(value, str)
        else [v for v in value if isinstance(v, str)]
        if isinstance(value, list)
        else []
    )
    if any(isinstance(v, (list, dict)) for v in value) if isinstance(value, list) else False:
        return "each item must be a single value; a YAML alias may have inserted a whole list", None
    for word in words:
        match = difflib.get_close_matches(word, [str(c) for c in choices if str(c) != word], n=1, cutoff=0.6)
        if match and word not in choices:
            fixed = match[0] if isinstance(value, str) else [match[0] if v == word else v for v in value]
            return f"did you mean {match[0]}?", Fix(set={name: fixed}, safe=False, title=f"use {match[0]}")
    if isinstance(value, str) and choices and fact["only_choices"]:
        return "use one of " + ", ".join(map(str, choices)), None
    if "grpo_int_string" in kinds and isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            default = fact["default"]
            return f"write a whole number, e.g. {base}: {default if isinstance(default, int) else 1}", None
        if number.is_integer():
            return (
                f"YAML 1.1 reads {value} without a dot as a string; write {base}: {int(number)}",
                Fix(set={name: int(number)}, title=f"write {int(number)}"),
            )
    if base == "vllm_gpu_memory_utilization" and isinstance(value, (int, float)) and 1 < value <= 100:
        return (
            f"it is a fraction, not a percentage: write {base}: {value / 100:g}",
            Fix(set={name: value / 100}, safe=False, title=f"use {value / 100:g}"),
        )
    if kinds & _RANGE_TYPES or "int_from_float" in kinds:
        return f"set {base} to {expected}", None
    if isinstance(value, bool):
        return f"write {expected}, not true/false", None
    return f"write {expected}", None


def _bool_string_hint(name: str, base: str, errors: list[dict[str, Any]]) -> tuple[str, Fix | None]:
    ctx = next(e for e in errors if e["type"] in ("grpo_bool_string", "grpo_bool_option")).get("ctx", {})
    fixed = ctx.get("fix")
    if fixed is None:
        return f"write {base}: true (every token) or false; 'non_padding' cannot be set through `trl grpo`", None
    shown = str(fixed).lower() if isinstance(fixed, bool) else fixed
    return f"write {base}: {shown} (unquoted)", Fix(set={name: fixed}, safe=False, title=f"write {shown}")


# --- describing what a field takes ---------------------------------------------------------------------------------


def _strip(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def field_choices(info: Any) -> tuple[Any, ...]:
    """The Literal values a field accepts (flattening unions and lists), or ()."""
    found: list[Any] = []

    def walk(annotation: Any) -> None:
        annotation = _strip(annotation)
        if typing.get_origin(annotation) is typing.Literal:
            found.extend(a for a in typing.get_args(annotation) if a not in found)
        for arg in typing.get_args(annotation):
            if typing.get_origin(annotation) is not typing.Literal:
                walk(arg)

    walk(info.annotation)
    return tuple(found)


def _bounds(metadata: list[Any]) -> str:
    import annotated_types as at  # here, not at the top: only building the cached facts needs it (10 ms to import)

    lo = hi = ""
    for item in metadata:
        if isinstance(item, at.Gt):
            lo = f"> {item.gt}"
        elif isinstance(item, at.Ge):
            lo = f">= {item.ge}"
        elif isinstance(item, at.Lt):
            hi = f"< {item.lt}"
        elif isinstance(item, at.Le):
            hi = f"<= {item.le}"
    if lo and hi:
        left = "(" if lo.startswith(">") and not lo.startswith(">=") else "["
        right = ")" if hi.startswith("<") and not hi.startswith("<=") else "]"
        return f"in {left}{lo.split()[-1]}, {hi.split()[-1]}{right}"
    return lo or hi


def _phrase(annotation: Any, metadata: list[Any]) -> str:
    import annotated_types as at

    extra = list(metadata)
    while typing.get_origin(annotation) is typing.Annotated:
        annotation, *more = typing.get_args(annotation)
        extra += [m for m in more if isinstance(m, (at.Gt, at.Ge, at.Lt, at.Le))]
        extra += [m for item in more if hasattr(item, "metadata") for m in getattr(item, "metadata", [])]
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        words = [show_value(a) if not isinstance(a, str) else a for a in typing.get_args(annotation)]
        if len(words) == 1:
            return repr(words[0]) if isinstance(typing.get_args(annotation)[0], str) else words[0]
        if len(words) > 12:
            return f"one of {len(words)} names ({', '.join(words[:4])}, ...)"
        return "one of " + ", ".join(words)
    if origin in (typing.Union, types.UnionType):
        parts: list[str] = []
        for arg in typing.get_args(annotation):
            phrase = _phrase(arg, extra)
            if phrase.startswith("a list of ") and phrase[len("a list of ") :] in parts:
                phrase = "a list of them"
            parts.append(phrase)
        return ", ".join(dict.fromkeys(parts[:-1])) + (" or " if len(parts) > 1 else "") + parts[-1]
    if origin is list:
        (item,) = typing.get_args(annotation) or (Any,)
        return f"a list of {_plural(_phrase(item, []))}"
    if origin is dict or annotation is dict:
        return "a mapping"
    simple = {int: "an integer", float: "a number", bool: "true or false", str: "a string", type(None): "null"}
    phrase = simple.get(annotation, getattr(annotation, "__name__", str(annotation)))
    bounds = _bounds(extra) if annotation in (int, float) else ""
    return f"{phrase} {bounds}".strip()


def _plural(phrase: str) -> str:
    for single, many in (
        ("an integer", "integers"),
        ("a number", "numbers"),
        ("a string", "strings"),
        ("a mapping", "mappings"),
    ):
        if phrase.startswith(single):
            return many + phrase[len(single) :]
    return phrase


def describe_expected(info: Any) -> str:
    return _phrase(info.annotation, list(info.metadata))
