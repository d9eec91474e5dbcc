"""`grpo health RUN_DIR...`: the run-health findings of runs that trained or are training.

Reads grpo_runtime's and TRL's output directories (grpo_schema.health.rundir); prints text, json, github or
sarif; exits as `grpo validate` does: 0 no error (warnings allowed unless --strict), 1 at least one error, 2 bad
usage or a path that is not a readable run. `--follow` watches live runs and prints each finding once, when it
appears, until the runs finish or Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from grpo_schema.commands.options import EXIT_INVALID, EXIT_OK, EXIT_USAGE, FORMATS, add_format

WEIGHTS = ("model.safetensors", "pytorch_model.bin", "adapter_model.safetensors", "model.safetensors.index.json")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grpo health",
        description="Judge runs from what they logged: groups "
        "with no learning signal, bad or slow rewards, clipped completions, drifting "
        "log-probs, NaN, a resume that trains nothing.",
    )
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="RUN_DIR",
        help="a run's output_dir (grpo_runtime or TRL), or its metrics.jsonl / trainer_state.json",
    )
    add_format(parser, FORMATS)
    parser.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="change a threshold (docs/health.md lists them), e.g. --set min_steps=5",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the run's config, for fixes with its values (a grpo_runtime run directory has it already)",
    )
    parser.add_argument("--follow", action="store_true", help="watch the runs and print findings as they appear")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between looks with --follow")
    parser.add_argument("--max-seconds", type=float, default=None, help="stop following after this long")
    return parser


def health_command(argv: list[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    try:
        settings = read_settings(args.set)
        config = read_config(args.config) if args.config else None
    except ValueError as exc:
        print(f"grpo health: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.follow:
        return follow(args, settings, config)
    from grpo_schema.health import check_run_dir

    reports = [check_run_dir(path, settings, config) for path in args.paths]
    emit(reports, args.format)
    return exit_code(reports, args.strict)


def read_settings(pairs: list[str]):
    from grpo_schema.health import HealthSettings

    values = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--set {pair!r}: expected NAME=VALUE")
        values[name.strip()] = value.strip()
    return HealthSettings().with_values(values)


def read_config(path: str) -> dict:
    import yaml

    try:
        values = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"--config {path}: cannot read: {exc.strerror or exc}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ValueError(f"--config {path}: not YAML ({str(exc).splitlines()[0]}); `grpo validate` says more") from None
    if not isinstance(values, dict):
        raise ValueError(f"--config {path}: not a config (the top level is not a mapping)")
    return values


def exit_code(reports, strict: bool) -> int:
    if any(report.errors for report in reports):
        return EXIT_USAGE
    failing = ("error", "warning") if strict else ("error",)
    return EXIT_INVALID if any(f.severity in failing for r in reports for f in r.findings) else EXIT_OK


def emit(reports, fmt: str) -> None:
    if fmt == "json":
        from grpo_schema.render.machine import dumps

        sys.stdout.write(dumps({"version": 1, "runs": [r.to_dict() for r in reports]}, indent=2) + "\n")
        return
    for report in reports:
        for message in report.errors:
            print(f"grpo health: error: {message}", file=sys.stderr)
    if fmt in ("github", "sarif"):
        located = [
            SimpleNamespace(path=r.metrics_file or r.path, diagnostics=r.diagnostics) for r in reports if not r.errors
        ]
        if fmt == "github":
            from grpo_schema.render.machine import render_github

            sys.stdout.write(render_github(located))
        else:
            from grpo_schema.render.sarif import render_sarif

            sys.stdout.write(render_sarif(located))
        return
    from grpo_schema.health.text import render_report

    sys.stdout.write(render_report(reports))


def finished(path: str) -> bool:
    """A run that saved its final model (grpo_runtime and TRL both write it at the top of output_dir)."""
    folder = Path(path) if Path(path).is_dir() else Path(path).parent
    return any((folder / name).is_file() for name in WEIGHTS)


def follow(args, settings, config) -> int:
    from grpo_schema.health import check_run_dir
    from grpo_schema.health.text import cleared_line, finding_line

    seen: dict[str, dict] = {path: {} for path in args.paths}
    started = time.monotonic()
    reports = []
    try:
        while True:
            reports = [check_run_dir(path, settings, config) for path in args.paths]
            for report, path in zip(reports, args.paths):
                keys = {finding.key for finding in report.findings}
                for key in [key for key in seen[path] if key not in keys]:
                    line = cleared_line(seen[path].pop(key), report.steps)
                    print(f"{path}: " + line.removeprefix("grpo health: "), flush=True)
                for finding in report.findings:
                    if finding.key not in seen[path]:
                        seen[path][finding.key] = finding
                        print(f"{path}: " + finding_line(finding).removeprefix("grpo health: "), flush=True)
            if all(finished(path) for path in args.paths):
                break
            if args.max_seconds is not None and time.monotonic() - started >= args.max_seconds:
                break
            time.sleep(max(args.interval, 0.1))
    except KeyboardInterrupt:
        pass
    for report in reports:  # a path that never became a run: say so once at the end
        for message in report.errors:
            print(f"grpo health: error: {message}", file=sys.stderr)
    return exit_code(reports, args.strict)
