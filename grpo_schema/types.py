"""Field types that accept what TRL accepts from YAML and refuse what it should refuse.

TRL hands YAML strings to argparse converters (`learning_rate: 1e-6` is a string to PyYAML and becomes a float),
and keeps YAML non-strings as they are (`num_generations: 8.5` stays a float and breaks later). These types convert
strings the way TRL's command line does, and refuse booleans for numbers, fractional floats for integers, bare
strings for lists and NaN/infinity for numbers. Refusals raise `PydanticCustomError`s with a `grpo_` type that
`grpo_schema.fielderrors` turns into coded diagnostics.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

from pydantic import BeforeValidator, ValidationInfo
from pydantic_core import PydanticCustomError

# Context key under which validators leave non-fatal notes: (field name, code, message, fix value).
NOTES = "notes"


def _note(info: ValidationInfo, code: str, message: str, fix_value: Any = None) -> None:
    if info.context is not None and info.field_name:
        info.context.setdefault(NOTES, []).append((info.field_name, code, message, fix_value))


def _no_bool(value: Any, kind: str) -> Any:
    if isinstance(value, bool):
        raise PydanticCustomError("grpo_bool_for_number", "a boolean is not {kind}", {"kind": kind})
    return value


def _int_input(value: Any, info: ValidationInfo) -> Any:
    value = _no_bool(value, "an integer")
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        _note(info, "GRPO-T004", f"write {int(value)} instead of {value!r}: the field is an integer", int(value))
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        if text.lower() in ("none", "null"):
            return None
        raise PydanticCustomError("grpo_int_string", "{text!r} is not an integer literal", {"text": value})
    return value


def _float_input(value: Any, info: ValidationInfo) -> Any:
    value = _no_bool(value, "a number")
    if isinstance(value, str) and value.strip().lower() in ("none", "null"):
        return None
    return value


def _list_input(value: Any) -> Any:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        raise PydanticCustomError("grpo_scalar_for_list", "a single value where a list is needed", {"item": value})
    return value


def _coerce_leaf(value: Any) -> Any:
    """TRL's conversion of string leaves in JSON dict strings: 'true'/'false', digit strings, one-dot floats."""
    if isinstance(value, dict):
        return {k: _coerce_leaf(v) for k, v in value.items()}
    if not isinstance(value, str):
        return value
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    if value.isdigit():
        return int(value)
    if value.count(".") == 1 and value.replace(".", "", 1).isdigit():
        return float(value)
    return value


def _parse_json_object(text: str) -> dict[str, Any]:
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise PydanticCustomError("grpo_json", "not a valid JSON object string: {error}", {"error": str(exc)})
    if not isinstance(parsed, dict):
        raise PydanticCustomError("grpo_json", "the JSON string is not an object", {"error": "not an object"})
    return _coerce_leaf(parsed)


def _json_object(value: Any) -> Any:
    if isinstance(value, str):
        if value.strip().lower() in ("none", "null"):
            return None
        return _parse_json_object(value.strip())
    return value


def _json_object_or_path(value: Any) -> Any:
    if isinstance(value, str) and value.lstrip().startswith("{"):
        return _parse_json_object(value.strip())
    return value


def _yaml_no(value: Any) -> Any:
    # YAML 1.1 turns an unquoted `no` into False; TRL then fails converting it to a strategy enum.
    if value is False:
        raise PydanticCustomError("grpo_yaml_bool", "unquoted `no` is the boolean false in YAML", {"word": "no"})
    return value


Int = Annotated[int, BeforeValidator(_int_input)]
Float = Annotated[float, BeforeValidator(_float_input)]
StrList = Annotated[list[str], BeforeValidator(_list_input)]
FloatList = Annotated[list[Annotated[float, BeforeValidator(_float_input)]], BeforeValidator(_list_input)]
JsonDict = Annotated[dict[str, Any], BeforeValidator(_json_object)]
JsonDictOrPath = Annotated[dict[str, Any] | str, BeforeValidator(_json_object_or_path)]
YamlNoGuard = BeforeValidator(_yaml_no)
