"""verl YAML: a `ppo_trainer`-shaped file, or a user config with `defaults:` that composes verl's own.

The keys become the same Settings a script's overrides are (dotted keys with their line and column), so one
checker judges both. A SkyPilot task whose `run:` block launches verl is read as the script it holds.
"""

from __future__ import annotations

import json
from typing import Any

from grpo_schema.dialects.verl.launch import Run, Setting, runs_in_script
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.loader import load_yaml

_BASES = ("ppo_trainer", "ppo_megatron_trainer")
_HYDRA_KEYS = ("defaults", "hydra")


def override_text(value: Any) -> str:
    """A YAML value written as a Hydra override value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value if value and all(c.isalnum() or c in "_-./:" for c in value) else json.dumps(value)
    if isinstance(value, list):
        return "[" + ",".join(override_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{override_text(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


def read_yaml(text: str) -> tuple[list[Run], list[Diagnostic], Any]:
    """The runs a verl YAML describes (one, or those of a SkyPilot `run:` block), the loader's problems, the data."""
    loaded = load_yaml(text)
    if not loaded.ok or not isinstance(loaded.data, dict):
        return [], list(loaded.diagnostics), loaded.data
    data = loaded.data
    if isinstance(data.get("run"), str) and "-m " in data["run"]:
        return _skypilot_runs(text, data), list(loaded.diagnostics), data
    run = Run(entry="verl.trainer.main_ppo", line=1, config_name=_base(data))
    for path, value in _leaves(data, ()):
        if path[0] in _HYDRA_KEYS:
            continue
        line, column = loaded.positions.keys.get(path, (1, 1))
        run.settings.append(Setting(".".join(map(str, path)), override_text(value), line, column, op="file"))
    return [run], list(loaded.diagnostics), data


def _base(data: dict[str, Any]) -> str:
    defaults = data.get("defaults")
    names = [d for d in defaults if isinstance(d, str)] if isinstance(defaults, list) else []
    return next((name for name in names if name in _BASES), "ppo_trainer")


def _leaves(value: Any, path: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict) and value:
        return [leaf for key, item in value.items() for leaf in _leaves(item, path + (key,))]
    return [(path, value)] if path else []


def _skypilot_runs(text: str, data: dict[str, Any]) -> list[Run]:
    """The `run: |` block's launches, with lines counted in the YAML file."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("run:")), 0)
    indent = next((len(line) - len(line.lstrip()) for line in lines[start + 1 :] if line.strip()), 2)
    block = "\n".join(line[indent:] if line[:indent].strip() == "" else line for line in lines[start + 1 :])
    runs, _ = runs_in_script(block)
    for run in runs:
        run.line += start + 1
        for setting in run.settings:
            setting.line += start + 1
            setting.column += indent
    return runs
