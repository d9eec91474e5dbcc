"""GRPOConfig(...) calls judged by the engine, each on its own, with positions at the keyword arguments.

Each call becomes the mapping the engine judges (grpo_schema.engine.check.check_read): literal values as they are,
values known only at run time as unknown (never a default, never a guess). What differs from a YAML file is said
here and only here: a keyword GRPOConfig does not take raises TypeError (a YAML key TRL ignores is a warning),
the `trl grpo` script's own keys are no GRPOConfig arguments, and Unsloth's config class rewrites the batch.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from grpo_schema.dialects.python import codes as pycodes
from grpo_schema.dialects.python.calls import ConfigCall, ModuleReading, read_module
from grpo_schema.dialects.python.source import Source, install_pins, read_source, unsloth_release_pin
from grpo_schema.dialects.python.unsloth import (
    repository_installs_unsloth,
    unsloth_batch,
    unsloth_elsewhere,
    unsloth_era,
    unsloth_other,
)
from grpo_schema.dialects.python.values import Unknown
from grpo_schema.engine import codes
from grpo_schema.engine.check import BATCH_INPUTS, CheckResult, _finish, check_read, file_options
from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.loader import Positions

SUFFIXES = (".py", ".ipynb")
# The classes of a release table whose keys `trl grpo` reads besides GRPOConfig's: not GRPOConfig arguments.
SCRIPT_SOURCES = frozenset(
    {"ModelConfig", "ScriptArguments", "GRPOScriptArguments", "DatasetMixtureConfig", "DatasetConfig"}
)
# A key TRL's front end ignores (a warning for YAML) is a TypeError for GRPOConfig(...).
NOT_AN_ARGUMENT = frozenset({codes.K_UNKNOWN, codes.K_RENAMED, codes.K_REMOVED, codes.K_NOT_IN_RELEASE})
SCRIPT_LEVEL = frozenset({"GRPO-S006"})
REWARD_SOURCES = ("reward_funcs", "reward_model_name_or_path")
# The evaluation side of the batch rules: unknown there, the training batch is still judged on its own.
EVAL_SIDE = frozenset({"per_device_eval_batch_size", "eval_strategy", "do_eval", "eval_steps", "eval_on_start"})
MAX_LISTED = 8


def is_python_path(path: str) -> bool:
    return path.endswith(SUFFIXES)


@dataclass
class CallReading:
    """One call as the engine sees it: the mapping, where each key is, what is unknown."""

    call: ConfigCall
    cell: int | None
    mapping: dict[str, Any] = field(default_factory=dict)
    positions: Positions = field(default_factory=Positions)
    unknown: dict[str, Unknown] = field(default_factory=dict)
    spans: dict[str, tuple[int, int, int, int] | None] = field(
        default_factory=dict
    )  # value spans, as lines of the file
    key_spans: dict[str, tuple[int, int, int, int] | None] = field(default_factory=dict)
    # name -> (option, default) for an unknown read from the script's own argparse parser (`--lr`, 5e-06)
    defaults: dict[str, tuple[str, Any]] = field(default_factory=dict)
    line: int = 0  # of the call, in its cell for a notebook
    column: int = 0
    opaque: bool = False


@dataclass
class PythonCheck:
    """Every call of a file judged: one CheckResult a call, and the text each result's lines count in."""

    path: str
    source: Source
    module: ModuleReading | None
    calls: list[CallReading]
    results: list[CheckResult]
    texts: dict[str, str]  # result path -> the text its lines number (the file, or a notebook's cell)
    unsloth: bool = False


def check_python(data: bytes | str, path: str = "<python>", **options: Any) -> PythonCheck:
    if ("GRPOConfig" not in data) if isinstance(data, str) else (b"GRPOConfig" not in data):
        data = ""  # no call can be there: not even parsed (a pre-commit hook sees every Python file of a repository)
    source = read_source(data, path)
    module = read_module(source.tree) if source.tree is not None else None
    options, comment_problems = file_options(source.raw, options)
    options.update(_release(source, module, options, path))
    given = tuple(options.get("profiles") or ())
    named = any(getattr(p, "name", p) == "unsloth" for p in given)  # --profile unsloth: imported elsewhere
    unsloth = bool(module and module.imports_unsloth) or named
    if unsloth and not named:
        from grpo_schema.engine.profiles import get_profile

        options["profiles"] = given + (get_profile("unsloth"),)
    file_diags = comment_problems + _file_diagnostics(source, module)
    readings = [_reading(call, source) for call in (module.calls if module else [])]
    if any(r.unknown for r in readings) and source.tree is not None:
        _with_command_line_defaults(readings, source)
    results, texts = [], {}
    era = unsloth_era(source, options.get("trl_version")) if unsloth else None
    elsewhere = not unsloth and readings and repository_installs_unsloth(path)
    for reading in readings:
        shown = _shown(path, reading.cell)
        result = _judge(reading, shown, options, era)
        if elsewhere:
            result.diagnostics += unsloth_elsewhere(result)
        results.append(result)
        texts[shown] = source.cells.get(reading.cell, "") if reading.cell is not None else source.text
    if not results:
        diag = (
            []
            if any(d.code == pycodes.UNREADABLE for d in file_diags)
            else [
                Diagnostic(
                    pycodes.NO_CALL,
                    "info",
                    "no GRPOConfig(...) call in this file",
                    line=1,
                    column=1,
                    hint="nothing to judge; a config read with HfArgumentParser(GRPOConfig) is checked from "
                    "the YAML or JSON file it reads",
                )
            ]
        )
        results.append(
            CheckResult(
                path,
                options.get("world_size") or 1,
                trl_version=options.get("trl_version") or "1.16.0",
                trl_version_source=options.get("trl_version_source") or "default",
            )
        )
        results[0].diagnostics = diag
        texts[path] = source.text if not source.notebook else ""
    # Problems of the file as a whole go with its first call (or the file's only result); in a notebook, with
    # the result of their cell (one is made for a cell that has no call).
    for diag in file_diags:
        cell, line = source.place(diag.line) if source.notebook and source.lines else (None, diag.line)
        target = results[0] if cell is None else next((r for r in results if r.path == _shown(path, cell)), None)
        if target is None:
            target = CheckResult(
                _shown(path, cell),
                results[0].world_size,
                trl_version=results[0].trl_version,
                trl_version_source=results[0].trl_version_source,
            )
            results.append(target)
            texts[target.path] = source.cells.get(cell, "")
        target.diagnostics = [replace(diag, line=line)] + target.diagnostics
    for result in results:
        _finish(result)
    return PythonCheck(path, source, module, readings, results, texts, unsloth)


def _shown(path: str, cell: int | None) -> str:
    return path if cell is None else f"{path}[cell {cell}]"


# --- the file ------------------------------------------------------------------------------------------------------


def _file_diagnostics(source: Source, module: ModuleReading | None) -> list[Diagnostic]:
    out = [
        Diagnostic(
            pycodes.NEWER_SYNTAX,
            "warning",
            f"{p.message}: this line is left out (Python "
            f"{sys.version_info[0]}.{sys.version_info[1]}'s parser; Python 3.12 allows such f-strings), "
            "the rest of the file is read",
            line=p.line,
            column=p.column,
            hint="run grpo-config on Python 3.12 or later to have this line read too",
        )
        if p.newer
        else Diagnostic(pycodes.UNREADABLE, "error", p.message, line=p.line, column=p.column, hint=p.hint)
        for p in source.problems
    ]
    if module is None:
        return out
    for sub in module.subclasses:
        out.append(
            Diagnostic(
                pycodes.SUBCLASS,
                "warning",
                f"class {sub.name} derives from GRPOConfig: its own "
                "fields, defaults and __post_init__ are code, so its calls are not judged statically",
                line=sub.line,
                column=sub.column,
                hint="check the values with GRPOConfig itself, or export them to YAML",
            )
        )
    for call in module.subclass_calls:
        out.append(
            Diagnostic(
                pycodes.NOT_STATIC,
                "info",
                f"{call.callee}(...): unknown: cannot judge statically (a GRPOConfig subclass defined in this file)",
                line=call.line,
                column=call.column,
            )
        )
    return out


def _release(source: Source, module: ModuleReading | None, options: dict[str, Any], path: str) -> dict[str, str]:
    """The release to judge by: a flag or `# grpo:` comment, else a pin of the repository (a lock file's release
    first), else the file's own install line (`!pip install trl==0.22.2`, a PEP 723 header), else Unsloth's trl
    range when the file imports unsloth, else the installed trl, else 1.16. A script or notebook runs where its
    repository or its install line puts trl (a Colab, a cluster), seldom in the environment that checks it: those
    come before the installed trl."""
    given, given_source = options.get("trl_version"), options.get("trl_version_source")
    if given is None:
        from grpo_schema.engine.infile import judged_release

        found = judged_release(None, None, None, None if path.startswith("<") else path)
        given, given_source = found["trl_version"], found["trl_version_source"]
    if given_source in ("flag", "context", "form", "comment", "requirements"):
        return {"trl_version": given, "trl_version_source": given_source}
    if given_source == "installed" and _on_disk(path):
        from grpo_schema.versions.detect import pinned_version

        pinned = pinned_version(path)
        if pinned is not None:
            return {"trl_version": pinned[0], "trl_version_source": "requirements"}
    from grpo_schema.versions.detect import resolve_specifier

    for pin in install_pins(source.raw):
        version = resolve_specifier(pin.spec)
        if version is not None:
            return {"trl_version": version, "trl_version_source": f"the file's install line: trl{pin.spec}"}
    if module is not None and module.imports_unsloth:
        from grpo_schema.engine.profiles.unsloth import TRL_RANGE, trl_range_of

        dated = unsloth_release_pin(source.raw)
        spec = trl_range_of(*dated) if dated else TRL_RANGE
        version = resolve_specifier(spec) if spec else None
        if version is not None and given_source in ("default", "installed", None):
            what = f"unsloth=={dated[0]}.{dated[1]}" if dated else "unsloth"
            return {"trl_version": version, "trl_version_source": f"the trl range {what} requires: trl{spec}"}
    return {"trl_version": given, "trl_version_source": given_source or "default"}


def _on_disk(path: str) -> bool:
    from pathlib import Path

    try:
        return not path.startswith("<") and Path(path).is_file()
    except (OSError, ValueError):
        return False


# --- one call ------------------------------------------------------------------------------------------------------


def _characters(source: Source, line: int, column: int) -> int:
    """ast's 1-based column (counted in UTF-8 bytes) as a 1-based column in characters, what editors count."""
    lines = source.text.split("\n")
    if not 1 <= line <= len(lines) or lines[line - 1].isascii():
        return column
    return len(lines[line - 1].encode("utf-8")[: column - 1].decode("utf-8", "ignore")) + 1


def _in_characters(call: ConfigCall, source: Source) -> None:
    call.column = _characters(source, call.line, call.column)
    for item in [*call.keywords, *call.opaque]:
        item.column = _characters(source, item.line, item.column)  # the same objects as in duplicates


def _reading(call: ConfigCall, source: Source) -> CallReading:
    _in_characters(call, source)
    cell, line = source.place(call.line)
    reading = CallReading(call, cell, line=line or call.line, column=call.column)
    for kw in call.keywords:
        reading.mapping[kw.name] = kw.value
        if isinstance(kw.value, Unknown):
            reading.unknown[kw.name] = kw.value
        reading.positions.keys[(kw.name,)] = (source.place(kw.line)[1] or kw.line, kw.column)
        reading.spans[kw.name] = kw.span
        reading.key_spans[kw.name] = kw.key_span
    reading.opaque = bool(call.opaque)
    return reading


def _judge(reading: CallReading, shown: str, options: dict[str, Any], unsloth: str | None) -> CheckResult:
    unknown = set(reading.unknown)
    # The model, data and reward functions are GRPOTrainer's arguments: unknown to the call, so the rules that
    # compare with them (reward_weights against the reward functions, ...) are not judged from `trl grpo` defaults.
    unknown |= {k for k in REWARD_SOURCES if k not in reading.mapping}
    if reading.opaque:  # any key may be set in what is not seen: nothing is assumed of the batch
        unknown |= {k for k in BATCH_INPUTS if k not in reading.mapping}
    result = check_read(dict(reading.mapping), shown, reading.positions, unknown=unknown, **options)
    result.diagnostics += _train_batch_alone(reading, result, shown, options, unknown)
    _attach_fixes(result, reading, options)
    if unsloth:
        result = unsloth_batch(reading, result, shown, options, unknown, unsloth)
        result.diagnostics += unsloth_other(reading)
    result.diagnostics = _as_python(result, reading) + _reader_diagnostics(reading, result, unknown)
    result.diagnostics += _judged_with_defaults(reading, result, shown, options, unknown, unsloth)
    return result


def _with_command_line_defaults(readings: list[CallReading], source: Source) -> None:
    from grpo_schema.dialects.python.cli_defaults import command_line_defaults, default_for

    defaults = command_line_defaults(source.tree)  # type: ignore[arg-type]
    if not defaults:
        return
    for reading in readings:
        for name, value in reading.unknown.items():
            found = default_for(value, defaults)
            if found is not None:
                reading.defaults[name] = found


def _judged_with_defaults(
    reading: CallReading,
    result: CheckResult,
    shown: str,
    options: dict[str, Any],
    unknown: set[str],
    unsloth: str | None,
) -> list[Diagnostic]:
    """GRPO-F011: the call judged with the script's own command-line defaults for the unknowns that have one. An
    information: the run may pass other values, so the verdict stays the one above."""
    if not reading.defaults or reading.opaque:
        return []
    still = sorted(set(reading.unknown) - set(reading.defaults))
    mapping = dict(reading.mapping, **{name: default for name, (_, default) in reading.defaults.items()})
    known = unknown - set(reading.defaults)
    hypothetical = check_read(mapping, shown, reading.positions, unknown=known, **options)
    if unsloth:  # judged as Unsloth runs it, as the call itself is
        assumed = replace(reading, mapping=mapping, unknown={})
        hypothetical = unsloth_batch(assumed, hypothetical, shown, options, known, unsloth)
    said = {(d.code, d.message) for d in result.diagnostics}
    new = [d for d in _as_python(hypothetical, reading) if d.severity == "error" and (d.code, d.message) not in said]
    given = ", ".join(f"{name}={default!r}" for name, (_, default) in reading.defaults.items())
    verdict = (
        f"{new[0].code} {new[0].message}" + (f" (and {len(new) - 1} more)" if len(new) > 1 else "")
        if new
        else f"valid at world size {hypothetical.world_size}"
    )
    if still:
        verdict += f" ({_listed(still)} still unknown)"
    return [
        Diagnostic(
            pycodes.WITH_DEFAULTS,
            "info",
            f"with the command line's defaults ({given}): {verdict}",
            fields=tuple(reading.defaults),
            line=reading.line,
            column=reading.column,
            hint="the run may pass other values: check the command that launches it"
            if not new
            else "change the parser's default, or pass a value that fixes it at launch",
        )
    ]


def _train_batch_alone(
    reading: CallReading, result: CheckResult, shown: str, options: dict[str, Any], unknown: set[str]
) -> list[Diagnostic]:
    """The training batch's findings where only the evaluation side is unknown (per_device_eval_batch_size=
    args.eval_batch_size): the batch rules read both sides, so the unknown would leave a training batch that no
    eval batch can mend unjudged. Judged with evaluation off, only the findings about the training batch kept."""
    eval_unknown = unknown & EVAL_SIDE
    if not eval_unknown or unknown & BATCH_INPUTS or result.config is None:
        return []
    mapping = {k: v for k, v in reading.mapping.items() if k not in EVAL_SIDE}
    alone = check_read(
        dict(mapping, eval_strategy="no"), shown, reading.positions, unknown=unknown - EVAL_SIDE, **options
    )
    said = {(d.code, d.message) for d in result.diagnostics}
    return [
        d
        for d in alone.diagnostics
        if d.code.startswith("GRPO-B") and not set(d.fields) & EVAL_SIDE and (d.code, d.message) not in said
    ]


def _attach_fixes(result: CheckResult, reading: CallReading, options: dict[str, Any]) -> None:
    """The smallest edits of a broken batch, as `grpo validate` gives a YAML file (grpo_schema.engine.fixes),
    searched over the values the call sets (what is unknown is no candidate's business)."""
    from grpo_schema.engine.validate import BATCH_FIX_CODES

    if result.config is None or not any(d.code in BATCH_FIX_CODES for d in result.diagnostics):
        return
    from grpo_schema.engine.check import resolve_profiles
    from grpo_schema.engine.fixes import attach_batch_fixes

    raw = result.raw
    result.raw = {k: v for k, v in raw.items() if k not in reading.unknown}
    try:
        attach_batch_fixes(result, resolve_profiles(options.get("profiles", ())), tuple(options.get("allow_env", ())))
    finally:
        result.raw = raw


def _as_python(result: CheckResult, reading: CallReading) -> list[Diagnostic]:
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


def _reader_diagnostics(reading: CallReading, result: CheckResult, unknown: set[str]) -> list[Diagnostic]:
    out = []
    skipped = _skipped_rules(unknown, result)
    for name, value in reading.unknown.items():
        line, column = reading.positions.keys[(name,)]
        not_judged = skipped.get(name, [])
        tail = f"; not judged: {_listed(not_judged)}" if not_judged else ""
        if name in reading.defaults:
            option, default = reading.defaults[name]
            tail = f"; the script's parser gives {default!r} when {option} is not passed" + tail
        out.append(
            Diagnostic(
                pycodes.NOT_STATIC,
                "info",
                f"{name} = {value.source}: unknown: cannot judge statically ({value.why}){tail}",
                fields=(name,),
                line=line,
                column=column,
                hint="write it as a literal or a module constant to have it checked",
            )
        )
    call = reading.call
    for part in call.opaque:
        batch = sorted(k for k in BATCH_INPUTS if k not in reading.mapping)
        out.append(
            Diagnostic(
                pycodes.OPAQUE,
                "warning",
                f"{part.source}: unknown: cannot judge statically "
                f"({part.reason}); any GRPOConfig argument may be set there, so the batch "
                f"({', '.join(batch)}) is not judged",
                line=_line(reading, part.line),
                column=part.column,
                hint="write the keyword arguments in the call, or check the file the values come from",
            )
        )
    for dup in call.duplicates:
        out.append(
            Diagnostic(
                pycodes.DUPLICATE,
                "error",
                f"{dup.name} is given twice (the second from "
                f"{dup.via or 'a keyword'}): GRPOConfig(...) raises TypeError",
                fields=(dup.name,),
                line=_line(reading, dup.line),
                column=dup.column,
                hint=f"give {dup.name} once",
            )
        )
    return out


def _line(reading: CallReading, module_line: int) -> int:
    """A module line in the numbering of the call's result (its cell's, for a notebook)."""
    return reading.line + (module_line - reading.call.line)


def _skipped_rules(unknown: set[str], result: CheckResult) -> dict[str, list[str]]:
    from grpo_schema.engine.rules import load_rules

    out: dict[str, list[str]] = {}
    for rule in load_rules():
        for name in unknown:
            if name in rule.reads or (rule.needs_plan and name in BATCH_INPUTS and result.plan is None):
                out.setdefault(name, [])
                if rule.code not in out[name]:
                    out[name].append(rule.code)
    return out


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:MAX_LISTED])
    return shown + (f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")
