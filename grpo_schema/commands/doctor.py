"""`grpo doctor [FILE] [--python PATH | --freeze FILE | --requirements FILE] [--format text|json|github|sarif]`:
the environment that will run a config, judged against its TRL release and the config's features.

Exit codes as `grpo validate`: 0 no errors (warnings allowed unless --strict), 1 errors, 2 bad usage or something
that cannot be read (no such interpreter, an unreadable file)."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from grpo_schema.commands.options import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    FORMATS,
    Formatter,
    UsageError,
    add_format,
    add_trl_version,
    trl_options,
)
from grpo_schema.commands.pycalls import add_call


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grpo doctor",
        formatter_class=Formatter,
        description="Check the environment that will run a config: its packages "
        "(read from metadata, never imported) against the TRL release's requirements, "
        "known-bad combinations and the features the config uses.",
    )
    parser.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help="the config (optional: without it, the environment alone is checked against its TRL release)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--python", metavar="PATH", help="the interpreter that will run (or its venv folder); default: this one"
    )
    where.add_argument(
        "--freeze",
        metavar="FILE",
        help="a `pip freeze` output or lock file (uv.lock, poetry.lock, pip-tools) of that environment",
    )
    where.add_argument("--requirements", metavar="FILE", help="a requirements file the environment is built from")
    add_format(parser, FORMATS)
    parser.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    add_trl_version(parser)
    add_call(parser)
    return parser


def judge(env, loaded=None, path: str | None = None, trl_version: str | None = None, local_files: bool = True):
    """The doctor report for an environment and (optionally) a config already checked by the engine (`loaded`, a
    CheckResult: its loaded mapping, key positions and the release it was judged for)."""
    from grpo_schema.doctor import diagnose

    if loaded is not None:
        positions = loaded.positions
        return diagnose(
            env,
            dict(loaded.raw or {}),
            path,
            loaded.trl_version,
            loaded.trl_version_source,
            lambda key: positions.of((key,)),
            local_files,
        )
    if trl_version is not None:
        return diagnose(env, None, None, trl_options(trl_version, None)["trl_version"], "flag")
    return diagnose(env)


def run(
    file: str | None,
    python: str | None = None,
    freeze: str | None = None,
    requirements: str | None = None,
    trl_version: str | None = None,
):
    """(report, results): the doctor report and the CheckResults the renderers print (the config's, and the freeze
    or requirements file's when some of its lines were not understood). UsageError for what cannot be read.
    A Python file's first GRPOConfig(...) call is the report's; `run_calls` judges each."""
    reports, results, _ = run_calls(file, python, freeze, requirements, trl_version)
    return reports[0], results


def run_calls(
    file: str | None,
    python: str | None = None,
    freeze: str | None = None,
    requirements: str | None = None,
    trl_version: str | None = None,
    call: int | None = None,
):
    """(reports, results, names): a doctor report for each GRPOConfig(...) call of a Python file (or the one `call`
    names; one report for a YAML file or no file), the CheckResults to print (one a report, then the freeze or
    requirements file's), and each report's name among the file's calls ('' for a file's only config)."""
    from grpo_schema.commands.pycalls import call_name, chosen_calls, is_python, refuse_call_for_yaml
    from grpo_schema.doctor import EnvironmentError_, read
    from grpo_schema.engine.check import CheckResult, _finish

    try:
        env = read(python=python, freeze=freeze, requirements=requirements)
    except EnvironmentError_ as exc:
        raise UsageError(str(exc)) from None
    configs, names = [None], [""]
    if file is not None:
        from pathlib import Path

        from grpo_schema.engine.validate import check_text

        refuse_call_for_yaml(call, file)
        try:
            data = Path(file).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {file}: {exc.strerror or exc}") from None
        options = trl_options(trl_version, file)
        if is_python(file):  # the features of each GRPOConfig(...) call, each judged on its own
            from grpo_schema.dialects.python import check_python

            checked = check_python(data, file, **options)
            chosen = chosen_calls(checked, call, file) if checked.calls else [0]
            configs = [checked.results[i] for i in chosen]
            names = [call_name(checked, i) if checked.calls else "" for i in chosen]
        else:
            configs = [check_text(data, path=file, suggest_fixes=False, **options)]
    reports = [judge(env, loaded, file, trl_version) for loaded in configs]
    results = []
    for loaded, report in zip(configs, reports):
        unreadable = [
            d for d in (loaded.diagnostics if loaded else []) if d.code.startswith("GRPO-Y") and d.severity == "error"
        ]
        path = loaded.path if loaded is not None and file and is_python(file) else file
        results.append(
            _finish(
                CheckResult(
                    path=path or f"<environment: {env.origin}>",
                    world_size=1,
                    diagnostics=unreadable + report.diagnostics,
                    trl_version=report.release or report.file_release,
                    trl_version_source=report.file_release_source,
                )
            )
        )
    main = results[0]
    if reports[0].file_diagnostics:
        results.append(
            _finish(
                CheckResult(
                    path=env.origin,
                    world_size=1,
                    diagnostics=list(reports[0].file_diagnostics),
                    trl_version=main.trl_version,
                    trl_version_source=main.trl_version_source,
                )
            )
        )
    return reports, results, names


def _summary(report) -> str:
    env = report.environment
    lines = [
        f"environment: {env.origin} ({env.source}" + (f", Python {env.python_version})" if env.python_version else ")")
    ]
    shown = ", ".join(f"{name} {version}" for name, version in env.summary().items() if version)
    missing = ", ".join(name for name, version in env.summary().items() if not version)
    lines.append(f"  installed: {shown or 'none of the packages TRL runs with'}")
    if missing:
        lines.append(f"  not installed: {missing}")
    if report.release:
        lines.append(
            f"  judged as TRL {report.release}"
            + (f"; features: {', '.join(report.features)}" if report.features else "")
        )
    return "\n".join(lines) + "\n"


def _render_text(results, report, names: list[str] | None = None) -> str:
    from grpo_schema.render.text import printable, render_diagnostic, use_color

    color = use_color(sys.stdout)
    blocks = []
    for index, result in enumerate(results):
        try:
            with open(result.path, encoding="utf-8", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            lines = []
        blocks += [render_diagnostic(d, result.path, lines, color) for d in result.diagnostics]
        counts = {s: sum(d.severity == s for d in result.diagnostics) for s in ("error", "warning", "info")}
        words = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n)
        name = (names or [""])[index] if index < len(names or [""]) else None
        if name is not None:  # a config's (each GRPOConfig(...) call's) report
            verdict = "the environment cannot run it as it is" if counts["error"] else "the environment can run it"
            if result.path.startswith("<environment"):
                verdict = "the environment has problems" if counts["error"] else "no problems found"
        else:
            verdict = "lines of this file were left out of the check"
        shown = printable(result.path) + (f" (GRPOConfig {name})" if name else "")
        blocks.append(f"{shown}: {verdict}" + (f" ({words})" if words else ""))
    return "\n\n".join(blocks) + "\n"


def doctor_command(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    try:
        reports, results, names = run_calls(
            args.file, args.python, args.freeze, args.requirements, args.trl_version, args.call
        )
    except UsageError as exc:
        print(f"grpo doctor: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    report = reports[0]
    if args.format == "json":
        from grpo_schema.render.machine import dumps

        doc = {"version": 1, **report.to_dict(), "files": [r.to_dict() for r in results]}
        if len(reports) > 1 or any(names):  # the first call's report above, each call's here
            doc["calls"] = [{"call": name, **r.to_dict()} for name, r in zip(names, reports)]
        sys.stdout.write(dumps(doc, indent=2) + "\n")
    elif args.format == "github":
        from grpo_schema.render.machine import render_github

        sys.stdout.write(render_github(results))
    elif args.format == "sarif":
        from grpo_schema.render.sarif import render_sarif

        sys.stdout.write(render_sarif(results))
    else:
        sys.stdout.write(_summary(report))
        sys.stdout.write(_render_text(results, report, names))
    failing = [
        d for r in results for d in r.diagnostics if d.severity == "error" or (args.strict and d.severity == "warning")
    ]
    return EXIT_INVALID if failing else EXIT_OK


_CURRENT = None


def add_doctor(result, path: str | None):
    """`grpo validate --doctor`: the file's CheckResult with this interpreter's doctor findings added (the
    environment is read once per command)."""
    global _CURRENT
    from grpo_schema.doctor import current
    from grpo_schema.engine.check import _finish

    if _CURRENT is None:
        _CURRENT = current()
    report = judge(_CURRENT, result, None if path in (None, "<stdin>") else path)
    result.diagnostics = list(result.diagnostics) + report.diagnostics
    return _finish(result)
