"""GRPORunConfig -> the YAML file `trl grpo --config` reads, with the schema modeline editors use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml

from grpo_schema.api.modeline import schema_url, with_modeline

if TYPE_CHECKING:
    from grpo_schema.api.config import GRPORunConfig


def config_mapping(config: GRPORunConfig, defaults: bool = False) -> dict[str, Any]:
    """The flat mapping of the config: its fields (set ones, or all), script keys, launch keys and `env:`, in the
    order they were given."""
    fields = config.model_dump(mode="json", exclude_unset=not defaults)
    result = config.check_result
    extra: dict[str, Any] = {}
    for view in result.profile_args.values():
        given = {key: value for key, value in view.model_dump().items() if key in result.raw}
        extra.update(given)
    extra.update({key: value for key, value in result.launch.items() if key in result.raw})
    if result.env:
        extra["env"] = dict(result.env)
    order = {key: index for index, key in enumerate(result.raw)}
    merged = {**fields, **extra}
    return dict(sorted(merged.items(), key=lambda item: order.get(item[0], len(order))))


def config_yaml(config: GRPORunConfig, modeline: bool = True, defaults: bool = False) -> str:
    mapping = config_mapping(config, defaults)
    text = (
        yaml.safe_dump(mapping, sort_keys=False, allow_unicode=True, default_flow_style=False, width=120)
        if mapping
        else ""
    )
    if not modeline:
        return text
    profiles = [name for name in config.check_result.profile_args if name == "open-r1"]  # the committed schemas
    return with_modeline(text, schema_url(profiles=profiles))
