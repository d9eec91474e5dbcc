"""TrainingArguments keys that only some of the transformers a TRL release accepts read.

A release table lists the TrainingArguments of one transformers release (its `transformers`: the newest release
before the TRL wheel, 5.3.0 for TRL 0.29, 4.56.2 for TRL 0.23). But a TRL release accepts a range of transformers
(TRL 0.29: transformers>=4.56.2), and inside that range keys come and go:

* removed: warmup_ratio is read by every transformers before 5.15, so TRL 0.29 (table 5.3.0) reads it, but not with
  transformers 5.15 or later; TRL 1.10 (table 5.15.0) does not read it, but does with transformers 4.56 to 5.14;
* added: project and trackio_space_id are TrainingArguments fields from transformers 4.57, so TRL 0.23 (table
  4.56.2) reads them when transformers 4.57 is installed.

Such a key is neither an error of the release nor silently fine: GRPO-K011 says which transformers read it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from grpo_schema.engine import codes
from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.migrations import MIGRATIONS

if TYPE_CHECKING:
    from grpo_schema.versions import ReleaseSurface

Version = tuple[int, ...]
_CLAUSE = re.compile(r"(>=|<=|==|!=|<|>)\s*(\d+(?:\.\d+)*)")
_VERSION = re.compile(r"^\s*(\d+(?:\.\d+)*)")


@dataclass(frozen=True)
class Accepted:
    """The transformers a TRL release's wheel accepts: at least `floor`, below `ceiling` (None: no upper bound)."""

    floor: Version
    ceiling: Version | None
    text: str  # as the wheel writes it, for the message

    def admits(self, version: Version) -> bool:
        return version >= self.floor and (self.ceiling is None or version < self.ceiling)


def _version(text: str) -> Version | None:
    match = _VERSION.match(text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def _shown(version: Version) -> str:
    return ".".join(str(p) for p in version)


@lru_cache(maxsize=1)
def _requirements() -> dict[str, Any]:
    from grpo_schema.versions.tables import RELEASES_DIR

    with open(RELEASES_DIR / "requirements.json", encoding="utf-8") as handle:
        return json.load(handle)["releases"]


@lru_cache(maxsize=64)
def accepted_transformers(release: str) -> Accepted | None:
    """What the release's own metadata requires of transformers ('transformers>=4.56.2' for TRL 0.29); its
    minor's entry stands for a patch the metadata does not list."""
    table = _requirements()
    minor = release.split(".")[:2]
    entry = table.get(release) or next((v for k, v in table.items() if k.split(".")[:2] == minor), None)
    floor, ceiling, texts = None, None, []
    for requirement in (entry or {}).get("requires", []):
        spec, _, marker = requirement.partition(";")
        if not re.match(r"^\s*transformers\b", spec) or marker.strip():
            continue
        texts.append(spec.strip())
        for op, target in _CLAUSE.findall(spec):
            version = _version(target)
            if op in (">=", ">", "=="):
                floor = version
            if op in ("<", "<="):
                ceiling = version
    return Accepted(floor, ceiling, ", ".join(texts)) if floor else None


@lru_cache(maxsize=1)
def _training_arguments_since() -> dict[str, Version]:
    """For each TrainingArguments key of any release table, the oldest transformers of a table that has it."""
    from grpo_schema.versions.tables import releases, surface

    since: dict[str, Version] = {}
    for name in releases():
        table = surface(name)
        version = _version(table.transformers)
        if version is None:
            continue
        for key, info in table.fields.items():
            if getattr(info, "source", None) == "TrainingArguments" and (key not in since or version < since[key]):
                since[key] = version
    return since


def read_by_other_transformers(
    key: str, value: Any, mapping: dict[str, Any], release: ReleaseSurface
) -> Diagnostic | None:
    """GRPO-K011 for a TrainingArguments key whose reading depends on the transformers installed: one the release's
    table lacks only because of the transformers it was read from, where the release accepts a transformers that
    reads the key; or one the table's transformers reads (the run parses with it) that a later transformers the
    release accepts refuses. None for any other key."""
    accepted, table = accepted_transformers(release.release), _version(release.transformers)
    if accepted is None or table is None:
        return None
    migration = MIGRATIONS.get(key)
    if key in release.fields:  # read by the table's transformers (the release's date): refused by a later one?
        removed = _removed_in(migration) if migration is not None and migration.origin == "transformers" else None
        # within the table's major, as for an added key below (TRL 0.23 never met transformers 5)
        if removed is not None and table < removed and removed[:1] == table[:1] and accepted.admits(removed):
            return _removed(key, value, mapping, release, accepted, removed)
        return None
    if migration is not None and migration.origin == "transformers":
        removed = _removed_in(migration)
        if removed is not None and accepted.floor < removed <= table:
            return _removed(key, value, mapping, release, accepted, removed)
        return None
    added = _training_arguments_since().get(key)
    # Only within the table's major: an old TRL's open-ended requirement (transformers>=4.51 for 0.19) does not
    # make it run on transformers 5, whose TrainingArguments (activation_checkpointing, ...) it never met.
    if added is not None and table < added and added[:1] == table[:1] and accepted.admits(added):
        return _added(key, release, accepted, added)
    return None


def _removed_in(migration: Any) -> Version | None:
    """The transformers release that no longer reads the key: a removal's own version, a rename's "old name
    removed in X" (its `since` is when the new name came)."""
    if migration.kind == "removed":
        return _version(migration.since)
    match = re.search(r"removed in (\d+(?:\.\d+)*)", migration.since)
    return _version(match.group(1)) if match else None


def _removed(
    key: str, value: Any, mapping: dict[str, Any], release: ReleaseSurface, accepted: Accepted, removed: Version
) -> Diagnostic:
    migration = MIGRATIONS[key]
    new_values = migration.rewrite(value, mapping)
    fix = Fix(
        set=new_values,
        unset=(key,),
        safe=False,
        title=f"replace {key} with {', '.join(new_values)}" if new_values else f"remove {key}",
    )
    at = _shown(removed)
    return Diagnostic(
        codes.K_OTHER_TRANSFORMERS,
        "warning",
        f"{key} is read by transformers before {at} and refused from {at} on: TRL {release.release} "
        f"accepts {accepted.text}, so whether the run reads it depends on the transformers installed "
        f"(its table's is {release.transformers})",
        fields=(key,),
        hint=(
            f"write {migration.replacement}, as every transformers it accepts reads it"
            if migration.kind == "renamed"
            else migration.note
        )
        + f"; or pin transformers<{at}",
        fix=fix,
    )


def _added(key: str, release: ReleaseSurface, accepted: Accepted, added: Version) -> Diagnostic:
    at = _shown(added)
    return Diagnostic(
        codes.K_OTHER_TRANSFORMERS,
        "warning",
        f"{key} is a TrainingArguments field of a newer transformers (transformers {at} has it): TRL "
        f"{release.release} accepts {accepted.text}, so whether the run reads it depends on the "
        f"transformers installed (its table's {release.transformers} has no {key})",
        fields=(key,),
        hint=f"pin transformers>={at}, or remove {key} to run with an older transformers",
        fix=Fix(unset=(key,), safe=False, title=f"remove {key}"),
    )
