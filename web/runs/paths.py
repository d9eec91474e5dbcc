"""Paths a run reads (the model, the dataset, the reward model, DeepSpeed / FSDP / accelerate config files), resolved
once when the service validates the config: the config is validated with the resolved paths, so what is validated
is what runs.

A run's working directory is its own folder (RUNS_DIR/<id>), so `demo/model` would mean RUNS_DIR/<id>/demo/model
there and something else in the form that validated it. The service resolves a relative path against its own
folder (where `grpo serve` started) instead: a value that starts with `./` or `../`, or one that names a file or
folder there, becomes an absolute path, passed to the run as a `--set` override (the posted text stays as
posted). A value that is neither (`Qwen/Qwen2.5-0.5B`) is a Hub name and stays as it is.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

READ_FIELDS = ("model_name_or_path", "dataset_name", "reward_model_name_or_path", "deepspeed", "fsdp_config")
LAUNCH_READ_FIELDS = ("config_file", "accelerate_config")  # `accelerate launch` keys of the file


def looks_relative(value: str) -> bool:
    return value in (".", "..") or value.startswith(("./", "../")) or (os.sep != "/" and value.startswith(".\\"))


def resolve_reads(config: Any, base: Path, launch: dict[str, Any] | None = None) -> dict[str, str]:
    """{field: absolute path} for the fields whose value is a relative local path (see the module docstring).
    A field that holds a mapping (an inline DeepSpeed config) or a bundled name (`accelerate_config: zero3`) that
    names nothing in `base` stays as it is."""
    values = [(name, getattr(config, name, None)) for name in READ_FIELDS]
    values += [(name, (launch or {}).get(name)) for name in LAUNCH_READ_FIELDS]
    found: dict[str, str] = {}
    for name, value in values:
        if not isinstance(value, str) or not value or "\x00" in value or value.startswith("~"):
            continue
        path = Path(value)
        if path.is_absolute():
            continue
        try:
            if looks_relative(value) or (base / path).exists():
                found[name] = str((base / path).resolve())
        except (OSError, ValueError):  # a name too long for a path, or not one at all: a Hub name
            continue
    return found
