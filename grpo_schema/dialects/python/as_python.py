"""The engine's findings as they apply to GRPOConfig(...) in Python: a key TRL's front end ignores is a TypeError
there, the `trl grpo` script's own keys are no GRPOConfig arguments, and a fix never writes a value known only at run
time."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any

from grpo_schema.dialects.python import codes as pycodes
from grpo_schema.dialects.python.reading import CallReading
from grpo_schema.dialects.python.values import Unknown
from grpo_schema.engine import codes
from grpo_schema.engine.check import CheckResult
from grpo_schema.engine.diagnostics import Diagnostic, Fix

# The classes of a release table whose keys `trl grpo` reads besides GRPOConfig's: not GRPOConfig arguments.
SCRIPT_SOURCES = frozenset(
    {"ModelConfig", "ScriptArguments", "GRPOScriptArguments", "DatasetMixtureConfig", "DatasetConfig"}
)
# A key TRL's front end ignores (a warning for YAML) is a TypeError for GRPOConfig(...).
NOT_AN_ARGUMENT = frozenset({codes.K_UNKNOWN, codes.K_RENAMED, codes.K_REMOVED, codes.K_NOT_IN_RELEASE})
SCRIPT_LEVEL = frozenset({"GRPO-S006"})


def as_python(result: CheckResult, reading: CallReading) -> list[Diagnostic]:
    """The engine's findings as they apply to GRPOConfig(...) in Python."""
    written = set(reading.mapping)
    script = script_only_keys(result.trl_version)
    out = []
    for name in reading.mapping:
        if name in script:
            line, column = reading.positions.keys[(name,)]
            out.append(
                Diagnostic(
                    pycodes.SCRIPT_ONLY,
                    "error",
                    f"{name} is an argument of TRL's `trl grpo` script, "
                    "not of GRPOConfig: GRPOConfig(...) raises TypeError",
                    fields=(name,),
                    line=line,
                    column=column,
                    hint="give it to GRPOTrainer (the model, train_dataset, reward_funcs) or remove it",
                    fix=Fix(unset=(name,), safe=False, title=f"remove {name}"),
                )
            )
    for diag in result.diagnostics:
        if diag.code in SCRIPT_LEVEL or (diag.fields and set(diag.fields) <= script):
            continue  # the model, data and rewards are given to GRPOTrainer, not to GRPOConfig (F007 above)
        name = diag.fields[0] if diag.fields else None
        if diag.code in NOT_AN_ARGUMENT and name in written and diag.severity != "error":
            diag = replace(diag, severity="error", message=_as_type_error(diag.message, result.trl_version))
        elif diag.code == codes.T_MISSING and "parser requires" in diag.message:
            diag = replace(
                diag,
                message=f"GRPOConfig(...) of TRL {result.trl_version} requires {name}: it raises "
                "TypeError (a missing argument) without it",
                hint=f"give {name}=...",
            )
        if diag.line is None:
            diag = replace(diag, line=reading.line, column=reading.column)
        out.append(_static_fix(diag, reading))
    return out


def _static_fix(diag: Diagnostic, reading: CallReading) -> Diagnostic:
    """A fix that would write a value known only at run time (warmup_ratio=args.warmup_ratio moved to
    warmup_steps) as the keyword's rename, which keeps the expression as written; else no fix, the hint stays."""
    fix = diag.fix
    if fix is None or not any(isinstance(v, Unknown) for v in [*fix.set.values(), *_alternative_values(diag)]):
        return diag
    if len(fix.set) == 1 and len(fix.unset) == 1 and not fix.rename:
        (new, value), (old,) = next(iter(fix.set.items())), fix.unset
        if isinstance(value, Unknown) and reading.mapping.get(old) is value:
            return replace(
                diag, fix=Fix(rename={old: new}, safe=False, title=f"rename {old} to {new}"), alternatives=()
            )
    return replace(diag, fix=None, alternatives=())


def _alternative_values(diag: Diagnostic) -> list[Any]:
    return [v for alt in (diag.alternatives or ()) for v in getattr(alt, "set", {}).values()]


def script_level(result: CheckResult) -> list[Diagnostic]:
    """The findings of a `trl grpo` YAML that do not apply to GRPOConfig(...) (the model, data and rewards are
    given to GRPOTrainer), for surfaces that judge a call's YAML (grpo plan)."""
    script = script_only_keys(result.trl_version)
    return [d for d in result.diagnostics if d.code in SCRIPT_LEVEL or (d.fields and set(d.fields) <= script)]


def _as_type_error(message: str, release: str) -> str:
    """The front end's verdict on a key it does not read, as GRPOConfig(...) has it: an unexpected keyword."""
    said = f"GRPOConfig(...) of TRL {release} raises TypeError on it"
    for tail in (
        f"TRL {release} ignores the key, so the setting has no effect",
        "it ignores the key, so the setting has no effect",
    ):
        if tail in message:
            return message.replace(tail, said)
    return f"{message}; {said}"


@lru_cache(maxsize=32)
def script_only_keys(version: str) -> frozenset[str]:
    """Keys the release's `trl grpo` reads that GRPOConfig does not take (ModelConfig, ScriptArguments, ...)."""
    from grpo_schema.engine.keys import is_launch_key
    from grpo_schema.versions import surface

    try:
        table = surface(version)
    except Exception:  # a version the tables cannot judge: the engine already said so
        return frozenset()
    script = {name for name, info in table.fields.items() if getattr(info, "source", None) in SCRIPT_SOURCES}
    from grpo_schema.engine.compiled import compiled

    script |= {name for name in compiled("config").fields if name not in table.fields and is_launch_key(name)}
    return frozenset(script)
