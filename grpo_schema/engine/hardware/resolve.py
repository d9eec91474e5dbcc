"""Which facts describe a model: its own config.json (a local folder or the Hub cache), else the catalogue's.

Above both sources (models reads config.json files, catalogue holds the built-in facts), so neither imports
the other's way of finding a model.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from grpo_schema.engine.hardware.catalogue import demo_model, lookup
from grpo_schema.engine.hardware.models import ModelFacts, UnknownModel, find_local_config, read_config_json
from grpo_schema.engine.hardware.reads import shown

CLI_FIX = "pass its config.json (--model-config PATH, or model_config: PATH in the hardware: section)"


def resolve_model(
    name_or_path: str | None, revision: str | None = None, base: Path | None = None, fix: str = CLI_FIX
) -> ModelFacts:
    """The facts of a model: local config.json (a relative path read from `base`, else the working directory),
    then the Hub cache, then the catalogue. Raises UnknownModel, saying `fix` when none knows the model."""
    if not name_or_path or not isinstance(name_or_path, str):
        raise UnknownModel("model_name_or_path is not set: pass the model's config.json (--model-config PATH)")
    path = find_local_config(name_or_path, revision, base)
    if path is not None:
        facts = read_config_json(path, name_or_path)
        return replace(facts, source=shown(path, base)) if base is not None else facts
    # demo/model before `grpo demo` (or the service, as it starts) has written it: the catalogue knows it by path
    facts = lookup(name_or_path) or demo_model(name_or_path)
    if facts is None:
        raise UnknownModel(f"unknown model {name_or_path!r}: {fix}")
    return facts
