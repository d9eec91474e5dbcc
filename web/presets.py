"""Recipes to start from: the YAML files of examples/, each with `# title:`, `# description:` and optionally
`# profile:` header comments. The same files are the user-facing example library, so the form and the docs never
disagree about a recipe."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from grpo_schema.engine.loader import load_yaml

# Installed, the recipes are package data beside this module (grpo_web/examples); in a checkout, examples/.
_HERE = Path(__file__).resolve().parent
PRESET_DIR = _HERE / "examples" if (_HERE / "examples").is_dir() else _HERE.parent / "examples"
_HEADER = re.compile(r"^#\s*(title|description|profile):\s*(.+?)\s*$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    description: str
    profile: str | None
    text: str

    def summary(self) -> dict[str, str | None]:
        return {"name": self.name, "title": self.title, "description": self.description, "profile": self.profile}

    def document(self) -> dict[str, Any]:
        return {**self.summary(), "yaml": self.text, "config": load_yaml(self.text).data}

    @property
    def profiles(self) -> list[str]:
        return [self.profile] if self.profile else []


def read_preset(path: Path) -> Preset:
    text = path.read_text(encoding="utf-8")
    meta = {m.group(1): m.group(2) for m in map(_HEADER.match, text.splitlines()) if m}
    return Preset(path.stem, meta.get("title", path.stem), meta.get("description", ""), meta.get("profile"), text)


@lru_cache
def all_presets(directory: Path = PRESET_DIR) -> dict[str, Preset]:
    return {p.stem: read_preset(p) for p in sorted(directory.glob("*.yaml")) if _NAME.match(p.stem)}
