"""TrainingArguments keys a TRL release still reads with the older transformers it accepts.

A release table lists the TrainingArguments of one transformers (its `transformers`, e.g. 5.24 for TRL 0.29, what
pip picks for it today). But a TRL release accepts a range of transformers (TRL 0.29: transformers>=4.56.2), and
a key transformers removed inside that range (warmup_ratio, removed in 5.15) is read by every transformers before
the removal: a repository that runs TRL 0.29 with transformers 4.56 or 5.3 trains with it. Such a key is not an
error of the release; it is a warning that names the transformers that read it and the edit that works with all.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from grpo_schema.engine import codes
from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.migrations import MIGRATIONS

if TYPE_CHECKING:
    from grpo_schema.versions import ReleaseSurface

_FLOOR = re.compile(r"^transformers\s*>=\s*(\d+(?:\.\d+)*)\s*$")
_VERSION = re.compile(r"^\s*(\d+(?:\.\d+)*)")


def _version(text: str) -> tuple[int, ...] | None:
    match = _VERSION.match(text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


@lru_cache(maxsize=1)
def _requirements() -> dict[str, Any]:
    from grpo_schema.versions.tables import RELEASES_DIR

    with open(RELEASES_DIR / "requirements.json", encoding="utf-8") as handle:
        return json.load(handle)["releases"]


def transformers_floor(release: str) -> str | None:
    """The oldest transformers the release's wheel requires ('4.56.2' for TRL 0.29), from its own metadata; the
    release's minor stands for a patch the metadata does not list."""
    table = _requirements()
    minor = release.split(".")[:2]
    entry = table.get(release) or next((v for k, v in table.items() if k.split(".")[:2] == minor), None)
    for requirement in (entry or {}).get("requires", []):
        match = _FLOOR.match(requirement.split(";")[0].strip())
        if match:
            return match.group(1)
    return None


def read_by_older_transformers(key: str, value: Any, mapping: dict[str, Any],
                               release: ReleaseSurface) -> Diagnostic | None:
    """GRPO-D006 for a TrainingArguments key the release's table lacks only because its transformers is newer than
    the key: the release accepts a transformers that reads it. None for any other key."""
    migration = MIGRATIONS.get(key)
    if migration is None or migration.origin != "transformers" or key in release.fields:
        return None
    removed, floor = _version(migration.since), transformers_floor(release.release)
    table = _version(release.transformers)
    if removed is None or floor is None or table is None or not _version(floor) < removed <= table:
        return None
    removed_text = ".".join(str(p) for p in removed)
    new_values = migration.rewrite(value, mapping)
    fix = Fix(set=new_values, unset=(key,), safe=False,
              title=f"replace {key} with {', '.join(new_values)}" if new_values else f"remove {key}")
    return Diagnostic(codes.D_IN_RELEASE, "warning",
                      f"{key} is read by transformers before {removed_text} and refused from {removed_text} on: TRL "
                      f"{release.release} accepts transformers>={floor}, so whether the run reads it depends on the "
                      f"transformers installed (pip picks {release.transformers} for it today)",
                      fields=(key,), hint=f"{migration.note}; or pin transformers<{removed_text}", fix=fix)
