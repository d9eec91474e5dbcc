"""Compiled validators: the pydantic models' own core schemas, cached as JSON, validated by pydantic-core alone.

The Pydantic models in grpo_schema/engine/params are the single source of truth. Building a 230-field model class and
its validator costs more at start-up than the whole rest of `grpo validate`, so the core schema pydantic derives
from each model is stored in `compiled_models.json` (functions by import name, model classes as typed dicts),
together with per-field facts the diagnostics need. At run time a `pydantic_core.SchemaValidator` is rebuilt from
it in milliseconds: the same validation, without importing pydantic's model machinery.

Regenerate after changing a model:  python -c "from grpo_schema.engine.compiled import write_cache; write_cache()"
The cache records a fingerprint of the source files the models are built from; when they no longer match (an edit
without regenerating), validators are built from the models themselves: slower to start, never stale. A test
fails while the committed file is stale.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_core import SchemaError, SchemaValidator

CACHE_PATH = Path(__file__).with_name("compiled_models.json")
MODELS = {
    "config": "grpo_schema.api.config:GRPORunConfig",
    "launch": "grpo_schema.engine.params.launch:LaunchParams",
    "open-r1": "grpo_schema.engine.profiles.open_r1_args:OpenR1ScriptArgs",
    "unsloth": "grpo_schema.engine.profiles.unsloth_args:UnslothArgs",
}
# pydantic's internal bound checks (emitted as partials) -> our equivalents in grpo_schema.engine.coerce.
_BOUND_FUNCTIONS = {
    "greater_than_validator": "bound_gt",
    "greater_than_or_equal_validator": "bound_ge",
    "less_than_validator": "bound_lt",
    "less_than_or_equal_validator": "bound_le",
}
_ALLOWED_MODULES = ("grpo_schema.", "builtins")
_PACKAGE = Path(__file__).parent
_SOURCES = (
    "params/*.py",
    "profiles/open_r1_args.py",
    "profiles/unsloth_args.py",
    "../api/config.py",
    "types.py",
    "coerce.py",
    "fielderrors.py",
)


def _source_files() -> list[Path]:
    # os.listdir and str.endswith rather than Path.glob: glob compiles a regex per pattern at every start-up.
    files: list[Path] = []
    for pattern in _SOURCES:
        folder, _, name = pattern.rpartition("/")
        directory = _PACKAGE / folder if folder else _PACKAGE
        if name.startswith("*"):
            files += sorted(directory / entry for entry in os.listdir(directory) if entry.endswith(name[1:]))
        elif (directory / name).is_file():
            files.append(directory / name)
    return files


def source_fingerprint() -> str:
    """Checksum of the files the models and their field facts are built from (CRC-32: it detects an edit made
    without regenerating, and costs no hashlib import at start-up)."""
    crc = 0
    for path in _source_files():
        crc = zlib.crc32(path.name.encode() + b"\0" + path.read_bytes(), crc)
    return f"crc32:{crc:08x}"


@dataclass
class CompiledModel:
    name: str
    # With `defaults` (MODELS), validates the fields given only: validate() adds the others (see without_defaults).
    validator: SchemaValidator
    fields: dict[str, dict[str, Any]]  # field name -> expected, choices, only_choices, nested, default
    # Every field in the schema's order -> its default, or None for a field the validator still fills in itself;
    # empty when the validator fills in every default.
    defaults: dict[str, Any] = field(default_factory=dict)
    nested: dict[str, dict] = field(init=False)  # field -> its model's own nested map, for ConfigView

    def __post_init__(self) -> None:
        self.nested = nested_map(self.fields)

    @functools.cached_property
    def names(self) -> frozenset[str]:
        """The field names, built once: every check sorts its keys against them (a frozenset of the 221 config
        fields cost ~4 us each time)."""
        return frozenset(self.fields)

    @classmethod
    def build(
        cls, name: str, schema: dict[str, Any], fields: dict[str, dict[str, Any]], own: bool = False
    ) -> "CompiledModel":
        """`own`: one of MODELS, whose field validators are known not to read the other fields (without_defaults)."""
        sparse, defaults = without_defaults(schema) if own else (schema, {})
        if sparse is not schema:
            try:
                return cls(name, SchemaValidator(sparse), fields, defaults)
            except SchemaError:  # e.g. a model that refers to itself (its ref is dropped there): validated whole
                pass
        return cls(name, SchemaValidator(schema), fields)

    def validate(self, data: dict[str, Any], context: dict[str, Any] | None = None) -> dict[str, Any]:
        """The validated values of every field, in a new dict."""
        values = self.validator.validate_python(data, context=context)
        if not self.defaults:
            return values
        out = self.defaults.copy()  # the schema's order, as the validator itself orders what it fills in
        out.update(values)
        return out


def without_defaults(schema: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A typed-dict schema whose fields with a plain default are optional instead, and those defaults.

    A check gives a few dozen of the 221 config fields; pydantic-core filling in the other defaults was about a
    quarter of the validation. Only a top-level typed-dict qualifies (a validator wrapped around it must see every field), and
    only defaults pydantic-core hands out as they are: hashable ones, neither copied nor validated
    (validate_default) nor made by a factory. Those fields it keeps filling in itself. Used for MODELS only: their
    field validators (grpo_schema.engine.coerce, pydantic's bounds) never read the other fields
    (ValidationInfo.data), so leaving the defaults out of the validation changes no answer; a user's model may read
    them, and is validated whole. Returns (schema, {}) when nothing qualifies.
    """
    if schema.get("type") != "typed-dict":
        return schema, {}
    fields: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    for name, entry in schema["fields"].items():
        inner = entry["schema"]
        fields[name], defaults[name] = entry, None
        if inner.get("type") != "default" or set(inner) != {"type", "schema", "default"}:
            continue
        try:
            hash(inner["default"])
        except TypeError:  # pydantic-core deep-copies an unhashable default for every answer
            continue
        fields[name] = {**entry, "schema": inner["schema"], "required": False}
        defaults[name] = inner["default"]
    if all(fields[name] is entry for name, entry in schema["fields"].items()):
        return schema, {}
    # Without its ref: nothing may refer to this copy in place of the whole model.
    return {**{k: v for k, v in schema.items() if k != "ref"}, "fields": fields}, defaults


def nested_map(facts: dict[str, dict[str, Any]]) -> dict[str, dict]:
    """The fields holding nested models, each with the same map for its model (derived once per model)."""
    return {name: nested_map(fact["nested"]) for name, fact in facts.items() if fact.get("nested")}


# --- building (imports pydantic; run at development time or for models that are not cached) ----------------------


def _import(path: str) -> Any:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def _encode_callable(fn: Any) -> dict[str, Any]:
    if isinstance(fn, functools.partial):
        target = _BOUND_FUNCTIONS.get(fn.func.__name__)
        if target is None:
            raise ValueError(f"cannot compile the validator {fn!r}")
        return {"$fn": f"grpo_schema.engine.coerce:{target}", "$kw": dict(fn.keywords)}
    module = getattr(fn, "__module__", "")
    if not module.startswith(_ALLOWED_MODULES):
        raise ValueError(f"cannot compile the validator {fn!r} from {module}")
    return {"$fn": f"{module}:{fn.__qualname__}"}


def _is_engine_hook(node: dict[str, Any]) -> bool:
    """GRPORunConfig's model validator, which runs the rule engine: the compiled validator is the engine's own
    field check, so it validates the fields alone (keeping the hook would make the engine call itself)."""
    function = node.get("function")
    fn = function.get("function") if isinstance(function, dict) else None
    return (
        node.get("type") in ("function-wrap", "function-after", "function-before")
        and fn is not None
        and getattr(fn, "__name__", "") == "_run_engine"
        and getattr(fn, "__module__", "") == "grpo_schema.api.config"
    )


def _transform(node: Any, encode: bool) -> Any:
    """Model schemas -> typed-dict schemas; drop metadata and the engine hook; functions encoded (or kept live)."""
    if isinstance(node, list):
        return [_transform(item, encode) for item in node]
    if not isinstance(node, dict):
        return node
    if _is_engine_hook(node):
        inner = _transform(node["schema"], encode)
        return {**inner, "ref": re.sub(r":\d+$", "", node["ref"])} if "ref" in node else inner
    if node.get("type") == "model":
        inner = node["schema"]
        fields = {
            name: {
                "type": "typed-dict-field",
                "schema": _transform(f["schema"], encode),
                "required": f["schema"].get("type") != "default",
            }
            for name, f in inner["fields"].items()
        }
        out: dict[str, Any] = {
            "type": "typed-dict",
            "fields": fields,
            "extra_behavior": "forbid",
            "config": {
                k: v
                for k, v in node.get("config", {}).items()
                if k in ("allow_inf_nan", "coerce_numbers_to_str", "extra_fields_behavior")
            },
        }
        if "ref" in node:
            out["ref"] = re.sub(r":\d+$", "", node["ref"])
        return out
    out = {}
    for key, value in node.items():
        if key in ("metadata", "serialization", "cls"):
            continue
        if key in ("function", "default_factory") and callable(value):
            out[key] = _encode_callable(value) if encode else value
        elif key in ("ref", "schema_ref") and isinstance(value, str):
            out[key] = re.sub(r":\d+$", "", value)
        else:
            out[key] = _transform(value, encode)
    return out


def _field_facts(model: Any) -> dict[str, dict[str, Any]]:
    """Per field: the phrase for what it takes, its choices, its default, and the facts of a nested model."""
    from grpo_schema.engine.fielderrors import describe_expected, field_choices, nested_model

    facts = {}
    for name, info in model.model_fields.items():
        inner = nested_model(info)
        expected = describe_expected(info)
        default = info.default if info.default_factory is None else info.default_factory()
        facts[name] = {
            "expected": expected,
            "choices": list(field_choices(info)),
            "only_choices": "one of" in expected
            and not any(w in expected for w in ("an integer", "a number", "a string")),
            "nested": _field_facts(inner) if inner is not None else None,
            "default": default if isinstance(default, (str, int, float, bool, type(None), list)) else None,
        }
    return facts


def compile_model(model: Any, encode: bool = True) -> dict[str, Any]:
    model.model_rebuild()
    return {"schema": _transform(model.__pydantic_core_schema__, encode), "fields": _field_facts(model)}


def from_model(model: Any, name: str = "", own: bool = False) -> CompiledModel:
    """A compiled validator for a model that is not in the cache (e.g. a user's profile); uses pydantic."""
    data = compile_model(model, encode=False)
    return CompiledModel.build(name or model.__name__, data["schema"], data["fields"], own=own)


def write_cache(path: Path = CACHE_PATH) -> str:
    text = cache_text()
    path.write_text(text, encoding="utf-8")
    return text


def cache_text() -> str:
    data: dict[str, Any] = {key: compile_model(_import(target)) for key, target in MODELS.items()}
    data["fingerprint"] = source_fingerprint()
    return json.dumps(data, indent=1, sort_keys=True, default=repr) + "\n"


# --- loading (pydantic_core only) ----------------------------------------------------------------------------------


def _decode(node: dict[str, Any]) -> Any:
    """json's object_hook: an encoded function ({"$fn": "module:name", "$kw": ...}) -> the function (or partial);
    every other mapping unchanged. Decoding while parsing saves a second walk over the whole schema."""
    if "$fn" not in node:
        return node
    target = node["$fn"]
    if not target.startswith(_ALLOWED_MODULES):
        raise ValueError(f"refusing to load {target}")
    fn = _import(target)
    return functools.partial(fn, **node["$kw"]) if "$kw" in node else fn


@functools.lru_cache(maxsize=None)
def _cache() -> dict[str, Any] | None:
    """The cached schemas, or None when missing or built from other sources than the ones installed."""
    try:
        data = json.loads(CACHE_PATH.read_text(encoding="utf-8"), object_hook=_decode)
    except (OSError, ValueError, ImportError, AttributeError):
        return None
    return data if data.get("fingerprint") == source_fingerprint() else None


@functools.lru_cache(maxsize=None)
def compiled(key: str) -> CompiledModel:
    """The validator for one of MODELS ('config', 'launch', 'open-r1'): from the cache, else from the model."""
    cache = _cache()
    if cache is None:
        return from_model(_import(MODELS[key]), key, own=True)
    entry = cache[key]
    return CompiledModel.build(key, entry["schema"], entry["fields"], own=True)
