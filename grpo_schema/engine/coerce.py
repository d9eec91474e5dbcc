"""Value conversions and refusals shared by the field types: what TRL accepts from YAML, and what it should refuse.

TRL hands YAML strings to argparse converters (`learning_rate: 1e-6` is a string to PyYAML and becomes a float),
and keeps YAML non-strings as they are (`num_generations: 8.5` stays a float and breaks later). These functions
convert strings the way TRL's command line does and refuse booleans for numbers, fractional floats for integers,
bare strings for lists and words where YAML produced a boolean. Refusals raise `PydanticCustomError`s whose
`grpo_` types `grpo_schema.engine.fielderrors` turns into coded diagnostics.

This module imports only pydantic_core: the compiled validator (grpo_schema.engine.compiled) calls these functions
without loading pydantic's model machinery, which keeps `grpo validate` fast to start.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic_core import PydanticCustomError, PydanticKnownError

# Context key under which validators leave non-fatal notes: (field name, code, message, fix value).
NOTES = "notes"

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
NUMERIC_LOG_LEVELS = {10: "debug", 20: "info", 30: "warning", 40: "error", 50: "critical"}
DEBUG_OPTIONS = ("underflow_overflow", "tpu_metrics_debug")
FSDP_OPTIONS = ("full_shard", "shard_grad_op", "no_shard", "hybrid_shard", "hybrid_shard_zero2", "offload", "auto_wrap")


def _note(info: Any, code: str, message: str, fix_value: Any = None) -> None:
    if info.context is not None and info.field_name:
        info.context.setdefault(NOTES, []).append((info.field_name, code, message, fix_value))


def _no_bool(value: Any, kind: str) -> Any:
    if isinstance(value, bool):
        raise PydanticCustomError("grpo_bool_for_number", "a boolean is not {kind}", {"kind": kind})
    return value


def int_input(value: Any, info: Any) -> Any:
    value = _no_bool(value, "an integer")
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        _note(info, "GRPO-T004", f"write {int(value)} instead of {value!r}: the field is an integer", int(value))
        return _int64(int(value))
    if isinstance(value, str):
        text = value.strip()
        try:
            number = int(text)
        except ValueError:
            number = None
        if number is not None:
            return _int64(number)
        if text.lower() in ("none", "null"):
            return None
        raise PydanticCustomError("grpo_int_string", "{text!r} is not an integer literal", {"text": value})
    return _int64(value) if isinstance(value, int) else value


def _int64(value: int) -> int:
    """Integers end up in torch, numpy and the batch arithmetic, where anything past 64 bits overflows."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise PydanticCustomError("grpo_int_too_large", "the integer does not fit in 64 bits", {})
    return value


def float_input(value: Any, info: Any) -> Any:
    value = _no_bool(value, "a number")
    if isinstance(value, str) and value.strip().lower() in ("none", "null"):
        return None
    return value


def list_input(value: Any) -> Any:
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


def json_object(value: Any) -> Any:
    if isinstance(value, str):
        if value.strip().lower() in ("none", "null"):
            return None
        return _parse_json_object(value.strip())
    return value


def json_object_or_path(value: Any) -> Any:
    if isinstance(value, str) and value.lstrip().startswith("{"):
        return _parse_json_object(value.strip())
    return value


def yaml_no(value: Any) -> Any:
    # YAML 1.1 turns an unquoted `no` into False; TRL then fails converting it to a strategy enum.
    if value is False:
        raise PydanticCustomError("grpo_yaml_bool", "unquoted `no` is the boolean false in YAML", {"word": "no"})
    return value


def pad_multiple(value: Any) -> Any:
    # TRL: 'auto' stays; 'none'/'null' -> None; other strings go through int().
    value = _no_bool(value, "an integer")
    if isinstance(value, str) and value != "auto":
        if value.strip().lower() in ("none", "null"):
            return None
        try:
            return int(value.strip())
        except ValueError:
            raise PydanticCustomError(
                "grpo_pad_multiple", "{text!r} is not an integer, 'auto' or null", {"text": value}
            )
    return value


# The words TRL's argparse converter (string_to_bool) reads as booleans, case-insensitively.
TRUE_WORDS = ("yes", "true", "t", "y", "1")
FALSE_WORDS = ("no", "false", "f", "n", "0")


def bool_word(value: Any) -> bool | None:
    """True/False for a string TRL's parser would read as a boolean, None for anything else."""
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    return True if word in TRUE_WORDS else False if word in FALSE_WORDS else None


def _quoted_bool(value: Any, meaning: str, fix: Any) -> PydanticCustomError:
    return PydanticCustomError(
        "grpo_bool_string",
        "the string '{text}' is not a boolean here: TRL keeps it as the string, {meaning}",
        {"text": value, "meaning": meaning, "fix": fix},
    )


def scale_alias(value: Any) -> Any:
    # Real YAML booleans are TRL's legacy spelling of scale_rewards: true -> 'group', false -> 'none'. TRL types
    # the field `str`, so a quoted "False" (or `--scale_rewards False`) stays a string and fails at the first step.
    if value is True:
        return "group"
    if value is False:
        return "none"
    word = bool_word(value)
    if word is not None:
        raise _quoted_bool(
            value, "which is not a scale_rewards mode and fails at the first training step", "group" if word else "none"
        )
    return value


_PATH_BOOL_WORDS = ("true", "false", "yes", "no")


def checkpoint_or_flag(value: Any) -> Any:
    # resume_from_checkpoint: a real boolean asks for the latest checkpoint; a string is a directory, so a quoted
    # "false" makes transformers look for a checkpoint directory named 'false' and fail.
    if isinstance(value, str) and value.strip().lower() in _PATH_BOOL_WORDS:
        raise _quoted_bool(
            value, "a checkpoint directory of that name, and resuming fails", value.strip().lower() in ("true", "yes")
        )
    return value


def bool_parsed_option(value: Any, info: Any) -> Any:
    """A `str | bool` field that `trl grpo`'s parser converts as a boolean (include_num_input_tokens_seen).

    TRL's argparse option for such a union is a boolean one: a YAML string must be a boolean word (a quoted
    "False" becomes false there, while transformers itself, given the string, counts every token), and the names
    'all' and 'non_padding' fail with "Truthy value expected" before anything starts.
    """
    if not isinstance(value, str):
        return value
    word = bool_word(value)
    if word is None:
        raise PydanticCustomError(
            "grpo_bool_option",
            "`trl grpo` parses this field as a boolean and refuses the string '{text}'",
            {"text": value, "fix": True if value.strip().lower() == "all" else None},
        )
    if value.strip().lower() == "no":  # transformers' own default: it means the same to both readers, kept as is
        return "no"
    _note(
        info,
        "GRPO-T011",
        f"write {str(word).lower()} without quotes: `trl grpo` reads the string "
        f"{value!r} as {str(word).lower()}, but transformers given the string itself counts every token",
        word,
    )
    return word


def level_name(value: Any, info: Any) -> Any:
    # logging's numbers are a natural thing to write, but transformers looks levels up by name.
    if isinstance(value, int) and not isinstance(value, bool) and value in NUMERIC_LOG_LEVELS:
        name = NUMERIC_LOG_LEVELS[value]
        _note(
            info,
            "GRPO-T009",
            f"write the level name {name!r} instead of {value}; transformers fails on a number when the trainer starts",
            name,
        )
        return name
    return value


def _words_in(value: Any, allowed: tuple[str, ...]) -> Any:
    words = value.split() if isinstance(value, str) else value
    if isinstance(words, list):
        bad = [w for w in words if w not in allowed]
        if bad:
            raise PydanticCustomError(
                "grpo_choice_words", "{bad!r} is not one of {choices}", {"bad": bad[0], "choices": ", ".join(allowed)}
            )
    return value


def debug_options(value: Any) -> Any:
    """A space-separated string or a list; each word a known option ('' means none)."""
    return _words_in(value, DEBUG_OPTIONS)


def fsdp_options(value: Any) -> Any:
    """true/false, or the legacy space-separated option string (or list) transformers translates."""
    word = bool_word(value)
    if word is not None and value.strip() != "":
        raise _quoted_bool(value, "which transformers reads as an fsdp option string and refuses", word)
    return value if isinstance(value, bool) else _words_in(value, FSDP_OPTIONS)


def real_bool_values(value: Any) -> Any:
    """A mapping of switches (liger_kernel_config): TRL hands YAML mappings on as they are, so a quoted "false"
    stays a string, which every reader takes as true."""
    if isinstance(value, dict):
        for key, item in value.items():
            if bool_word(item) is not None:
                raise _quoted_bool(
                    item, f"which reads as true wherever {key} is tested", {**value, key: bool_word(item)}
                )
    return value


# Bounds on values whose type is wrapped (e.g. `int | None` with ge=1): pydantic emits a partial of one of its own
# internal functions there; the compiled validator uses these equivalents (same error types and context).
def bound_gt(value: Any, gt: Any) -> Any:
    if not value > gt:
        raise PydanticKnownError("greater_than", {"gt": gt})
    return value


def bound_ge(value: Any, ge: Any) -> Any:
    if not value >= ge:
        raise PydanticKnownError("greater_than_equal", {"ge": ge})
    return value


def bound_lt(value: Any, lt: Any) -> Any:
    if not value < lt:
        raise PydanticKnownError("less_than", {"lt": lt})
    return value


def bound_le(value: Any, le: Any) -> Any:
    if not value <= le:
        raise PydanticKnownError("less_than_equal", {"le": le})
    return value
