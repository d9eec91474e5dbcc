"""What grpo_runtime does with each field of a config, decided before anything loads.

Every field of TRL 1.16's `trl grpo` surface (and every `accelerate launch` key a config file may carry) has one
entry in `grpo_runtime.support.fields`, in one of four categories:

* honoured: the run does what the field says (the entry says where);
* refused: a value other than the default is refused before anything loads (the entry says why);
* warned: the run goes ahead with a warning saying why the field cannot change it;
* ignored: TRL 1.16 ignores the field in the same setting too (the entry says why), so nothing is said.

An honoured field may still refuse or warn about some of its values (`optim: adamw_8bit`, `report_to: mlflow`);
those limits are part of its entry. `assess` turns the table into coded diagnostics (area U, grpo_schema.engine.codes)
for `grpo train/launch --dry-run`, for `grpo train/launch` themselves (exit 3 on a refusal) and for the service's
launch check. Nothing here imports torch: predicates read only the validated config, the launch keys and which
packages are installed.
"""

from __future__ import annotations

import os
from dataclasses import replace

from grpo_runtime.common import LAUNCH_KEYS, CannotRun, Command, Limit, Setting, Support, field_defaults
from grpo_schema.engine.diagnostics import Diagnostic

# --- the table, and the facts it is checked against ---------------------------------------------------------------


def table() -> dict[str, Support]:
    """Every field (config fields first, then the launch keys) and what the runtime does with it."""
    from grpo_runtime.support.fields import CONFIG_FIELDS, LAUNCH_FIELDS

    return {**CONFIG_FIELDS, **LAUNCH_FIELDS}


def is_set(name: str, setting: Setting) -> bool:
    """The field holds something other than its default (empty containers and None count as unset)."""
    value = setting.get(name)
    if name in LAUNCH_KEYS:
        return name in setting.launch and value is not None
    default = field_defaults("config").get(name)
    empty = (None, [], {}, "")
    return value != default and not (value in empty and default in empty)


def setting_of(result, command: Command = "train") -> Setting:
    running = int(os.environ.get("WORLD_SIZE", "1")) if command == "train" else result.world_size
    return Setting(result.config, dict(result.launch), result.world_size, command, running)


def findings(setting: Setting) -> list[tuple[str, Limit, str]]:
    """(field, limit, message) for every limit that applies, in table order."""
    found = []
    for name, support in table().items():
        if name in LAUNCH_KEYS and not is_set(name, setting):
            continue  # a launch key's limits concern the key as written
        for limit in support.limits:
            applies = limit.when(setting) if limit.when is not None else is_set(name, setting)
            if applies:
                message = limit.message(setting) if callable(limit.message) else limit.message
                found.append((name, limit, message))
    return found


def script_of(result):
    """The one training-script profile (name, validated arguments) the config was checked with, or None."""
    found = list((getattr(result, "profile_args", None) or {}).items())
    return found[0] if found else None


def script_refusals(config, script) -> list[tuple[str, str]]:
    """(field, message) for what a training script's profile asks that this runtime does not run: the arguments of
    a profile other than open-r1's would be silently ignored; open-r1's sandboxed code rewards are not run."""
    if script is None:
        return []
    name, args = script
    if name != "open-r1":
        return [
            (
                "profile",
                f"profile {name!r}: grpo_runtime honours the arguments of the open-r1 profile only; "
                "this script's arguments would be ignored. Run the config with its own script",
            )
        ]
    import grpo_runtime.data.open_r1 as open_r1

    return [("reward_funcs", message) for message in open_r1.refusals(config, args)]


def assess(result, command: Command = "train") -> list[Diagnostic]:
    """Coded diagnostics (area U) for a valid CheckResult: errors for what this runtime refuses (the field table,
    then the training script's arguments), warnings for what cannot change the run. Empty for an invalid config
    (its own diagnostics come first)."""
    if result.config is None or not result.valid:
        return []
    from grpo_schema.engine.check import bounded, path_of
    from grpo_schema.engine.codes import U_FEATURE

    refused_by_script = [
        (name, Limit(None, message, "run the recipe with its own training script", U_FEATURE), message)
        for name, message in script_refusals(result.config, script_of(result))
    ]
    diagnostics = []
    for name, limit, message in findings(setting_of(result, command)) + refused_by_script:
        diag = Diagnostic(
            limit.code, "error" if limit.refuse else "warning", f"{name}: {message}", fields=(name,), hint=limit.hint
        )
        position = result.positions.of(path_of(name))
        if position:
            diag = replace(diag, line=position[0], column=position[1], origin="file")
        diagnostics.append(bounded(diag))
    return diagnostics


def enforce(config, world_size: int = 1, launch: dict | None = None, warn: bool = True, script=None) -> None:
    """For Python callers of `train.main`: raise CannotRun on a refusal, warn for the rest (the CLI has already
    printed both as diagnostics and calls this with warn=False)."""
    import warnings

    running = int(os.environ.get("WORLD_SIZE", "1"))
    setting = Setting(config, dict(launch or {}), max(world_size, running), "train", running)
    problems = findings(setting)
    refusals = [f"{name}: {message}" for name, limit, message in problems if limit.refuse]
    refusals += [f"{name}: {message}" for name, message in script_refusals(config, script)]
    if refusals:
        raise CannotRun("this config uses settings grpo_runtime does not run:\n  - " + "\n  - ".join(refusals))
    if warn:
        for name, _, message in problems:
            warnings.warn(f"{name}: {message}", stacklevel=3)
