"""Paths a run reads (the model, the dataset), resolved once when the service validates the config.

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

READ_FIELDS = ("model_name_or_path", "dataset_name")


def looks_relative(value: str) -> bool:
    return value in (".", "..") or value.startswith(("./", "../")) or (os.sep != "/" and value.startswith(".\\"))


def resolve_reads(config: Any, base: Path) -> dict[str, str]:
    """{field: absolute path} for the fields whose value is a relative local path (see the module docstring)."""
    found: dict[str, str] = {}
    for name in READ_FIELDS:
        value = getattr(config, name, None)
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
