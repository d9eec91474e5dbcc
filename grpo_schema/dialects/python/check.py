"""GRPOConfig(...) calls judged by the engine, each on its own, with positions at the keyword arguments.

Each call becomes the mapping the engine judges (grpo_schema.engine.check.check_read): literal values as they are,
values known only at run time as unknown (never a default, never a guess). What differs from a YAML file is said
here and only here: a keyword GRPOConfig does not take raises TypeError (a YAML key TRL ignores is a warning),
the `trl grpo` script's own keys are no GRPOConfig arguments, and Unsloth's config class rewrites the batch.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import Any

from grpo_schema.dialects.python import codes as pycodes
from grpo_schema.dialects.python.as_python import as_python
from grpo_schema.dialects.python.as_python import script_level as script_level  # grpo plan imports it from here
from grpo_schema.dialects.python.calls import ModuleReading, read_module
from grpo_schema.dialects.python.reading import CallReading, read_call
from grpo_schema.dialects.python.release import script_release
from grpo_schema.dialects.python.source import Source, read_source
from grpo_schema.dialects.python.unknowns import (
    judged_with_defaults,
    reader_diagnostics,
    train_batch_alone,
    with_command_line_defaults,
)
from grpo_schema.dialects.python.unsloth import (
    repository_installs_unsloth,
    unsloth_batch,
    unsloth_elsewhere,
    unsloth_era,
    unsloth_other,
)
from grpo_schema.engine.check import BATCH_INPUTS, CheckResult, _finish, check_read, file_options
from grpo_schema.engine.diagnostics import Diagnostic

SUFFIXES = (".py", ".ipynb")
REWARD_SOURCES = ("reward_funcs", "reward_model_name_or_path")


def is_python_path(path: str) -> bool:
    return path.endswith(SUFFIXES)


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
    options.update(script_release(source, module, options, path))
    given = tuple(options.get("profiles") or ())
    named = any(getattr(p, "name", p) == "unsloth" for p in given)  # --profile unsloth: imported elsewhere
    unsloth = bool(module and module.imports_unsloth) or named
    if unsloth and not named:
        from grpo_schema.engine.profiles import get_profile

        options["profiles"] = given + (get_profile("unsloth"),)
    file_diags = comment_problems + _file_diagnostics(source, module)
    readings = [read_call(call, source) for call in (module.calls if module else [])]
    if any(r.unknown for r in readings) and source.tree is not None:
        with_command_line_defaults(readings, source)
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
        results.append(_no_call(path, options, file_diags))
        texts[path] = source.text if not source.notebook else ""
    _place_file_diagnostics(file_diags, results, texts, source, path)
    for result in results:
        _finish(result)
    return PythonCheck(path, source, module, readings, results, texts, unsloth)


def _no_call(path: str, options: dict[str, Any], file_diags: list[Diagnostic]) -> CheckResult:
    """The file's only result when it has no call: an information that there is nothing to judge (unless the file
    could not be read, which its own problem says)."""
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
    result = CheckResult(
        path,
        options.get("world_size") or 1,
        trl_version=options.get("trl_version") or "1.16.0",
        trl_version_source=options.get("trl_version_source") or "default",
    )
    result.diagnostics = diag
    return result


def _place_file_diagnostics(
    file_diags: list[Diagnostic], results: list[CheckResult], texts: dict[str, str], source: Source, path: str
) -> None:
    """Problems of the file as a whole go with its first call (or the file's only result); in a notebook, with
    the result of their cell (one is made for a cell that has no call)."""
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


# --- one call ------------------------------------------------------------------------------------------------------


def _judge(reading: CallReading, shown: str, options: dict[str, Any], unsloth: str | None) -> CheckResult:
    unknown = set(reading.unknown)
    # The model, data and reward functions are GRPOTrainer's arguments: unknown to the call, so the rules that
    # compare with them (reward_weights against the reward functions, ...) are not judged from `trl grpo` defaults.
    unknown |= {k for k in REWARD_SOURCES if k not in reading.mapping}
    if reading.opaque:  # any key may be set in what is not seen: nothing is assumed of the batch
        unknown |= {k for k in BATCH_INPUTS if k not in reading.mapping}
    result = check_read(dict(reading.mapping), shown, reading.positions, unknown=unknown, **options)
    result.diagnostics += train_batch_alone(reading, result, shown, options, unknown)
    _attach_fixes(result, reading, options)
    if unsloth:
        result = unsloth_batch(reading, result, shown, options, unknown, unsloth)
        result.diagnostics += unsloth_other(reading)
    result.diagnostics = as_python(result, reading) + reader_diagnostics(reading, result, unknown)
    result.diagnostics += judged_with_defaults(reading, result, shown, options, unknown, unsloth)
    return result


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
