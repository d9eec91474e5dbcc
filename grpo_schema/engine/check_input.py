"""What the check reads before it sorts the keys: the command-line values merged into the mapping, a Python
annotation pasted as a value, a top level that is not a mapping."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import yaml

from grpo_schema.engine import codes
from grpo_schema.engine.diagnostics import Diagnostic, Fix, yaml_value
from grpo_schema.engine.loader import load_yaml


@dataclass(frozen=True)
class Override:
    """A command-line value: `--set key=value` (value read as YAML) or TRL's `--key value` (kept a string)."""

    key: str
    value: Any
    source: str = ""

    @classmethod
    def parse(cls, text: str) -> "Override":
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"expected KEY=VALUE, got {text!r}")
        loaded = load_yaml(value) if value.strip() else None
        parsed = loaded.data if loaded is not None and loaded.ok and not loaded.diagnostics else value
        return cls(key.strip(), parsed, f"--set {text}")


def apply_overrides(
    mapping: dict[str, Any], overrides: Sequence[Override | str]
) -> tuple[dict[str, Any], dict[str, str]]:
    origins: dict[str, str] = {}
    for item in overrides:
        override = item if isinstance(item, Override) else Override.parse(item)
        if override.key.startswith("env."):
            env = dict(mapping.get("env") or {}) if isinstance(mapping.get("env"), dict) else {}
            env[override.key[4:]] = override.value
            mapping["env"] = env
        else:
            mapping[override.key] = override.value
        origins[override.key] = override.source or "command line"
    return mapping, origins


_ANNOTATION = re.compile(
    r"^\s*(?P<type>(?:typing\.)?(?:bool|int|float|str|list|dict|tuple|Any|Optional|Union|"
    r"Literal|List|Dict|Tuple)\b[^=]*?)\s*=\s*(?P<value>.+?)\s*$"
)


def pasted_annotations(mapping: dict[str, Any]) -> list[Diagnostic]:
    """`use_vllm_server: bool = True`, a dataclass field pasted as YAML: one diagnostic, and the default it names
    stands for the value from here on (so the same line does not also earn a type error)."""
    found = []
    for key, value in list(mapping.items()):
        match = _ANNOTATION.match(value) if isinstance(value, str) else None
        if match is None:
            continue
        written = match["value"]
        try:
            meant = yaml.safe_load({"True": "true", "False": "false", "None": "null"}.get(written, written))
        except yaml.YAMLError:
            meant = written
        shown = yaml_value(meant)
        found.append(
            Diagnostic(
                codes.Y_ANNOTATION,
                "error",
                f"{key}: {yaml_value(value)} is a Python annotation "
                f"with a default ({match['type'].strip()} = {written}), not a YAML value",
                fields=(key,),
                hint=f"write {key}: {shown}",
                fix=Fix(set={key: meant}, safe=True, title=f"write {key}: {shown}"),
            )
        )
        mapping[key] = meant
    return found


def not_a_mapping(data: Any) -> Diagnostic:
    if data is None:
        return Diagnostic(
            codes.Y_EMPTY,
            "error",
            "the config is empty (a YAML null document, not a mapping)",
            hint="write the settings as key: value lines",
        )
    kinds: dict[type, str] = {list: "a YAML list", str: "a single string"}
    kind = kinds.get(type(data), f"a {type(data).__name__}")
    return Diagnostic(
        codes.Y_NOT_MAPPING,
        "error",
        f"the top level of the config must be a mapping ({kind} was given)",
        line=1,
        column=1,
        hint="write the settings as key: value lines at the top level",
    )
