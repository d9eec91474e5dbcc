"""The JSON Schema of a `trl grpo --config` file, for editors (yaml-language-server), CI tools and the web form.

Generated from the models, never written by hand:

    grpo schema [--draft 2020-12|07] [--profile open-r1] [--lenient] [--output PATH]
    python -m grpo_schema.export [DIR] [--check]        # (re)writes, or checks, every committed file in schemas/

Every YAML file grpo-config writes starts with a modeline (see `with_modeline`), so editors find the schema. By
default it names the schema file by a relative path (`grpo-config.schema.json`, beside the config: write it there
with `grpo schema --write DIR`), which resolves offline. A public copy is used only when the operator names its
folder in GRPO_SCHEMA_BASE_URL (or, for the service's exports, GRPO_WEB_SCHEMA_URL).
This module is slow-ish to run (it builds pydantic's schema) and is never imported by `import grpo_schema`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

# The modeline names are part of this module's API (`from grpo_schema.export import with_modeline`).
from grpo_schema.api.modeline import (  # noqa: F401
    BASE_URL_VARIABLE,
    MODELINE,
    MODELINE_PREFIX,
    SCHEMA_FILE,
    base_url,
    modeline,
    release_schema_filename,
    schema_filename,
    schema_url,
    with_modeline,
)

TITLE = "GRPO training config (TRL 1.16 `trl grpo --config`)"
DESCRIPTION = (
    "One flat mapping: every field of TRL 1.16's GRPOConfig (with transformers' TrainingArguments), "
    "GRPOScriptArguments, ModelConfig and DatasetMixtureConfig, `accelerate launch` options and an `env:` mapping. "
    "This schema checks names, types, ranges, allowed values, renamed and removed keys, and the cross-field errors "
    "that depend on allowed values only (if/then). The arithmetic rules across fields (a generation batch that "
    "holds whole groups at a world size, epsilon_high >= epsilon, ordered clip bounds, one reward weight per "
    "source, ...) stay in the Python validator: run `grpo validate FILE`."
)


def export_schema(draft: str = "2020-12", profiles: Iterable[Any] = (), lenient: bool = False) -> dict[str, Any]:
    """The schema as a dict. `profiles`: names or Profile objects whose script keys are accepted and typed.

    `lenient` accepts unknown keys (for SchemaStore, where a newer TRL may add keys); the default schema refuses
    them like the Python validator does.
    """
    from grpo_schema.engine.check import resolve_profiles
    from grpo_schema.schema_export.build import build_schema
    from grpo_schema.schema_export.drafts import DIALECTS, to_draft_07

    active = resolve_profiles(profiles)
    # No $id: the schema is identified by where it is read from (a local copy unless published), so it never
    # names a URL that may not exist.
    schema = {
        "$schema": DIALECTS[draft],
        "title": TITLE + "".join(f" + {p.name}" for p in active),
        "description": DESCRIPTION,
        **build_schema(active, lenient),
    }
    return to_draft_07(schema) if draft == "07" else schema


def schema_text(draft: str = "2020-12", profiles: Iterable[Any] = (), lenient: bool = False) -> str:
    return json.dumps(export_schema(draft, profiles, lenient), indent=2, ensure_ascii=False) + "\n"


# --- the committed copies in schemas/ --------------------------------------------------------------------------------
# (draft, profiles, lenient) of each committed schema file.
COMMITTED = (("2020-12", (), False), ("07", (), False), ("2020-12", ("open-r1",), False), ("07", (), True))
CATALOG_FILE = "catalog.json"
FILE_MATCH = ("*.grpo.yaml", "*.grpo.yml", "**/grpo/*.yaml", "**/grpo/*.yml")


def catalog_text(base: str = "") -> str:
    """A SchemaStore catalog entry (draft-07, lenient: SchemaStore asks for both). With no `base` the URLs are
    relative to the catalog's own folder; `grpo schema --write DIR --base-url URL` writes one for a published
    copy, ready for a SchemaStore catalog pull request."""
    entry = {
        "name": "grpo-config",
        "description": "GRPO training config for TRL `trl grpo --config` (grpo-config)",
        "fileMatch": list(FILE_MATCH),
        "url": schema_url("07", (), True, base=base),
        "versions": {
            "strict": schema_url("07", base=base),
            "strict-2020-12": schema_url(base=base),
            "open-r1": schema_url("2020-12", ("open-r1",), base=base),
            # a config written for an older TRL release: that release's keys, types and defaults
            **{name.split("/")[0]: (base or "") + name for name in release_names()},
        },
    }
    catalog = {"$schema": "https://json.schemastore.org/schema-catalog.json", "version": 1, "schemas": [entry]}
    return json.dumps(catalog, indent=2) + "\n"


def release_schema_text(version: str) -> str:
    """The schema for a config written for TRL `version` (1.16: the main schema)."""
    from grpo_schema.engine.keys import launch_keys
    from grpo_schema.engine.release import release_surface
    from grpo_schema.schema_export.releases import release_schema
    from grpo_schema.versions import surface

    release = release_surface(version)
    if release is None:
        return schema_text()
    # one schema per table (releases sharing a table share its file, named by the table's release)
    schema = release_schema(export_schema(), surface(release.release), launch_keys())
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def release_schema_name(version: str) -> str:
    """The schema file (relative to schemas/) for configs written for TRL `version`: trl-X.Y.Z/grpo-config.schema.json
    for the table that release is judged by, the main grpo-config.schema.json for 1.16 (and newer)."""
    from grpo_schema.engine.release import release_surface
    from grpo_schema.versions import surface

    release = release_surface(version)  # named as the judged release: the file is its table's
    return SCHEMA_FILE if release is None else release_schema_filename(surface(release.release).release)


def release_names() -> list[str]:
    """trl-X.Y.Z/grpo-config.schema.json for every older release table, oldest first."""
    from grpo_schema.engine.release import release_surface
    from grpo_schema.versions import parse_version, releases, surface

    tables = {surface(r).release for r in releases() if release_surface(r) is not None}
    return [release_schema_filename(r) for r in sorted(tables, key=parse_version)]


def release_texts() -> dict[str, str]:
    """One schema per older release table (schemas/trl-X.Y.Z/), the files editors and modelines name."""
    from grpo_schema.engine.release import release_surface
    from grpo_schema.versions import releases, surface

    tables = {surface(r).release for r in releases() if release_surface(r) is not None}
    return {release_schema_filename(r): release_schema_text(r) for r in sorted(tables)}


def committed_texts(base: str = "") -> dict[str, str]:
    texts = {schema_filename(*spec): schema_text(*spec) for spec in COMMITTED}
    texts[CATALOG_FILE] = catalog_text(base)
    texts.update(release_texts())
    return texts


def write_schemas(directory: Path, base: str = "") -> list[Path]:
    """Write every schema variant and the catalog into `directory` (the local copy modelines point at)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in committed_texts(base).items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text, encoding="utf-8")
        written.append(directory / name)
    return written


def stale_files(directory: Path) -> list[str]:
    """Names of committed files in `directory` that differ from what the models generate now."""
    return [
        name
        for name, text in committed_texts().items()
        if not (directory / name).is_file() or (directory / name).read_text(encoding="utf-8") != text
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m grpo_schema.commands.export",
        description="write (or --check) the committed JSON Schemas and catalog",
    )
    parser.add_argument("directory", nargs="?", default="schemas", type=Path)
    parser.add_argument("--check", action="store_true", help="exit 1 when a committed file is stale; write nothing")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files(args.directory)
        for name in stale:
            print(
                f"stale: {args.directory / name} (regenerate: python -m grpo_schema.commands.export {args.directory})"
            )
        return 1 if stale else 0
    for path in write_schemas(args.directory):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
