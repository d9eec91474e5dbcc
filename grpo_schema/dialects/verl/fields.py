"""The field table of verl's trainer config (fields.json, written by scripts/verl_release.py from the verl wheel).

For each base config (`ppo_trainer`, `ppo_megatron_trainer`): every key as a dotted path with its default and type
(a mapping key is a field too: its children are). Keys under a mapping verl leaves open (a `dict` default of
`{}`, `engine_kwargs`, ...) are free; everywhere else an override of a key the table lacks is refused, as Hydra's
struct mode refuses it (`+key=` adds it).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

from grpo_schema.engine.closematch import suggest

TABLE = Path(__file__).with_name("fields.json")  # the newest release's; older ones are fields-X.Y.Z.json


@dataclass(frozen=True)
class Field:
    key: str
    type: str  # int, float, bool, str, list, dict, any (a null default with no declared type)
    default: Any
    nullable: bool
    choices: tuple[Any, ...] = ()
    follows: str | None = None  # the key whose value this one takes unless it is set (a Hydra interpolation)
    # a field of the section's config class that verl's YAML leaves out: `+key=` adds it, `key=` is refused
    absent: bool = False


@dataclass
class FieldTable:
    release: str
    base: str
    fields: dict[str, Field]
    children: dict[str, tuple[str, ...]] = dataclass_field(default_factory=dict)

    def __post_init__(self) -> None:
        index: dict[str, list[str]] = {}
        for name in self.fields:
            if "." in name:
                index.setdefault(name.rsplit(".", 1)[0], []).append(name)
        self.children = {k: tuple(v) for k, v in index.items()}

    def get(self, key: str) -> Field | None:
        return self.fields.get(key)

    def nearest_parent(self, key: str) -> str:
        """The nearest enclosing key the table has ('' for the top level)."""
        parts = key.split(".")
        for end in range(len(parts) - 1, 0, -1):
            parent = ".".join(parts[:end])
            if parent in self.fields:
                return parent
        return ""

    def is_dataclass_node(self, key: str) -> bool:
        """Whether verl builds this section as a config dataclass (it names one with `_target_`): a dataclass
        refuses keys it does not declare."""
        return f"{key}._target_" in self.fields if key else False

    def inside_dataclass(self, key: str) -> bool:
        parts = key.split(".")
        return any(self.is_dataclass_node(".".join(parts[:end])) for end in range(1, len(parts)))

    def suggestion(self, key: str) -> str | None:
        """The closest known key with the same parent, else the closest anywhere (did-you-mean)."""
        parent = key.rsplit(".", 1)[0] if "." in key else ""
        siblings = (
            frozenset(self.children.get(parent, ())) if parent else frozenset(k for k in self.fields if "." not in k)
        )
        for pool in (siblings, frozenset(self.fields)):
            if not pool:
                continue
            found = suggest(key, pool)
            if found:
                return found
        tail = key.rsplit(".", 1)[-1]
        same_tail = [k for k in self.fields if k.endswith("." + tail)]
        return same_tail[0] if len(same_tail) == 1 else None

    def defaults(self) -> dict[str, Any]:
        return {k: f.default for k, f in self.fields.items() if f.type != "dict" and not f.absent}


@functools.lru_cache(maxsize=None)
def _raw(version: str | None = None) -> dict[str, Any]:
    path = TABLE if version is None or version == release() else TABLE.with_name(f"fields-{version}.json")
    return json.loads(path.read_text())


@functools.lru_cache(maxsize=None)
def release() -> str:
    """The newest release the dialect knows (the oracle's), and the one a file is judged at unless it says."""
    return str(json.loads(TABLE.read_text())["verl"])


def releases() -> tuple[str, ...]:
    """Every release with a field table, newest first."""
    older = sorted(
        (p.name[len("fields-") : -len(".json")] for p in TABLE.parent.glob("fields-*.json")),
        key=lambda v: tuple(int(x) for x in v.split(".") if x.isdigit()),
        reverse=True,
    )
    return (release(), *older)


def resolve(declared: str) -> str | None:
    """The table for a declared release: the same release, or the table of its minor line (0.9.0 is judged with
    0.9.1's, whose config keys it shares); None when the dialect has no table for it."""
    parts = declared.strip().lstrip("v").split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return None
    for known in releases():
        if known.split(".")[:2] == parts[:2]:
            return known
    return None


def bases() -> tuple[str, ...]:
    return tuple(_raw()["bases"])


def _entries(bases: dict[str, Any], name: str) -> dict[str, Any]:
    """A base's keys; a variant (ppo_trainer with another model_engine) is stored as what differs from its base."""
    entries = bases[name]
    if "extends" not in entries:
        return dict(entries)
    merged = {k: v for k, v in _entries(bases, entries["extends"]).items() if k not in set(entries["drop"])}
    merged.update(entries["set"])
    return merged


def engine_base(engine: str, version: str | None = None) -> str | None:
    """The table for ppo_trainer with model_engine=<engine> (megatron has its own base config)."""
    name = "ppo_megatron_trainer" if engine == "megatron" else f"ppo_{engine}_trainer"
    return name if name in _raw(version)["bases"] else None


@functools.lru_cache(maxsize=None)
def table(base: str = "ppo_trainer", version: str | None = None) -> FieldTable:
    """A base config's keys at a release (the newest unless given; see releases())."""
    raw = _raw(version)
    name = base[:-5] if base.endswith(".yaml") else base
    name = name if name in raw["bases"] else "ppo_trainer"
    choices = raw.get("choices", {})
    fields = {
        key: Field(
            key,
            e["type"],
            e.get("default"),
            bool(e.get("nullable")),
            tuple(choices.get(key, ())),
            e.get("follows"),
            bool(e.get("absent")),
        )
        for key, e in _entries(raw["bases"], name).items()
    }
    return FieldTable(str(raw["verl"]), name, fields)
