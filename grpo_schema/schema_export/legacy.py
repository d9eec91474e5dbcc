"""Deprecated, renamed and removed keys, marked so that editors flag them.

The YAML language server acts on `deprecationMessage` (a diagnostic on the key, and the key leaves completion);
the standard `deprecated: true` is kept for other tools. Keys that TRL 1.16 still reads (the GRPO-D rules) stay
valid; renamed and removed keys (grpo_schema.engine.migrations) are also refused, as the Python validator refuses them.
"""

from __future__ import annotations

from typing import Any

from grpo_schema.engine.codes import CODES

# Deprecated fields that TRL 1.16 still reads -> the rule that warns about them (grpo_schema/engine/rules/deprecated.py).
DEPRECATED_FIELDS = {
    "vllm_importance_sampling_cap": "GRPO-D001",
    "use_transformers_paged": "GRPO-D002",
    "use_liger_kernel": "GRPO-D003",
    "gradient_checkpointing": "GRPO-D004",
    "gradient_checkpointing_kwargs": "GRPO-D004",
    "local_rank": "GRPO-D005",
}
LEGACY_GROUP = (
    "legacy",
    "Renamed and removed keys",
    "Keys TRL 1.16 no longer reads. `grpo migrate FILE --write` rewrites them.",
)


def mark_deprecated(properties: dict[str, Any]) -> None:
    """Add deprecation marks to the deprecated fields present in `properties` (in place)."""
    from grpo_schema.engine.rules import load_rules

    load_rules()  # the D codes are declared by their rules
    for name, code in DEPRECATED_FIELDS.items():
        if name in properties:
            properties[name]["deprecated"] = True
            properties[name]["deprecationMessage"] = f"{CODES[code].title} ({code})"


def migrated_properties(skip: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """One property per renamed or removed key (except those in `skip`), which editors and validators refuse."""
    from grpo_schema.engine.migrations import MIGRATIONS, describe

    out = {}
    for key, migration in MIGRATIONS.items():
        if key in skip:
            continue
        code = "GRPO-K002" if migration.kind == "renamed" else "GRPO-K003"
        note = "" if migration.kind == "renamed" else f": {migration.note}"
        message = f"{describe(migration)}{note}. Run `grpo migrate` ({code})."
        prop: dict[str, Any] = {
            "description": message,
            "markdownDescription": message,
            "deprecated": True,
            "deprecationMessage": message,
            # No value is valid, so validators refuse the key. (`enum: []` would say so more kindly, but the YAML
            # language server rejects a draft-07 schema containing it.)
            "not": {},
        }
        if migration.replacement:
            prop["x-replaced-by"] = migration.replacement
        out[key] = prop
    return out
