"""Judging a config against the TRL release that will run it, not only against TRL 1.16.

The engine's tables are TRL 1.16's. For another release the config is first read as that release reads it
(grpo_schema.versions holds every release's keys, types and defaults, read from its own source), then handed to
the 1.16 checker in 1.16's terms:

* a key the release reads under an old name (torch_dtype in 0.19) is checked under its new name, at its line;
* a key only the release reads (max_prompt_length up to 0.27, vllm_device in 0.16) is type-checked as the release
  types it and leaves the rest alone: it is not an error for that release;
* a key the release does not read gets the diagnostic its own front end earns: `trl grpo` stops (0.19-0.21),
  ignores it (0.18, 0.22-0.28: a warning, the setting has no effect), or hands it to `accelerate launch`, which
  exits (0.29 on);
* the release's defaults stand for the keys the file leaves out (loss_type bnpo in 0.19, beta 0.04 in 0.16, vllm_mode
  server up to 0.29, ...), and what a release did before a key existed stands in for it (one generation per
  micro-step before steps_per_generation, the sequence-mean loss before loss_type), so the cross-field rules and the
  batch schedule are the release's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from grpo_schema.engine import codes
from grpo_schema.engine.compiled import compiled
from grpo_schema.engine.diagnostics import Diagnostic, Fix, yaml_value
from grpo_schema.engine.keys import is_launch_key
from grpo_schema.engine.migrations import MIGRATIONS
from grpo_schema.engine.release import release_defaults
from grpo_schema.engine.release_choices import choice_refused, kept_for_release
from grpo_schema.engine.release_deprecations import (
    deprecated_in_release,
    deprecation_for_release,
    reference_deprecations,
)
from grpo_schema.engine.release_pairs import refused_pairs
from grpo_schema.engine.transformers_range import read_by_other_transformers

if TYPE_CHECKING:
    from grpo_schema.versions import ReleaseSurface

# Keys the release does not read: unknown, a downstream script's, or renamed / removed before it. A front end that
# ignores keys it does not read makes each of these a warning (the setting has no effect), not an error.
IGNORED_WHEN_UNREAD = {codes.K_UNKNOWN, codes.K_PROFILE, codes.K_RENAMED, codes.K_REMOVED}
# Written out as 1.16 reads them (a boolean scale_rewards is the same setting as 'group' / 'none').
BOOLEAN_WORDS = {"true", "false", "yes", "no", "y", "n", "t", "f", "1", "0", "on", "off"}


@dataclass
class Reading:
    """A config as one release reads it, in the terms the 1.16 checker understands."""

    mapping: dict[str, Any]  # what the checker validates (translated keys, release-only keys removed)
    implicit: dict[str, Any] = field(default_factory=dict)  # the release's values for keys the file leaves out
    written_as: dict[str, str] = field(default_factory=dict)  # checked name -> key as written
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Keys whose value the release's trainer refuses: the rules about them stay silent (one finding per cause; the
    # rest is judged with the release's default, a value the user never wrote).
    refused: set[str] = field(default_factory=set)
    # Values the release accepts that 1.16's types cannot hold (optim: adamw_hf at 0.14): validated by the release's
    # value list, so the checker leaves them alone and the config holds them as written.
    kept: dict[str, Any] = field(default_factory=dict)


def read_as(mapping: dict[str, Any], release: ReleaseSurface, profile_keys: frozenset[str]) -> Reading:
    fields_116 = compiled("config").fields
    reading = Reading({})
    launcher_reads = release.front_end.unknown_keys == "accelerate"
    for key, value in mapping.items():
        other = read_by_other_transformers(key, value, mapping, release)
        if other is not None:  # warmup_ratio in TRL 0.29, project in TRL 0.23: read by some transformers it accepts
            reading.diagnostics.append(other)
            problem = parser_refuses(key, value, release) if key in release.fields else None
            if problem is not None:  # read by the table's transformers: its parser converts the value
                reading.diagnostics.append(problem)
                continue
            if key in fields_116:
                reading.mapping[key] = value
            elif key in MIGRATIONS:  # checked under the name 1.16 reads, at its line
                for name, new_value in MIGRATIONS[key].rewrite(value, mapping).items():
                    if name in fields_116 and name not in mapping:
                        reading.mapping[name] = new_value
                        reading.written_as[name] = key
            continue
        if is_launch_key(key) and key not in release.fields and not launcher_reads:
            reading.diagnostics.append(launch_key_not_read(key, release))  # still the declared world size
        if key in ("env", "hardware") or key in profile_keys or key not in release.fields and key not in fields_116:
            reading.mapping[key] = value  # the checker's own reading (launch keys, typos, profile arguments)
            continue
        if key not in release.fields:
            reading.diagnostics.append(not_read(key, release))
            continue
        problem = parser_refuses(key, value, release)
        if problem is not None:
            reading.diagnostics.append(problem)
            continue
        # refused by the trainer when it starts (loss_type), or not among the release's own value list (an optim
        # of a later transformers, refused when TrainingArguments is built)
        refused = trainer_refuses(key, value, release) or choice_refused(key, value, release, key in fields_116)
        if refused is not None and refused.severity == "warning":
            reading.diagnostics.append(refused)  # the parser takes it: judged further as the release reads it
            refused = None
        if refused is not None:
            # one finding per cause: the checker judges the rest with the release's default, not this value (its
            # own choice check and the rules about the value would speak of it again)
            reading.diagnostics.append(refused)
            reading.refused.add(key)
            continue
        if key in fields_116:
            reading.mapping[key] = value
            if kept_for_release(key, value, release, fields_116[key]):
                reading.kept[key] = value
        elif key in MIGRATIONS:  # read under its old name: checked under the new one, where 1.16 reads it
            for name, new_value in MIGRATIONS[key].rewrite(value, mapping).items():
                if name in fields_116 and name not in mapping:
                    reading.mapping[name] = new_value
                    reading.written_as[name] = key
        # any other key only this release reads has been type-checked above; 1.16 has no rule about it
    reading.diagnostics += [
        required(name, release) for name, info in release.fields.items() if info.required and name not in mapping
    ]
    reading.diagnostics += deprecated_in_release(mapping, release)
    reading.diagnostics += refused_pairs(mapping, release)
    reading.implicit = release_defaults(
        release, {k: v for k, v in mapping.items() if k not in reading.refused}, fields_116
    )
    return reading


def required(name: str, release: ReleaseSurface) -> Diagnostic:
    """A key the release's parser insists on (dataset_name for TRL 0.14-0.17's script)."""
    return Diagnostic(
        codes.T_MISSING, "error", f"TRL {release.release}'s parser requires {name}", fields=(name,), hint=f"set {name}"
    )


def older_name(key: str, release: ReleaseSurface) -> str | None:
    """The name under which the release reads a setting TRL 1.16 calls `key` (torch_dtype for dtype in 0.19,
    gradient_checkpointing for activation_checkpointing), from the renames and 1.16's own deprecations."""
    olds = [m.key for m in MIGRATIONS.values() if m.kind == "renamed" and m.replacement == key]
    olds += [old for old, new in reference_deprecations().items() if new == key]
    return next((old for old in olds if old in release.fields), None)


def not_read(key: str, release: ReleaseSurface) -> Diagnostic:
    """A key TRL 1.16 reads but this release does not, as the release's front end treats it; renamed back where the
    release reads the setting under an older name (removing it would drop the setting)."""
    stops, how = front_end_verdict(release)
    severity = "error" if stops else "warning"
    back = older_name(key, release)
    if back is not None:
        return Diagnostic(
            codes.K_NOT_IN_RELEASE,
            severity,
            f"{key} is not read by TRL {release.release}, which reads the setting as {back}; {how}",
            fields=(key,),
            hint=f"write {back} for TRL {release.release}",
            fix=Fix(rename={key: back}, safe=True, title=f"rename {key} to {back}"),
        )
    message = f"{key} is not read by TRL {release.release} (it came in a later release); {how}"
    return Diagnostic(
        codes.K_NOT_IN_RELEASE,
        severity,
        message,
        fields=(key,),
        hint=f"remove {key}, or run a TRL release that reads it",
        fix=Fix(unset=(key,), safe=False, title=f"remove {key}"),
    )


def launch_key_not_read(key: str, release: ReleaseSurface) -> Diagnostic:
    """An `accelerate launch` key in a release whose `trl grpo` does not hand config keys to accelerate (< 0.29)."""
    stops, how = front_end_verdict(release)
    return Diagnostic(
        codes.K_LAUNCH_NOT_IN_RELEASE,
        "error" if stops else "warning",
        f"{key} is an `accelerate launch` option, which TRL {release.release}'s `trl grpo` does not take "
        f"from a config file; {how}",
        fields=(key,),
        hint=f"pass it to `accelerate launch` on the command line (--{key} ...), and remove it here",
        fix=Fix(unset=(key,), safe=False, title=f"remove {key}"),
    )


def front_end_verdict(release: ReleaseSurface) -> tuple[bool, str]:
    """(whether an unknown key stops the run, what the release does with it)."""
    front = release.front_end
    mode = front.unknown_keys if front.reads_config else f"script-{front.script_unknown_keys}"
    if mode == "error" or mode == "script-error":
        return True, f"its `trl grpo` parser stops: {front.unknown_keys_message}"
    if mode == "accelerate":
        return True, (
            "its `trl grpo` hands unknown keys to `accelerate launch`, which exits with 'unrecognized arguments'"
        )
    return False, "it ignores the key, so the setting has no effect"


def parser_refuses(key: str, value: Any, release: ReleaseSurface) -> Diagnostic | None:
    """A string the release's parser cannot convert to the field's type (it converts YAML strings with the field's
    type, as it converts command-line arguments): `scale_rewards: group` where scale_rewards is a boolean."""
    info = release.fields[key]
    if not isinstance(value, str) or info.type not in ("bool", "int", "float"):
        return None
    text = value.strip()
    if info.nullable and text.lower() in ("none", "null", ""):
        return None
    ok = text.lower() in BOOLEAN_WORDS if info.type == "bool" else _converts(text, int if info.type == "int" else float)
    if ok:
        return None
    kind = {"bool": "a boolean", "int": "an integer", "float": "a number"}[info.type]
    return Diagnostic(
        codes.T_NOT_IN_RELEASE,
        "error",
        f"{key}: TRL {release.release} reads {key} as {kind}, and its parser refuses {yaml_value(value)}",
        fields=(key,),
        hint=f"write {kind} for TRL {release.release}"
        + (" (true = 'group', false = 'none'; the words came with TRL 0.22)" if key == "scale_rewards" else ""),
    )


def trainer_refuses(key: str, value: Any, release: ReleaseSurface) -> Diagnostic | None:
    """A value the release parses but its trainer refuses (`loss_type: cispo` in 0.19, whose trainer knows grpo,
    bnpo and dr_grpo and raises "Unknown loss type" for the rest)."""
    allowed = release.choices.get(key)
    if not allowed or not isinstance(value, str) or value in allowed:
        return None
    listed = ", ".join(allowed)
    return Diagnostic(
        codes.T_CHOICE,
        "error",
        f"{key}: TRL {release.release}'s trainer accepts {listed}, and refuses {yaml_value(value)}",
        fields=(key,),
        hint=f"use one of {listed} for TRL {release.release}, or run a TRL release that has {value}",
    )


def _converts(text: str, kind: type) -> bool:
    try:
        kind(text)
    except ValueError:
        return False
    return True


def as_release_reads(diagnostics: list[Diagnostic], release: ReleaseSurface) -> list[Diagnostic]:
    """The checker's diagnostics as they hold for this release: keys it does not read as its front end treats them
    (a warning where it ignores them), and TRL 1.16's deprecations (area D) only where the release has them too,
    with a fix the release accepts."""
    stops, how = front_end_verdict(release)
    adjusted = []
    for d in diagnostics:
        if d.code.startswith("GRPO-D") and d.code != codes.D_IN_RELEASE:
            kept = deprecation_for_release(d, release)
            if kept is not None:
                adjusted.append(kept)
            continue
        if d.code in IGNORED_WHEN_UNREAD and not stops:
            d = Diagnostic(
                d.code,
                "warning",
                f"{d.message}: TRL {release.release} {how.removeprefix('it ')}",
                d.fields,
                d.line,
                d.column,
                d.hint,
                d.fix,
                d.origin,
                d.alternatives,
            )
        adjusted.append(d)
    return adjusted
