"""Canonical YAML for a config mapping: the schema modeline first, keys in the order given, block style.

Written with PyYAML's safe dumper, whose YAML 1.1 quoting matches the loader the CLI uses: a string that would
read back as another type ('8', 'no', '1e-6' stays a string only because YAML 1.1 reads it so) is quoted or kept
exactly as the loader resolves it, so `grpo validate` on the text reports what the mapping would.
"""

from __future__ import annotations

from typing import Any

import yaml

from grpo_schema.api.modeline import modeline


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # Indent list items under their key ("key:\n  - item"), as people write them.
        super().increase_indent(flow, False)


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None  # the emitter falls back to quotes when a block cannot hold it
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def config_yaml(mapping: dict[str, Any], schema_url: str) -> str:
    return modeline(schema_url) + "\n" + config_body(mapping)


def config_body(mapping: dict[str, Any]) -> str:
    """The mapping as YAML, without the modeline."""
    return yaml.dump(mapping, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)
