"""Where a config's schema lives and the modeline that points an editor to it (yaml-language-server).

Apart from the schema build (schema_export, which is built on this API), so that whatever writes YAML
(GRPORunConfig.to_yaml, the service) names the schema without building it.
"""

from __future__ import annotations

import os
from typing import Sequence

from grpo_schema.engine.lines import split_lines

SCHEMA_FILE = "grpo-config.schema.json"
BASE_URL_VARIABLE = "GRPO_SCHEMA_BASE_URL"
MODELINE_PREFIX = "# yaml-language-server: $schema="
MODELINE = MODELINE_PREFIX + SCHEMA_FILE


def schema_filename(draft: str = "2020-12", profiles: Sequence[str] = (), lenient: bool = False) -> str:
    parts = ["grpo-config", *profiles] + (["lenient"] if lenient else []) + (["draft-07"] if draft == "07" else [])
    return ".".join(parts) + ".schema.json"


def release_schema_filename(release: str) -> str:
    """The schema of a config written for an older TRL release, in a folder of its own under schemas/."""
    return f"trl-{release}/{SCHEMA_FILE}"


def base_url() -> str:
    """The folder (URL ending in '/') where the operator publishes the schemas, or '' for relative references."""
    base = os.environ.get(BASE_URL_VARIABLE, "").strip()
    return base if not base or base.endswith("/") else base + "/"


def schema_url(
    draft: str = "2020-12", profiles: Sequence[str] = (), lenient: bool = False, base: str | None = None
) -> str:
    """Where a config's modeline points: `base` (default: GRPO_SCHEMA_BASE_URL) + the file name; with no base,
    the bare file name, a reference relative to the config that works offline."""
    return (base_url() if base is None else base) + schema_filename(draft, profiles, lenient)


def modeline(schema: str = SCHEMA_FILE) -> str:
    """The header comment that makes yaml-language-server (VS Code, Neovim, ...) use `schema` for the file."""
    return MODELINE_PREFIX + schema


def with_modeline(text: str, schema: str = SCHEMA_FILE) -> str:
    """`text` starting with the modeline (replacing an existing one): it must come before any YAML content."""
    lines = split_lines(text, keepends=True)
    kept = [line for line in lines if not line.lstrip().startswith(MODELINE_PREFIX)]
    return modeline(schema) + "\n" + "".join(kept)
