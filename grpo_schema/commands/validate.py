"""`grpo validate PATH...`: check config files and report every problem at once (interface.md §4)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from grpo_schema.commands.options import (
    EXIT_INVALID,
    EXIT_OK,
    FORMATS,
    PYTHON_SUFFIXES,
    Formatter,
    UsageError,
    add_check_options,
    add_format,
    check_options,
    expand_paths,
    read_config,
    trl_options,
)

NO_CALL = "GRPO-F002"  # grpo_schema.dialects.python.codes.NO_CALL, without importing the reader for YAML files


def add_arguments(validate: argparse.ArgumentParser) -> None:
    validate.add_argument("paths", nargs="*", metavar="PATH", help="files, directories or - for stdin")
    add_format(validate, FORMATS)
    validate.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    validate.add_argument(
        "--fix",
        action="store_true",
        help="apply the safe fixes in place (comments and formatting kept), then report what is left",
    )
    validate.add_argument(
        "--world-sizes",
        metavar="SIZES",
        help="check at each world size (e.g. 1-64, 1,2,4,8) "
        "and show where the config is valid (text or json); exit 1 if any is invalid",
    )
    validate.add_argument(
        "--hardware",
        metavar="SPEC",
        help="also check that the config fits this hardware (e.g. 8xH100-80GB); `grpo plan` shows the memory by part",
    )
    validate.add_argument(
        "--doctor",
        action="store_true",
        help="also check this interpreter's packages against "
        "the file's TRL release and the features it uses (grpo doctor)",
    )
    add_check_options(validate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grpo validate", formatter_class=Formatter)
    add_arguments(parser)
    return parser


def cmd_validate(args: argparse.Namespace, rest: list[str]) -> int:
    from grpo_schema.commands.verl import check_verl, is_verl, options_not_for_verl
    from grpo_schema.engine.diagnostics import has_errors

    given, paths, walked, trl_overrides = _paths_to_check(args, rest)
    options = check_options(args, trl_overrides)
    if args.fix and "-" in paths:
        raise UsageError("--fix edits files in place; it cannot fix stdin")
    results, sources, files = [], {}, []
    for path in paths:
        data = read_config(path)
        shown = "<stdin>" if path == "-" else path
        if path in walked and _is_python(path) and b"GRPOConfig" not in data:
            continue  # a directory's other Python files are none of the check's business
        file_options = {**options, **trl_options(args.trl_version, path)}
        if is_verl(args.dialect, data, path):  # verl's launch scripts and YAML: their own checker
            if options_not_for_verl(args, trl_overrides):
                raise UsageError(f"{shown}: {options_not_for_verl(args, trl_overrides)}")
            sources[shown], result = data.decode("utf-8", "replace"), check_verl(data, shown, args.verl_version)
            results.append(result)
            files.append((shown, data))
            continue
        if _is_python(path):  # GRPOConfig(...) calls in a script or notebook: a result per call
            checked = _check_python(data, shown, file_options, args)
            if (
                path in walked
                and not checked.calls
                and all(d.code == NO_CALL for r in checked.results for d in r.diagnostics)
            ):
                continue  # it names GRPOConfig (an import, HfArgumentParser(GRPOConfig)) but builds none
            results += checked.results
            sources.update(checked.texts)
            continue
        data, result = _check_config_file(path, shown, data, file_options, args)
        sources[shown] = data.decode("utf-8", "replace")
        results.append(result)
        files.append((shown, data))
    if not results:
        raise UsageError(
            f"no config file under {', '.join(given)} (YAML, JSON, or a script or notebook that builds GRPOConfig(...))"
        )
    if args.world_sizes:
        return _world_size_matrix(files, results, options, args)
    _emit(results, sources, args.format)
    return EXIT_INVALID if any(has_errors(r.diagnostics, strict=args.strict) for r in results) else EXIT_OK


def _paths_to_check(args: argparse.Namespace, rest: list[str]) -> tuple[list[str], list[str], set[str], Any]:
    """The paths as given (with TRL-style `--key value` tokens read as overrides), the files to check (directories
    walked), those found by the walk, and the overrides."""
    from grpo_schema.engine.overrides import OverrideError, parse_trl_args

    try:
        config_paths, trl_overrides = parse_trl_args(rest)
    except OverrideError as exc:
        raise UsageError(str(exc)) from None
    given = list(args.paths) + config_paths
    # A directory's scripts and notebooks are judged where they build a GRPOConfig; --world-sizes, --hardware and
    # --fix take YAML configs, so with them the walk stays with YAML and JSON (said on stderr, never silently).
    yaml_only = bool(args.world_sizes or args.hardware or args.fix)
    paths = expand_paths(given, python=not yaml_only and getattr(args, "dialect", None) != "verl")
    if yaml_only:
        _say_python_left_out(given, args)
    walked = set(paths) - set(given)
    if not paths:
        raise UsageError("no config file given (a path, a directory, '-' for stdin, or --config FILE)")
    return given, paths, walked, trl_overrides


def _check_config_file(
    path: str, shown: str, data: bytes, file_options: dict[str, Any], args: argparse.Namespace
) -> tuple[bytes, Any]:
    """A YAML or JSON config checked, with its fit, doctor's findings and the safe fixes where asked for; returns
    the file's bytes (fixed, with --fix) and the result."""
    from grpo_schema.engine.validate import check_text

    result = check_text(data, path=shown, **file_options)  # reads the file's `# grpo:` comment under the flags
    # The fit is checked when asked for (--hardware, or the file's `# grpo: --hardware` comment); a hardware:
    # section alone is what `grpo plan` and the form's memory bar read, as the service and the editor do.
    hardware = args.hardware or _comment_hardware(data)
    if hardware:
        result = _with_fit(data, shown, hardware, file_options, from_flag=bool(args.hardware))
    if args.doctor:  # this interpreter's packages against the release and the features the file uses
        from grpo_schema.commands.doctor import add_doctor

        result = add_doctor(result, shown)
    if args.fix:
        from grpo_schema.commands.autofix import fix_file

        data, result = fix_file(path, data, result, file_options)
    return data, result


def _world_size_matrix(files: list, results: list, options: dict[str, Any], args: argparse.Namespace) -> int:
    from grpo_schema.commands.matrix import emit_matrix

    try:
        return emit_matrix(files, results, options, args.world_sizes, args.format)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _is_python(path: str) -> bool:
    return path.endswith(PYTHON_SUFFIXES)


def _say_python_left_out(given: list[str], args: argparse.Namespace) -> None:
    from pathlib import Path

    from grpo_schema.commands.options import walked_python
    from grpo_schema.engine.words import plural

    flag = "--world-sizes" if args.world_sizes else "--hardware" if args.hardware else "--fix"
    for raw in given:
        root = Path(raw)
        if raw != "-" and root.is_dir():
            left = sum(
                1
                for p in root.rglob("*")
                if p.is_file() and walked_python(p, root) and b"GRPOConfig(" in p.read_bytes()
            )
            if left:
                files = plural(left, "Python script or notebook", "Python scripts or notebooks")
                print(
                    f"grpo validate: note: {raw}: {files} with GRPOConfig(...) not checked: {flag} takes YAML "
                    "configs (`grpo export FILE.py` writes one; `grpo migrate FILE.py --write` fixes keywords)",
                    file=sys.stderr,
                )


def _check_python(data: bytes, shown: str, options: dict, args: argparse.Namespace):
    """The calls of a Python file judged (grpo_schema.dialects.python); --fix rewrites keywords in place."""
    if args.world_sizes or args.hardware:
        raise UsageError(
            f"{shown}: --world-sizes and --hardware take a YAML config; `grpo export {shown}` writes "
            "one from its GRPOConfig(...) call"
        )
    if args.fix:
        raise UsageError(
            f"{shown}: --fix edits YAML configs; `grpo migrate {shown} --write` rewrites the keywords "
            "of a Python file in place, and the language server offers each fix at its keyword"
        )
    from grpo_schema.dialects.python import check_python

    checked = check_python(data, shown, **options)
    if args.doctor:
        from grpo_schema.commands.doctor import add_doctor

        checked.results = [add_doctor(result, shown) for result in checked.results]
    return checked


def _comment_hardware(data: bytes) -> str | None:
    """The hardware a `# grpo: --hardware SPEC` comment names (the comment reader loads only for a comment)."""
    if b"grpo:" not in data:
        return None
    from grpo_schema.engine.infile import read_file_settings

    return read_file_settings(data).hardware


def _with_fit(data: bytes, path: str, hardware: str | None, options: dict, from_flag: bool = True):
    """The check at the world size the hardware implies, with the fit's diagnostics added (one engine: plan_fit).
    `hardware` is --hardware's, else the `# grpo: --hardware SPEC` comment's (a bad one there is GRPO-Y015)."""
    from grpo_schema.commands.plan import check_for_hardware
    from grpo_schema.commands.plan_render import memory_lines
    from grpo_schema.engine.hardware.accelerators import HardwareError, parse_hardware
    from grpo_schema.engine.placing import finish

    comment_problem = None
    if hardware:
        try:
            parse_hardware(hardware)
        except HardwareError as exc:
            if from_flag:
                raise UsageError(f"--hardware: {exc}") from None
            comment_problem = _comment_problem(data, f"`# grpo:` comment: --hardware {hardware!r}: {exc}")
            hardware = None
    result, report = check_for_hardware(data, path, hardware, **options)
    if comment_problem is not None:
        result.diagnostics = [comment_problem] + result.diagnostics
    result.diagnostics = result.diagnostics + report.diagnostics
    result.memory_lines = memory_lines(report)
    return finish(result)


def _comment_problem(data: bytes, message: str):
    from grpo_schema.engine import codes
    from grpo_schema.engine.diagnostics import Diagnostic
    from grpo_schema.engine.infile import OPTIONS_HELP, read_file_settings

    line = read_file_settings(data).hardware_line
    return Diagnostic(codes.Y_COMMENT, "warning", message, line=line, column=1 if line else None, hint=OPTIONS_HELP)


def _emit(results: list, sources: dict[str, str], fmt: str) -> None:
    if fmt == "json":
        from grpo_schema.render.machine import render_json

        sys.stdout.write(render_json(results))
    elif fmt == "github":
        from grpo_schema.render.machine import render_github

        sys.stdout.write(render_github(results))
    elif fmt == "sarif":
        from grpo_schema.render.sarif import render_sarif

        sys.stdout.write(render_sarif(results))
    else:
        from grpo_schema.render.text import render

        sys.stdout.write(render(results, sources, sys.stdout))
