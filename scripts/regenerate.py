#!/usr/bin/env python3
"""Rebuild every generated file of the repository from its source, or say which are stale (--check).

    python scripts/regenerate.py              # after changing a field, a rule, a per-value doc or an import
    python scripts/regenerate.py --check      # exit 1 naming each stale file; writes nothing (a test runs this)
    python scripts/regenerate.py --releases   # also the TRL release tables, from the wheel cache (no download)

What it rebuilds, in order, each by the generator that owns it:
  grpo_schema/engine/compiled_models.json   the models' compiled validators (grpo_schema.engine.compiled)
  schemas/                                   the JSON Schemas and the catalog (grpo_schema.commands.export)
  docs/runtime-fields.md                     what grpo_runtime runs, refuses or warns about (grpo_runtime.support.page)
  docs/architecture.md, docs/architecture.svg  the import table and picture (scripts/architecture.py)
  grpo_schema/versions/releases/*.json       with --releases: every TRL release's surface (scripts/trl_releases.py,
                                             from $TRL_WHEEL_CACHE; run that script itself to download wheels)
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout: the packages beside this script, not an installed copy


def _script(name: str) -> ModuleType:
    """A module of scripts/ (not a package), loaded from its file."""
    spec = importlib.util.spec_from_file_location(f"_regenerate_{name}", ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


def compiled_models() -> dict[Path, str]:
    from grpo_schema.engine.compiled import CACHE_PATH, cache_text

    return {CACHE_PATH: cache_text()}


def schemas() -> dict[Path, str]:
    from grpo_schema.commands.export import committed_texts

    return {ROOT / "schemas" / name: text for name, text in committed_texts().items()}


def runtime_fields() -> dict[Path, str]:
    from grpo_runtime.support.page import markdown

    return {ROOT / "docs" / "runtime-fields.md": markdown()}


def architecture() -> dict[Path, str]:
    module = _script("architecture")
    picture, doc = module.render()
    return {module.SVG: picture, module.DOC: doc}


def releases() -> dict[Path, str]:
    module = _script("trl_releases")
    return {module.OUT / name: text for name, text in module.build(True).items()}


GENERATED: tuple[tuple[str, Callable[[], dict[Path, str]]], ...] = (
    ("compiled models", compiled_models),
    ("JSON Schemas", schemas),
    ("runtime field page", runtime_fields),
    ("architecture page", architecture),
)


def stale(files: dict[Path, str]) -> list[Path]:
    return [path for path, text in files.items() if not path.is_file() or path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if any generated file is stale; write nothing")
    parser.add_argument(
        "--releases", action="store_true", help="also the TRL release tables, from the wheel cache ($TRL_WHEEL_CACHE)"
    )
    args = parser.parse_args(argv)
    steps = GENERATED + ((("TRL release tables", releases),) if args.releases else ())
    found: list[Path] = []
    for name, build in steps:
        files = build()
        changed = stale(files)
        if args.check:
            found += changed
            continue
        for path in changed:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(files[path], encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
        fresh = len(files) - len(changed)
        print(f"{name}: {fresh} of {len(files)} {'file was' if len(files) == 1 else 'files were'} up to date")
    if found:
        print(
            "stale (run python scripts/regenerate.py): " + ", ".join(str(p.relative_to(ROOT)) for p in found),
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
