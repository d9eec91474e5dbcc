"""`grpo smoke FILE [--steps N] [--engine grpo_runtime|trl] [--set K=V]... [--format text|json]`: prove on a CPU,
in about a minute, that a config gets past its first optimizer steps.

The config runs as written through the ordinary run path (check, support.assess, train.main) for N optimizer steps
(default 2: a checkpoint is saved after step 1 and resumed for step 2), substituting only what cannot run here
(grpo_runtime.smoke.plan and its part modules state each substitution). The processes run in a scratch folder
(grpo_runtime.smoke.worker); their outcome becomes one report: a line per setting group, the time, and on
failure the component that failed with the user's own frames first and the config line that set it up.

Exit codes: 0 passed, 1 invalid config, 2 bad usage, 3 refused by the runtime (or a named problem found before
anything starts), 4 failed while running.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from grpo_runtime.launch.checking import EXIT_CANNOT_RUN, EXIT_INVALID, EXIT_USAGE, check
from grpo_runtime.smoke.processes import run_workers
from grpo_runtime.smoke.release import release_check, written_for_another_trainer
from grpo_runtime.smoke.report import base_report, doctor_section, finish, render_text
from grpo_runtime.smoke.rewrite import in_original, lines_of_original, translate_for_runtime
from grpo_runtime.smoke.substitutions import prepare
from grpo_schema.commands.options import add_format, add_overrides, add_profiles, add_world_size

WORKER_TIMEOUT_S = 900


def parser() -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(prog="grpo smoke", description=__doc__.split("\n\n")[0])
    out.add_argument("file")
    out.add_argument("--steps", type=int, default=2, help="optimizer steps (default 2: save after 1, resume for 2)")
    out.add_argument("--engine", choices=("grpo_runtime", "trl"), default="grpo_runtime")
    add_overrides(out)
    out.add_argument("--allow-env", dest="allow_env", action="append", default=[], metavar="NAME")
    add_profiles(out, help="a training script's profile (e.g. open-r1), as grpo train takes it", dest="profiles")
    add_world_size(
        out,
        help="the world size the run is for, as grpo validate takes it (the file's num_processes "
        "otherwise); the smoke runs it on this machine's CPUs, or the nearest size they can run",
    )
    add_format(out, ("text", "json"))
    out.add_argument(
        "--trl-version",
        metavar="X.Y[.Z]",
        help="the TRL release the file is written for: it is "
        "validated as that release reads it first (default: the installed trl, a repository pin, 1.16)",
    )
    out.add_argument("--keep", metavar="DIR", help="run in DIR and keep it (default: a temporary folder, removed)")
    out.add_argument("--timeout", type=float, default=WORKER_TIMEOUT_S, help="seconds before the run is stopped")
    out.add_argument(
        "--strict-paths",
        dest="strict_paths",
        action="store_true",
        help="refuse a dataset, model, reward model or DeepSpeed config path that does not exist on "
        "this machine (default: a path of another machine is replaced by a stand-in, and said so)",
    )
    return out


def smoke_command(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.steps < 1:
        print("grpo smoke: --steps must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    from grpo_schema.commands.trl_release import judged_release

    try:
        release = judged_release(args.trl_version, args.file)
    except ValueError as exc:
        print(f"grpo smoke: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    stopped = release_check(args, release)  # at --world-size, never a num_processes key the release may refuse
    if args.world_size is not None:  # the launch key grpo_runtime (TRL 1.16's terms) takes it as
        args.overrides.append(f"num_processes={args.world_size}")
    original = args.file
    translated = None if stopped is not None else translate_for_runtime(args, release)
    try:
        if translated is not None:
            args.file = translated["file"]
        report = stopped if stopped is not None else smoke(args)
    finally:
        args.file = original
        if translated is not None:
            Path(translated["file"]).unlink(missing_ok=True)
    report["file"] = original
    if translated is not None:
        report["groups"] = translated["groups"] + report["groups"]
        report["config_line"] = in_original(original, report.get("config_line"))
        for key in ("error", "log"):
            if report.get(key):
                report[key] = lines_of_original(report[key], translated["file"], translated["text"], original)
    report.update(trl_version=release["trl_version"], trl_version_source=release["trl_version_source"])
    report["doctor"] = doctor_section(original, args.trl_version)
    if args.format == "json":
        print(json.dumps(report, indent=1))
    else:
        print(render_text(report))
    return report["exit_code"]


def smoke(args) -> dict:
    """The whole smoke test; returns the report (see docs/smoke.md)."""
    from grpo_runtime.smoke.plan import SmokePlan, SmokeRefused, content_seed

    started = time.perf_counter()
    report = base_report(args)
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        # as --dry-run: a file that declares no world size is checked at the smallest one its batch fits
        result = check(args.file, args.overrides, None, args.allow_env, args.profiles, dry_run=True)
    if isinstance(result, int):
        if args.format == "text":
            sys.stderr.write(quiet.getvalue())
        report.update(
            exit_code=EXIT_INVALID if result == EXIT_INVALID else result,
            component="config",
            error=f"{args.file} is not a valid config" if result == EXIT_INVALID else f"cannot read {args.file}",
            log=quiet.getvalue()[-4000:],
        )
        if result == EXIT_INVALID:
            written_for_another_trainer(args, report, None)
        return finish(report, started)
    if args.engine == "trl" and not installed("trl"):
        report.update(exit_code=EXIT_USAGE, component="engine", error="--engine trl needs TRL installed")
        return finish(report, started)
    workdir = Path(args.keep).expanduser().resolve() if args.keep else Path(tempfile.mkdtemp(prefix="grpo-smoke-"))
    workdir.mkdir(parents=True, exist_ok=True)
    plan = SmokePlan(
        seed=content_seed(args.file, args.overrides, list(args.profiles or result.profile_args)),
        strict_paths=args.strict_paths,
    )
    report["seed"] = plan.seed
    try:
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            prepared = prepare(args, result, plan, workdir)
        report["groups"] = [g.to_dict() for g in plan.groups]
        report["world_size"] = plan.world_size
        if isinstance(prepared, dict):
            report.update(prepared, log=quiet.getvalue()[-4000:])
            return finish(report, started)
        outcome = run_workers(args, prepared, plan, workdir)
        report.update(outcome)
    except SmokeRefused as refused:
        from grpo_runtime.smoke.plan import config_line

        report["groups"] = [g.to_dict() for g in plan.groups]
        report.update(
            exit_code=EXIT_CANNOT_RUN,
            component=refused.component,
            error=str(refused),
            config_line=config_line(args.file, refused.key, refused.needle),
        )
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return finish(report, started)


def installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
