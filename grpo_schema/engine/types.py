"""Annotated field types built from the conversions in `grpo_schema.engine.coerce`.

See coerce.py for what is accepted and refused, and why.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

from grpo_schema.engine import coerce
from grpo_schema.engine.coerce import NOTES  # noqa: F401  (re-exported for callers of the types)

Int = Annotated[int, BeforeValidator(coerce.int_input)]
Float = Annotated[float, BeforeValidator(coerce.float_input)]
StrList = Annotated[list[str], BeforeValidator(coerce.list_input)]
FloatList = Annotated[list[Float], BeforeValidator(coerce.list_input)]
JsonDict = Annotated[dict[str, Any], BeforeValidator(coerce.json_object)]
JsonDictOrPath = Annotated[dict[str, Any] | str, BeforeValidator(coerce.json_object_or_path)]
YamlNoGuard = BeforeValidator(coerce.yaml_no)
ScaleAlias = BeforeValidator(coerce.scale_alias)
CheckpointOrFlag = BeforeValidator(coerce.checkpoint_or_flag)
BoolParsedOption = BeforeValidator(coerce.bool_parsed_option)
RealBoolValues = BeforeValidator(coerce.real_bool_values)
LevelName = BeforeValidator(coerce.level_name)
DebugOptions = BeforeValidator(coerce.debug_options)
FsdpOptions = BeforeValidator(coerce.fsdp_options)
PadMultiple = BeforeValidator(coerce.pad_multiple)
