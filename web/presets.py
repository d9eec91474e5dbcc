"""Recipe presets: YAML files in web/presets/, each with `# title:` and `# description:` header comments."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from grpo_schema.loader import load_yaml

PRESET_DIR = Path(__file__).parent / "presets"
_HEADER = re.compile(r"^#\s*(title|description):\s*(.+?)\s*$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    description: str
    text: str

    def summary(self) -> dict[str, str]:
        return {"name": self.name, "title": self.title, "description": self.description}

    def document(self) -> dict[str, Any]:
        return {**self.summary(), "yaml": self.text, "config": load_yaml(self.text).data}


def _read(path: Path) -> Preset:
    text = path.read_text(encoding="utf-8")
    meta = {m.group(1): m.group(2) for m in map(_HEADER.match, text.splitlines()) if m}
    return Preset(path.stem, meta.get("title", path.stem), meta.get("description", ""), text)


@lru_cache
def all_presets(directory: Path = PRESET_DIR) -> dict[str, Preset]:
    return {p.stem: _read(p) for p in sorted(directory.glob("*.yaml")) if _NAME.match(p.stem)}
