"""The `grpo` command line (interface.md §4).

Schema commands (validate, codes, schema, explain, migrate) run on the slim install; `serve`, `train`, `launch`,
`demo` and `lsp` import the service or the runtime only when called, with an install hint when the extra is missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


class UsageError(Exception):
    pass


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, sized from os.get_terminal_size: argparse creates one per add_argument, and its own
    default width comes from shutil, whose import (with bz2 and lzma) cost `grpo validate` more than the check."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, width if width is not None else _width() - 2)


def _width() -> int:
    import os

    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def _world_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"world size must be a whole number, got {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"world size must be at least 1, got {value}")
    from grpo_schema.engine.coerce import INT64_MAX

    if value > INT64_MAX:  # the plan's arithmetic overflows a float past that
        raise argparse.ArgumentTypeError(f"world size must be at most {INT64_MAX}, got {text!r}")
    return value


def _add_check_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--world-size", type=_world_size, default=None,
                        help="number of training processes over all machines (default: num_processes from the "
                             "file, else 1); never probed from this machine")
    parser.add_argument("--profile", action="append", default=[], metavar="NAME",
                        help="accept a downstream project's script keys and reward names (e.g. open-r1); "
                             "repeatable; 'module:ATTR' imports a Profile")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                        help="override a key (VALUE is read as YAML); TRL's own --key value form works too")
    parser.add_argument("--allow-env", action="append", default=[], metavar="NAME",
                        help="allow an env: variable that is refused by default (LD_PRELOAD, *_TOKEN, ...)")
    _add_trl_version(parser)


def _add_trl_version(parser: argparse.ArgumentParser) -> None:
    from grpo_schema.commands.trl_release import add_trl_version

    add_trl_version(parser)


def trl_options(flag: str | None, path: str | None) -> dict:
    """trl_version and where it came from for a config at `path` (grpo_schema.commands.trl_release), or a
    UsageError naming the supported range."""
    from grpo_schema.commands.trl_release import judged_release

    try:
        return judged_release(flag, path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _expand(paths: Sequence[str]) -> list[str]:
    out: list[str] = []
    for raw in paths:
        path = Path(raw)
        if raw == "-":
            out.append(raw)
        elif path.is_dir():
            found = sorted(str(p) for p in path.rglob("*") if p.suffix in CONFIG_SUFFIXES and p.is_file())
            out.extend(found)
        elif path.is_file():
            out.append(raw)
        else:
            raise UsageError(f"cannot read {raw}: no such file or directory")
    return out


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}")


def _check_options(args: argparse.Namespace, extra_overrides: list) -> dict:
    from grpo_schema.engine.check import Override

    try:
        overrides = [Override.parse(text) for text in args.overrides] + extra_overrides
    except ValueError as exc:
        raise UsageError(f"--set: {exc}")
    return {"world_size": args.world_size, "profiles": _profiles(args.profile), "overrides": overrides,
            "allow_env": args.allow_env}


def _profiles(names: list[str]) -> tuple:
    from grpo_schema.engine.check import resolve_profiles
    from grpo_schema.engine.profiles import known_profiles

    try:
        return resolve_profiles(names, allow_import=True)
    except (KeyError, ImportError, AttributeError) as exc:
        known = ", ".join(sorted(known_profiles()))
        raise UsageError(f"unknown profile {exc}; known profiles: {known} (or 'module:ATTR')")


def cmd_validate(args: argparse.Namespace, rest: list[str]) -> int:
    from grpo_schema.engine.validate import check_text
    from grpo_schema.engine.diagnostics import has_errors
    from grpo_schema.engine.overrides import OverrideError, parse_trl_args

    try:
        config_paths, trl_overrides = parse_trl_args(rest)
    except OverrideError as exc:
        raise UsageError(str(exc))
    paths = _expand(list(args.paths) + config_paths)
    if not paths:
        raise UsageError("no config file given (a path, a directory, '-' for stdin, or --config FILE)")
    options = _check_options(args, trl_overrides)
    if args.fix and "-" in paths:
        raise UsageError("--fix edits files in place; it cannot fix stdin")
    results, sources, files = [], {}, []
    for path in paths:
        data = _read(path)
        shown = "<stdin>" if path == "-" else path
        file_options = {**options, **trl_options(args.trl_version, path)}
        if _is_python(path):  # GRPOConfig(...) calls in a script or notebook: a result per call
            checked = _check_python(data, shown, file_options, args)
            results += checked.results
            sources.update(checked.texts)
            continue
        result = check_text(data, path=shown, **file_options)  # reads the file's `# grpo:` comment under the flags
        # The fit is checked when asked for (--hardware, or the file's `# grpo: --hardware` comment); a hardware:
        # section alone is what `grpo plan` and the form's memory bar read, as the service and the editor do.
        hardware = args.hardware or _comment_hardware(data)
        if hardware:
            result = _with_fit(data, shown, hardware, file_options, from_flag=bool(args.hardware))
        if args.doctor:  # this interpreter's packages against the release and the features the file uses
            import importlib  # by name, as the other commands are: commands.doctor imports this module

            add_doctor = importlib.import_module("grpo_schema.commands.doctor").add_doctor

            result = add_doctor(result, shown)
        if args.fix:
            from grpo_schema.commands.autofix import fix_file

            data, result = fix_file(path, data, result, file_options)
        sources[shown] = data.decode("utf-8", "replace")
        results.append(result)
        files.append((shown, data))
    if args.world_sizes:
        from grpo_schema.commands.matrix import emit_matrix

        try:
            return emit_matrix(files, results, options, args.world_sizes, args.format)
        except ValueError as exc:
            raise UsageError(str(exc))
    _emit(results, sources, args.format)
    return EXIT_INVALID if any(has_errors(r.diagnostics, strict=args.strict) for r in results) else EXIT_OK


def _is_python(path: str) -> bool:
    return path.endswith((".py", ".ipynb"))


def _check_python(data: bytes, shown: str, options: dict, args: argparse.Namespace):
    """The calls of a Python file judged (grpo_schema.dialects.python); --fix rewrites keywords in place."""
    if args.world_sizes or args.hardware:
        raise UsageError(f"{shown}: --world-sizes and --hardware take a YAML config; `grpo export {shown}` writes "
                         "one from its GRPOConfig(...) call")
    if args.fix:
        raise UsageError(f"{shown}: --fix edits YAML configs; `grpo migrate {shown} --write` rewrites the keywords "
                         "of a Python file in place, and the language server offers each fix at its keyword")
    from grpo_schema.dialects.python import check_python

    checked = check_python(data, shown, **options)
    if args.doctor:
        import importlib

        add_doctor = importlib.import_module("grpo_schema.commands.doctor").add_doctor
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
    from grpo_schema.engine.check import _finish
    from grpo_schema.engine.hardware.accelerators import HardwareError, parse_hardware
    from grpo_schema.commands.plan import check_for_hardware

    comment_problem = None
    if hardware:
        try:
            parse_hardware(hardware)
        except HardwareError as exc:
            if from_flag:
                raise UsageError(f"--hardware: {exc}")
            comment_problem = _comment_problem(data, f"`# grpo:` comment: --hardware {hardware!r}: {exc}")
            hardware = None
    result, report = check_for_hardware(data, path, hardware, **options)
    if comment_problem is not None:
        result.diagnostics = [comment_problem] + result.diagnostics
    result.diagnostics = result.diagnostics + report.diagnostics
    from grpo_schema.commands.plan import memory_lines

    result.memory_lines = memory_lines(report)
    return _finish(result)


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


def cmd_codes(args: argparse.Namespace, rest: list[str]) -> int:
    from grpo_schema.engine.codes import CODES
    from grpo_schema.engine.rules import describe_code, load_rules

    load_rules()
    import grpo_schema.engine.env  # noqa: F401  (declares the E codes)
    import grpo_schema.engine.hardware.fit  # noqa: F401  (declares the H codes)
    import grpo_schema.engine.policy  # noqa: F401  (declares the service policy's codes)
    import grpo_schema.engine.profiles.open_r1  # noqa: F401  (declares the profile's codes)
    import grpo_schema.health.rundir  # noqa: F401  (declares the run-health codes)
    import grpo_schema.dialects.python.codes  # noqa: F401  (declares the codes of Python files)

    if args.code:
        code = args.code.upper() if args.code.upper().startswith("GRPO-") else "GRPO-" + args.code.upper()
        if code not in CODES:
            raise UsageError(f"unknown code {args.code}; `grpo codes` lists them all")
        print(describe_code(code))
        return EXIT_OK
    for code in sorted(CODES):
        info = CODES[code]
        print(f"{code}  {info.severity:<7}  {info.title}")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace, rest: list[str]) -> int:
    from grpo_schema.commands.export import schema_text, write_schemas

    if args.write:  # every variant and the catalog, the local copy that modelines point at
        base = args.base_url if args.base_url is None or args.base_url.endswith("/") else args.base_url + "/"
        for path in write_schemas(Path(args.write), base or ""):
            print(f"wrote {path}")
        return EXIT_OK

    if args.trl_version is not None:
        trl_options(args.trl_version, None)  # a release the tables cannot judge: usage error
        from grpo_schema.commands.export import release_schema_text

        text = release_schema_text(args.trl_version)
        from grpo_schema.commands.export import modeline, release_schema_name

        print(f"grpo schema: configs for TRL {args.trl_version} name it in their modeline (relative to a copy of "
              f"schemas/): {modeline(release_schema_name(args.trl_version))}", file=sys.stderr)
    else:
        text = schema_text(draft=args.draft, profiles=_profiles(args.profile), lenient=args.lenient)
    if args.check:  # for pre-commit: is the schema written at --output up to date?
        if not args.output:
            raise UsageError("--check needs --output PATH (the schema file to compare)")
        current = Path(args.output).read_text(encoding="utf-8") if Path(args.output).is_file() else None
        if current != text:
            print(f"{args.output} is stale; regenerate it with the same command without --check", file=sys.stderr)
            return EXIT_INVALID
        return EXIT_OK
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _lazy(module: str, function: str, extra: str) -> Callable[[argparse.Namespace, list[str]], int]:
    def run(args: argparse.Namespace, rest: list[str]) -> int:
        import importlib

        try:
            target = getattr(importlib.import_module(module), function)
        except ImportError as exc:
            if not extra:  # part of the base install: a real bug, not a missing extra
                raise
            raise UsageError(f"this command needs the {extra} extra: pip install 'grpo-config[{extra}]' ({exc})")
        return int(target(list(args.argv) + rest) or 0)

    return run


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (only="validate") the validate command alone: `grpo validate` is the command users
    run most, and building every subcommand's options was a tenth of its start-up."""
    parser = argparse.ArgumentParser(prog="grpo", description="Validate, explain and run GRPO configs for TRL 1.16.",
                                     formatter_class=_Formatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = sub.add_parser("validate", help="check config files and report every problem at once",
                              formatter_class=_Formatter)
    validate.add_argument("paths", nargs="*", metavar="PATH", help="files, directories or - for stdin")
    validate.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text")
    validate.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    validate.add_argument("--fix", action="store_true", help="apply the safe fixes in place (comments and "
                          "formatting kept), then report what is left")
    validate.add_argument("--world-sizes", metavar="SIZES", help="check at each world size (e.g. 1-64, 1,2,4,8) "
                          "and show where the config is valid (text or json); exit 1 if any is invalid")
    validate.add_argument("--hardware", metavar="SPEC", help="also check that the config fits this hardware "
                          "(e.g. 8xH100-80GB); `grpo plan` shows the memory by part")
    validate.add_argument("--doctor", action="store_true", help="also check this interpreter's packages against "
                          "the file's TRL release and the features it uses (grpo doctor)")
    _add_check_options(validate)
    validate.set_defaults(run=cmd_validate)
    if only == "validate":
        return parser

    codes = sub.add_parser("codes", help="list the diagnostic codes, or explain one", formatter_class=_Formatter)
    codes.add_argument("code", nargs="?")
    codes.set_defaults(run=cmd_codes)

    schema = sub.add_parser("schema", help="print the JSON Schema of the config", formatter_class=_Formatter)
    schema.add_argument("--output", "-o", metavar="PATH")
    schema.add_argument("--draft", choices=("2020-12", "07"), default="2020-12")
    schema.add_argument("--profile", action="append", default=[], metavar="NAME",
                        help="also accept and type a downstream project's script keys (e.g. open-r1)")
    schema.add_argument("--lenient", action="store_true",
                        help="accept unknown keys (the SchemaStore variant); the default refuses them")
    schema.add_argument("--check", action="store_true", help="exit 1 if --output PATH is not up to date")
    _add_trl_version(schema)
    schema.add_argument("--write", metavar="DIR",
                        help="write every schema variant and a SchemaStore catalog into DIR (configs there whose "
                             "modeline names grpo-config.schema.json then get completion offline)")
    schema.add_argument("--base-url", metavar="URL",
                        help="with --write: the public folder the files will be served from, for the catalog")
    schema.set_defaults(run=cmd_schema)

    for name, module, function, extra, text in (
        ("serve", "grpo_web.serve", "serve_command", "web", "start the validation service and web form"),
        ("train", "grpo_runtime.launch.cli", "train_command", "runtime", "train on this machine, one process"),
        ("launch", "grpo_runtime.launch.cli", "launch_command", "runtime", "train with accelerate launch"),
        ("demo", "grpo_runtime.launch.cli", "demo_command", "runtime", "write a tiny offline demo run"),
        ("smoke", "grpo_runtime.smoke.command", "smoke_command", "runtime", "run the first optimizer steps on this "
         "CPU, with a checkpoint resumed: does the config get past them"),
        ("slurm", "grpo_runtime.clusters.slurm.cli", "slurm_command", "",
         "status, logs, cancel and resume of jobs from `grpo launch --slurm`"),
        ("ray", "grpo_runtime.clusters.ray.cli", "ray_command", "ray",
         "status, logs, cancel and resume of jobs from `grpo launch --ray`"),
        ("explain", "grpo_schema.commands.explain", "explain_command", "", "show the batch schedule, micro-step by micro-step"),
        ("migrate", "grpo_schema.commands.migrate", "migrate_command", "", "rewrite renamed and removed keys for TRL 1.16"),
        ("export", "grpo_schema.commands.pyexport", "export_command", "", "write a GRPOConfig(...) call of a Python "
         "script or notebook as a flat YAML config"),
        ("plan", "grpo_schema.commands.plan", "plan_command", "", "per-GPU memory and run time on declared "
         "hardware: will it fit"),
        ("health", "grpo_schema.commands.health", "health_command", "", "judge runs from what they logged: "
         "flat groups, bad rewards, clipped completions, NaN, drift"),
        ("doctor", "grpo_schema.commands.doctor", "doctor_command", "", "check the environment that will run a "
         "config: package versions against its TRL release, known-bad combinations and the config's features"),
        ("lsp", "grpo_schema.lsp.server", "lsp_command", "lsp", "language server over stdio: diagnostics, quick "
         "fixes, hover and completion in the editor"),
    ):
        command = sub.add_parser(name, help=text, add_help=False, formatter_class=_Formatter)
        command.add_argument("argv", nargs=argparse.REMAINDER)
        command.set_defaults(run=_lazy(module, function, extra))
    return parser


# Options of our own that take a value; everything else starting with -- is TRL's `--key value` form.
_VALUE_OPTIONS = {"--hardware", "--world-size", "--trl-version", "--profile", "--set", "--allow-env", "--format", "--output", "-o", "--draft",
                  "--dataset-size", "--world-sizes", "--max-prompt-length", "--micro-steps"}
_FLAG_OPTIONS = {"--strict", "--fix", "--doctor", "--write", "-h", "--help", "--diff"}


def split_trl_tokens(argv: list[str]) -> tuple[list[str], list[str]]:
    """Separate our own options and paths from TRL-style `--key value...` tokens (kept in order)."""
    ours: list[str] = []
    trl: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        name = token.split("=", 1)[0]
        if name in _VALUE_OPTIONS:
            take = 1 if "=" in token else 2
            ours += argv[i:i + take]
            i += take
        elif name in _FLAG_OPTIONS or not token.startswith("--") or token == "--":
            ours.append(token)
            i += 1
        else:
            trl.append(token)
            i += 1
            while i < len(argv) and not argv[i].startswith("--") and "=" not in token:
                trl.append(argv[i])
                i += 1
    return ours, trl


_PASSTHROUGH = {"serve", "train", "launch", "demo", "smoke", "explain", "migrate", "plan", "slurm", "ray", "lsp", "health", "doctor",
                "export"}


def main(argv: Sequence[str] | None = None) -> int:
    tokens = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only="validate" if tokens[:1] == ["validate"] else None)
    rest: list[str] = []
    if tokens and tokens[0] == "validate":
        ours, rest = split_trl_tokens(tokens[1:])
        tokens = ["validate", *ours]
    passthrough = bool(tokens) and tokens[0] in _PASSTHROUGH  # the command parses its own options, wherever they are
    args = parser.parse_args(tokens[:1] if passthrough else tokens)
    if passthrough:
        args.argv = tokens[1:]
    try:
        return args.run(args, rest)
    except UsageError as exc:
        print(f"grpo {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. `grpo codes | head`
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
