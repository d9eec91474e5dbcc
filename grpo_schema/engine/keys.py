"""Sort the top-level keys of a config: TRL fields, profile keys, launch keys, migrations, typos.

Every key lands in exactly one place. Keys TRL 1.16 does not read get a diagnostic that says why: renamed or
removed (with a migration), a downstream project's key (use its profile), hyphenated, or unknown with a
did-you-mean over every key that would be accepted.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from grpo_schema.engine import codes
from grpo_schema.engine.closematch import prepared, suggest
from grpo_schema.engine.compiled import compiled
from grpo_schema.engine.diagnostics import Diagnostic, Fix, yaml_value
from grpo_schema.engine.migrations import MIGRATIONS, describe
from grpo_schema.engine.profiles import Profile, known_profiles

# Did-you-mean cost ~1 ms a key (difflib over every accepted key; grpo_schema.engine.closematch pre-filters it now):
# a file of 24,000 unknown keys took 16 s.
MAX_SUGGESTED = 200
LAUNCH_PREFIXES = ("fsdp_", "deepspeed_", "dynamo_", "megatron_lm_", "tpu_", "ipex_", "mpirun_")


def field_names() -> frozenset[str]:
    return compiled("config").names


def launch_keys() -> frozenset[str]:
    return compiled("launch").names


def is_launch_key(key: str) -> bool:
    """accelerate launch options, including the families it accepts under many names (fsdp_*, ...)."""
    return key in launch_keys() or key.startswith(LAUNCH_PREFIXES)


@dataclass
class SortedKeys:
    fields: dict[str, Any] = field(default_factory=dict)  # TRL fields, renamed keys moved to their new name
    profile_args: dict[str, dict[str, Any]] = field(default_factory=dict)  # profile name -> its keys
    launch: dict[str, Any] = field(default_factory=dict)
    env: Any = None
    has_env: bool = False
    hardware: Any = None
    # Values of renamed keys under their new names (type-checked only: TRL 1.16 does not read them), and the
    # key each was written as.
    # (Removed keys whose migration writes a successor, warmup_ratio -> warmup_steps, are included: the cross-field
    # rules are evaluated on the values a migration would give.)
    renamed: dict[str, Any] = field(default_factory=dict)
    written_as: dict[str, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Known projects (not active) whose script arguments the file carries.
    foreign_profiles: list[str] = field(default_factory=list)


def sort_keys(mapping: dict[str, Any], profiles: tuple[Profile, ...]) -> SortedKeys:
    out = SortedKeys()
    fields = field_names()
    profile_of = {key: p for p in reversed(profiles) for key in p.keys}
    unknown = 0
    for key, value in mapping.items():
        if key == "env":
            out.env, out.has_env = value, True
        elif key == "hardware":  # grpo-config's own section (grpo_schema.engine.hardware), checked by `grpo plan`
            out.hardware = value
        elif key in fields:
            out.fields[key] = value
        elif key in profile_of:
            out.profile_args.setdefault(profile_of[key].name, {})[key] = value
            if key in MIGRATIONS:  # the profile declares a key TRL renamed or dropped: accepted, but dead
                _migrate(out, mapping, key, value, dead_in=profile_of[key].name)
        elif key in MIGRATIONS:
            _migrate(out, mapping, key, value)
        elif is_launch_key(key):
            out.launch[key] = value
        else:
            unknown += 1
            diagnostic = _unknown(key, value, profiles, suggest=unknown <= MAX_SUGGESTED)
            out.diagnostics.append(diagnostic)
            if diagnostic.code == codes.K_PROFILE:
                out.foreign_profiles += [p for p in _owners(key, profiles) if p not in out.foreign_profiles]
    return out


def _closest_choice(name: str, value: Any) -> str | None:
    """The allowed value of field `name` that a refused string value most likely means, if one is close."""
    choices = [str(c) for c in compiled("config").fields.get(name, {}).get("choices", []) if isinstance(c, str)]
    if not isinstance(value, str) or not choices:
        return None
    match = prepared(frozenset(choices)).close_matches(value, n=1, cutoff=0.6)
    return match[0] if match else None


def _accepted_as(name: str, value: Any) -> bool:
    """Whether the field `name` takes `value` (a migration's safe fix must not write what is then refused)."""
    from pydantic_core import ValidationError

    try:
        compiled("config").validate({name: value})
    except ValidationError:
        return False
    return True


def _migrate(out: SortedKeys, mapping: dict[str, Any], key: str, value: Any, dead_in: str | None = None) -> None:
    migration = MIGRATIONS[key]
    new_values = migration.rewrite(value, mapping)
    accepted = all(_accepted_as(name, v) for name, v in new_values.items())
    fix = Fix(
        set=new_values,
        unset=(key,),
        safe=migration.safe and accepted,
        title=f"replace {key} with {', '.join(new_values)}" if new_values else f"remove {key}",
    )
    if migration.kind == "renamed" and new_values:
        fix = Fix(rename={key: migration.replacement}, safe=accepted, title=f"rename {key} to {migration.replacement}")
        meant = None if accepted else _closest_choice(migration.replacement, value)
        if meant is not None:  # torch_dtype: bf16 -> dtype: bfloat16, for review
            fix = Fix(
                set={migration.replacement: meant},
                unset=(key,),
                safe=False,
                title=f"rename {key} to {migration.replacement} and write {meant}",
            )
    for name, new_value in new_values.items():
        # Type-check the value under its new name, so a bad value is reported now, not after the migration, and
        # let the cross-field rules see it there.
        out.renamed[name] = new_value
        out.written_as[name] = key
    code = codes.K_RENAMED if migration.kind == "renamed" else codes.K_REMOVED
    hint = f"write {migration.replacement}: {yaml_value(value)}" if migration.kind == "renamed" else migration.note
    if migration.kind == "renamed" and not new_values:
        hint = f"{migration.replacement} is already set; remove {key}"
    if not accepted:
        meant = fix.set.get(migration.replacement or "") if migration.kind == "renamed" else None
        hint = (
            f"write {migration.replacement}: {meant} ({migration.replacement} does not take {yaml_value(value)})"
            if meant
            else hint + f" (then correct the value: {migration.replacement or ', '.join(new_values)} does not take it)"
        )
    message = describe(migration) + ("" if migration.kind == "renamed" else " and is no longer read")
    severity = "error"
    if dead_in is not None:
        code, severity = codes.K_DEAD_PROFILE_KEY, "warning"
        message = (
            f"{key} is accepted by {dead_in}'s script arguments, but nothing reads it: "
            + describe(migration)[0].lower()
            + describe(migration)[1:]
        )
    out.diagnostics.append(Diagnostic(code, severity, message, fields=(key,), hint=hint, fix=fix))


@functools.lru_cache(maxsize=64)
def accepted_keys(profiles: tuple[Profile, ...]) -> frozenset[str]:
    keys = set(field_names()) | set(launch_keys()) | {"env", "hardware"}
    for profile in profiles:
        keys |= profile.keys
    return frozenset(keys)


# Keys nearly every config sets: preferred when a typo is about as close to one of them as to a rarer key.
COMMON_KEYS = frozenset(
    {
        "model_name_or_path",
        "dataset_name",
        "output_dir",
        "learning_rate",
        "per_device_train_batch_size",
        "gradient_accumulation_steps",
        "num_generations",
        "max_completion_length",
        "num_train_epochs",
        "max_steps",
        "logging_steps",
        "save_steps",
        "bf16",
        "beta",
        "loss_type",
        "reward_funcs",
        "reward_weights",
        "use_vllm",
        "temperature",
        "lr_scheduler_type",
        "warmup_steps",
        "report_to",
        "seed",
        "gradient_checkpointing",
        "num_iterations",
        "epsilon",
        "scale_rewards",
        "dtype",
    }
)


@functools.lru_cache(maxsize=1024)
def did_you_mean(word: str, candidates: frozenset[str]) -> str | None:
    """The accepted key `word` stands for (cached: fix suggestions re-check a config many times). One engine,
    grpo_schema.engine.closematch.suggest: same-meaning names first, never a rename that changes the meaning."""
    return suggest(word, candidates, COMMON_KEYS)


def _owners(key: str, profiles: tuple[Profile, ...]) -> list[str]:
    """The known projects, other than the active ones, whose script arguments include `key`."""
    return [p.name for p in known_profiles().values() if key in p.keys and p not in profiles]


def _unknown(key: str, value: Any, profiles: tuple[Profile, ...], suggest: bool = True) -> Diagnostic:
    underscored = key.replace("-", "_")
    if underscored != key and underscored in accepted_keys(profiles):
        return Diagnostic(
            codes.K_HYPHEN,
            "error",
            f"{key} is written with hyphens; YAML keys use underscores "
            f"({underscored}), and TRL ignores the hyphenated form",
            fields=(key,),
            hint=f"write {underscored}",
            fix=Fix(rename={key: underscored}, title=f"rename {key} to {underscored}"),
        )
    owners = _owners(key, profiles)
    if owners:
        return Diagnostic(
            codes.K_PROFILE,
            "error",
            f"{key} is a script argument of {owners[0]}, not of TRL's `trl grpo`",
            fields=(key,),
            hint=f"validate with --profile {owners[0]}, or remove it",
        )
    suggestion = did_you_mean(key, accepted_keys(profiles)) if suggest else None
    hint = f"did you mean {suggestion}?" if suggestion else "remove it, or check the spelling against `grpo schema`"
    fix = Fix(rename={key: suggestion}, safe=False, title=f"rename {key} to {suggestion}") if suggestion else None
    return Diagnostic(codes.K_UNKNOWN, "error", f"unknown key {key!r}", fields=(key,), hint=hint, fix=fix)


def set_aside_unknown(keys: SortedKeys, unknown: frozenset[str]) -> frozenset[str]:
    """Drop the keys set to values known only at run time: validated by nothing, judged by no rule, never a
    default. Returns them, with the checked names of keys written under one of those names."""
    if unknown:
        unknown = unknown | {k for k in (*keys.fields, *keys.renamed) if keys.written_as.get(k) in unknown}
        keys.fields = {k: v for k, v in keys.fields.items() if k not in unknown}
        keys.renamed = {k: v for k, v in keys.renamed.items() if k not in unknown}
        keys.launch = {k: v for k, v in keys.launch.items() if k not in unknown}
    return unknown
