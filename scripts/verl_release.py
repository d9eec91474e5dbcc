#!/usr/bin/env python3
"""Regenerate grpo_schema/dialects/verl/fields.json: the trainer config of the installed verl release, as a table.

Run with the verl environment's interpreter (scripts/setup-verl.sh builds .venv-verl):

    .venv-verl/bin/python scripts/verl_release.py            # write the table
    .venv-verl/bin/python scripts/verl_release.py --check    # exit 1 if the committed table differs

An older release's table comes from its source at the release tag, first on the path (its configs and dataclasses;
the environment's Hydra, OmegaConf and torch serve):

    git -C verl archive v0.8.0 verl | tar -x -C /tmp/verl-0.8.0
    PYTHONPATH=/tmp/verl-0.8.0 .venv-verl/bin/python scripts/verl_release.py --release 0.8.0   # fields-0.8.0.json

For each base config (`ppo_trainer`, `ppo_megatron_trainer`) it composes verl's own Hydra config with no overrides and
walks it: every key as a dotted path, with its default (interpolations resolved where they resolve) and its type
(from the config dataclass a section names with `_target_`, else from the default). The choices of
algorithm.adv_estimator come from verl's AdvantageEstimator. Only these derived facts are written, no verl text.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import re
import sys
import typing
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "grpo_schema" / "dialects" / "verl" / "fields.json"
NEWEST = "0.9.1"  # the release fields.json is for (the oracle's); older ones go to fields-X.Y.Z.json
BASES = ("ppo_trainer", "ppo_megatron_trainer")
# ppo_trainer with another model_engine (verl's own _generated_ppo_<engine>_trainer.yaml names them so): the actor,
# ref and critic sections take that engine's config. Every model_engine option of the release but these two:
PLAIN_ENGINES = ("dp", "megatron")  # dp is ppo_trainer itself; megatron has its own base config
# configs of verl's other trainers that extend a base (its fully async trainer): name -> (package of its folder, base)
EXTENDED = {
    "fully_async_ppo_trainer": ("verl.experimental.fully_async_policy", "ppo_trainer"),
    "fully_async_ppo_megatron_trainer": ("verl.experimental.fully_async_policy", "ppo_megatron_trainer"),
}


def config_dir() -> str:
    import verl.trainer.config as config_package

    return os.path.dirname(config_package.__file__)


def compose(name: str, overrides: tuple[str, ...] = (), folder: str | None = None) -> Any:
    import verl
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    here = os.getcwd()
    os.chdir(Path(verl.__file__).parent.parent)  # a config's searchpath may name verl's folders relative to it
    try:
        with initialize_config_dir(config_dir=folder or config_dir(), version_base=None):
            return hydra_compose(config_name=name, overrides=list(overrides))
    finally:
        os.chdir(here)


def package_dir(package: str) -> str | None:
    """The `config` folder beside a package of verl's (None when the release has no such package)."""
    try:
        folder = Path(importlib.import_module(package).__file__ or "").parent / "config"
    except ImportError:
        return None
    return str(folder) if folder.is_dir() else None


def _type_name(annotation: Any) -> tuple[str, bool]:
    """A dataclass annotation as (int|float|bool|str|list|dict|any, nullable)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Union or str(origin) == "types.UnionType":
        inner = [a for a in args if a is not type(None)]
        name, _ = _type_name(inner[0]) if len(inner) == 1 else ("any", True)
        return name, True
    for python, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str")):
        if annotation is python:
            return name, False
    if origin in (list, tuple) or annotation in (list, tuple):
        return "list", False
    if origin is dict or annotation is dict or dataclasses.is_dataclass(annotation):
        return "dict", False
    return "any", False


def _value_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "dict"
    return "any"


def _dataclass(target: Any) -> tuple[Any, dict[str, Any]]:
    if not isinstance(target, str) or "." not in target:
        return None, {}
    module, _, name = target.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
        hints = typing.get_type_hints(cls)
    except Exception:  # a section whose class cannot be imported here: types come from the defaults
        return None, {}
    return (cls, hints) if dataclasses.is_dataclass(cls) else (None, {})


def _dataclass_types(target: Any) -> dict[str, tuple[str, bool]]:
    cls, hints = _dataclass(target)
    if cls is None:
        return {}
    return {f.name: _type_name(hints.get(f.name, Any)) for f in dataclasses.fields(cls) if not f.name.startswith("_")}


def _absent_fields(target: Any, present: set[str], path: str, out: dict[str, Any]) -> None:
    """Fields the config dataclass declares but verl's YAML leaves out: Hydra refuses `key=` on them (the composed
    config lacks them), `+key=` adds them and the dataclass takes them."""
    cls, hints = _dataclass(target)
    if cls is None:
        return
    for item in dataclasses.fields(cls):
        if item.name.startswith("_") or item.name in present or not item.init:
            continue
        kind, nullable = _type_name(hints.get(item.name, Any))
        default = item.default if item.default is not dataclasses.MISSING else None
        if not isinstance(default, (bool, int, float, str, type(None))):
            default = None
        entry = {"type": kind, "default": default, "absent": True}
        if nullable or default is None:
            entry["nullable"] = True
        out[f"{path}.{item.name}"] = entry


def walk(node: Any, path: str, out: dict[str, Any]) -> None:
    from omegaconf import DictConfig, ListConfig, OmegaConf

    typed = _dataclass_types(node.get("_target_")) if isinstance(node, DictConfig) else {}
    for key in node.keys():
        dotted = f"{path}.{key}" if path else str(key)
        try:
            child = node[key]
        except Exception:  # an interpolation that does not resolve without a run (e.g. an env variable)
            child = OmegaConf.to_container(node, resolve=False)[key]
        if isinstance(child, DictConfig):
            out[dotted] = {"type": "dict", "default": None}
            walk(child, dotted, out)
            continue
        value = OmegaConf.to_container(child, resolve=True) if isinstance(child, ListConfig) else child
        kind, nullable = typed.get(str(key), (_value_type(value), value is None))
        if kind == "any" and value is not None:
            kind = _value_type(value)
        entry = {"type": kind, "default": value}
        raw = OmegaConf.to_container(node, resolve=False).get(key)
        follows = re.fullmatch(r"\$\{(?:oc\.select:)?([\w.]+)(?:,[^{}]*)?\}", raw) if isinstance(raw, str) else None
        if follows:  # the value follows another key (an interpolation): kept as a reference, resolved per run
            entry["follows"] = _absolute(follows.group(1), path)
        if nullable or value is None:
            entry["nullable"] = True
        out[dotted] = entry
    if isinstance(node, DictConfig) and path:
        _absent_fields(node.get("_target_"), {str(k) for k in node.keys()}, path, out)


def _absolute(reference: str, path: str) -> str:
    """A Hydra interpolation's key as an absolute dotted path (a leading dot is relative to the node)."""
    if not reference.startswith("."):
        return reference
    dots = len(reference) - len(reference.lstrip("."))
    parts = path.split(".") if path else []
    base = parts[: len(parts) - (dots - 1)] if dots > 1 else parts
    return ".".join(base + [reference.lstrip(".")])


def difference(base: dict[str, Any], variant: dict[str, Any], name: str = "ppo_trainer") -> dict[str, Any]:
    return {
        "extends": name,
        "set": {k: v for k, v in variant.items() if base.get(k) != v},
        "drop": sorted(k for k in base if k not in variant),
    }


def table() -> dict[str, Any]:
    import verl
    from verl.trainer.ppo.core_algos import AdvantageEstimator

    bases: dict[str, Any] = {}
    variants = [(base, base, ()) for base in BASES]
    engines = sorted(p.stem for p in Path(config_dir(), "model_engine").glob("*.yaml"))
    extra = [engine for engine in engines if engine not in PLAIN_ENGINES]
    variants += [(f"ppo_{engine}_trainer", "ppo_trainer", (f"model_engine={engine}",)) for engine in extra]
    for name, base, overrides in variants:
        fields: dict[str, Any] = {}
        walk(compose(base, overrides), "", fields)
        bases[name] = dict(sorted(fields.items()))
    for name, (package, base) in EXTENDED.items():
        folder = package_dir(package)
        if folder is not None:
            fields = {}
            walk(compose(name, folder=folder), "", fields)
            bases[name] = difference(bases[base], dict(sorted(fields.items())), base)
    for engine in extra:  # written as what differs from ppo_trainer, which they extend
        bases[f"ppo_{engine}_trainer"] = difference(bases["ppo_trainer"], bases[f"ppo_{engine}_trainer"])
    choices = {"algorithm.adv_estimator": sorted(e.value for e in AdvantageEstimator), "model_engine": engines}
    return {"verl": verl.__version__, "bases": bases, "choices": choices}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed table is stale")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write (default: fields.json for the newest release, fields-X.Y.Z.json for an "
        "older one, e.g. verl's source at a release tag first on PYTHONPATH)",
    )
    parser.add_argument(
        "--release",
        default=None,
        help="the release the table is for, when verl's own version says otherwise (a release tag's "
        "source says 0.8.0.dev)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("VERL_USE_EXTERNAL_PLUGINS", "none")
    data = table()
    data["verl"] = args.release or data["verl"]
    out = args.out or (OUT if data["verl"] == NEWEST else OUT.with_name(f"fields-{data['verl']}.json"))
    text = json.dumps(data, indent=1, sort_keys=False, default=str) + "\n"
    if args.check:
        same = out.exists() and out.read_text() == text
        print(f"{out.name} is up to date" if same else f"{out.name} is stale: run scripts/verl_release.py")
        return 0 if same else 1
    out.write_text(text)
    print(f"wrote {out} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
