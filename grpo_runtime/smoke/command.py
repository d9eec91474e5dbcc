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
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grpo_runtime.launch.checking import EXIT_CANNOT_RUN, EXIT_FAILED, EXIT_INVALID, EXIT_OK, EXIT_USAGE, check
from grpo_runtime.launch.process import free_port
from grpo_runtime.smoke.report import doctor_section, generated_completions, last_exception, render_text
from grpo_schema.commands.options import add_format, add_profiles, add_world_size

REPORT_VERSION = 1
WORKER_TIMEOUT_S = 900
GRACE_AFTER_FAILURE_S = 15


def parser() -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(prog="grpo smoke", description=__doc__.split("\n\n")[0])
    out.add_argument("file")
    out.add_argument("--steps", type=int, default=2, help="optimizer steps (default 2: save after 1, resume for 2)")
    out.add_argument("--engine", choices=("grpo_runtime", "trl"), default="grpo_runtime")
    out.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
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


def in_original(path: str, where: dict | None) -> dict | None:
    """A line found in the rewritten copy, at its place in the user's own file (the rewrite moves lines: a removed
    key, the defaults written at the end); a line the file does not have (a default written out) stays as found."""
    if not where:
        return where
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return where
    for number, line in enumerate(lines, 1):
        if line.strip() == where["text"]:
            return {"line": number, "text": where["text"]}
    return {**where, "written_out": True}


def lines_of_original(text: str, copy: str, copy_text: str, original: str) -> str:
    """Diagnostics printed for the rewritten copy, pointed at the user's own file: `copy:N:C` and an excerpt's
    `N |` gutter become the line of the original with the same text; a line the original lacks (a default written
    out) is said to be the rewrite's."""
    copy_lines = copy_text.splitlines()
    try:
        mine = Path(original).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        mine = []
    stripped = [line.strip() for line in mine]

    def line_in_original(number: int) -> int | None:
        if 0 < number <= len(copy_lines) and copy_lines[number - 1].strip() in stripped:
            return stripped.index(copy_lines[number - 1].strip()) + 1
        return None

    def located(match: re.Match) -> str:
        found = line_in_original(int(match.group(1)))
        if found is None:
            return f"{original} (a line the TRL 1.16 rewrite added: {copy_lines[int(match.group(1)) - 1].strip()}):"
        return f"{original}:{found}:{match.group(2)}"

    text = re.sub(rf"{re.escape(copy)}:(\d+):(\d+)", located, text)

    def gutter(match: re.Match) -> str:
        found = line_in_original(int(match.group(2)))
        return f"{match.group(1)}{found if found is not None else '+'} |"  # +: the rewrite's own line

    text = re.sub(r"^(\s*)(\d+) \|", gutter, text, flags=re.MULTILINE)
    return text.replace(copy, original)


def is_reference(version: str) -> bool:
    """The runtime's own release (TRL 1.16), whose files run as written."""
    from grpo_schema.engine.release import release_surface

    return release_surface(version) is None


def release_check(args, release: dict) -> dict | None:
    """A file written for another TRL release is first validated as that release reads it (at the world size the
    smoke picks, under the training script's profile it is written for, as the smoke's own check does): its errors
    stop the smoke test (exit 1), and a file valid for it is not held to TRL 1.16's names."""
    if is_reference(release["trl_version"]):
        return None
    started = time.perf_counter()
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        judged = check(
            args.file, args.overrides, args.world_size, args.allow_env, args.profiles, dry_run=True, release=release
        )
    if not isinstance(judged, int):
        if not args.profiles and judged.profile_args:
            args.profiles = list(judged.profile_args)  # the script's profile the file is written for, found here
        args.ignored_keys = ignored_keys(judged)
        return None
    if args.format == "text":
        sys.stderr.write(quiet.getvalue())
    report = base_report(args)
    report.update(
        exit_code=judged,
        component="config",
        log=quiet.getvalue()[-4000:],
        error=f"{args.file} is not valid for TRL {release['trl_version']}"
        if judged == EXIT_INVALID
        else f"cannot read {args.file}",
    )
    if judged == EXIT_INVALID:
        written_for_another_trainer(args, report, release)
    return finish(report, started)


# What a release's front end does not read, and ignores (a warning): unknown keys, a downstream script's, keys
# renamed, removed or added after it, launch keys its `trl grpo` does not take.
UNREAD = {"GRPO-K001", "GRPO-K002", "GRPO-K003", "GRPO-K006", "GRPO-K009", "GRPO-K010"}


def ignored_keys(judged) -> list[str]:
    """The file's top-level keys the judged release ignores: the run leaves them out, as the release would."""
    raw = judged.raw if isinstance(judged.raw, dict) else {}
    return list(
        dict.fromkeys(
            d.fields[0]
            for d in judged.diagnostics
            if d.code in UNREAD and d.fields and d.severity != "error" and d.fields[0] in raw
        )
    )


def written_for_another_trainer(args, report: dict, release: dict | None) -> None:
    """Keys and rewards that no release and no known script reads: the file is another trainer's, which grpo_runtime
    cannot run (exit 3, the keys named), not a config to correct."""
    from grpo_runtime.launch.checking import another_trainer
    from grpo_schema import check_file

    try:
        result = check_file(
            args.file,
            world_size=args.world_size,
            overrides=args.overrides or None,
            allow_env=args.allow_env,
            profiles=list(args.profiles),
            allow_profile_import=True,
            **(release or {}),
        )
    except (OSError, KeyError, ImportError, AttributeError):
        return
    reason = another_trainer(result).lstrip(".\n")
    if reason:
        report.update(exit_code=EXIT_CANNOT_RUN, component="trainer", error=f"{args.file}: {reason}")


def translate_for_runtime(args, release: dict) -> dict | None:
    """grpo_runtime follows TRL 1.16: a file written for another release runs as `grpo migrate --from R` rewrites
    it (old names under their new ones, R's defaults that 1.16 changed written out), so the steps train what R
    would. The rewritten file sits beside the original (relative paths stay the file's) for the smoke's length.
    Returns {"file": its path, "groups": the report lines saying so}, or None for a 1.16 file."""
    if is_reference(release["trl_version"]):
        return None
    from grpo_runtime.smoke.plan import NOT_EXERCISED, SUBSTITUTED
    from grpo_schema.commands.migrate import migrate_config
    from grpo_schema.render.text import release_reason

    source = Path(args.file)
    text = source.read_bytes().decode("utf-8")
    dropped = getattr(args, "ignored_keys", [])
    text = without_keys(text, dropped)
    migrated = migrate_config(text, str(source), list(args.profiles), release["trl_version"])
    migrated.text, migrated.done = without_unused_vllm_mode(text, migrated.text, migrated.done)
    target = source.with_name(f".{source.stem}.grpo-smoke-trl{migrated.target}{source.suffix or '.yaml'}")
    try:
        target.write_text(migrated.text, encoding="utf-8")
    except OSError:  # a read-only folder: a scratch file (a relative dataset path then reads from the cwd)
        handle, name = tempfile.mkstemp(prefix=f"{source.stem}.grpo-smoke-", suffix=source.suffix or ".yaml")
        os.close(handle)
        target = Path(name)
        target.write_text(migrated.text, encoding="utf-8")
    if dropped:
        groups_dropped = [
            {
                "group": f"keys TRL {release['trl_version']} ignores",
                "status": NOT_EXERCISED,
                "detail": f"{', '.join(dropped)}: left out of the run, as TRL {release['trl_version']} "
                "ignores them (the setting has no effect there)",
            }
        ]
    else:
        groups_dropped = []
    written = f"written for {release_reason(release['trl_version'], release['trl_version_source'])}"
    changes = "; ".join(migrated.done) if migrated.done else "nothing to rewrite"
    groups = [
        {
            "group": "TRL release",
            "status": SUBSTITUTED,
            "detail": f"{written}; run by grpo_runtime (TRL {migrated.target}'s terms) as `grpo migrate --from "
            f"{release['trl_version']}` rewrites it, keeping its release's behaviour: {changes}",
        }
    ]
    if migrated.cannot_keep or migrated.failed:
        groups.append(
            {
                "group": f"TRL {release['trl_version']} behaviour",
                "status": NOT_EXERCISED,
                "detail": f"TRL {migrated.target} cannot keep: " + "; ".join(migrated.cannot_keep + migrated.failed),
            }
        )
    return {"file": str(target), "text": migrated.text, "groups": groups + groups_dropped}


def without_keys(text: str, keys: list[str]) -> str:
    from grpo_schema.engine.diagnostics import Fix
    from grpo_schema.engine.yamledit import EditError, apply_fix_to_text

    for key in keys:
        try:
            text = apply_fix_to_text(text, Fix(unset=(key,), title=f"remove {key}"))
        except EditError:
            continue
    return text


def without_unused_vllm_mode(text: str, migrated: str, done: list[str]) -> tuple[str, list[str]]:
    """The release's vllm_mode written out by the rewrite, where the file neither names it nor uses vLLM: nothing of
    the run, only a warning the user's file never earned."""
    from grpo_schema.engine.yamledit import load_yaml

    mine, rewritten = load_yaml(text).data, load_yaml(migrated).data
    if (
        not isinstance(mine, dict)
        or not isinstance(rewritten, dict)
        or "vllm_mode" in mine
        or "vllm_mode" not in rewritten
        or rewritten.get("use_vllm") is True
    ):
        return migrated, done
    return without_keys(migrated, ["vllm_mode"]), [d for d in done if not d.startswith("wrote vllm_mode")]


def base_report(args) -> dict:
    return {
        "version": REPORT_VERSION,
        "file": args.file,
        "engine": args.engine,
        "steps": args.steps,
        "passed": False,
        "exit_code": EXIT_FAILED,
        "groups": [],
        "world_size": None,
    }


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


def finish(report: dict, started: float) -> dict:
    report["passed"] = report["exit_code"] == EXIT_OK
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def prepare(args, result, plan, workdir: Path):
    """Fill `plan`; returns the checked smoke config, or a report update when it stops before running."""
    from grpo_runtime.smoke.code import state_code_execution
    from grpo_runtime.smoke.data import strict_paths_check, substitute_dataset
    from grpo_runtime.smoke.model import substitute_model
    from grpo_runtime.smoke.rewards import exercised_names, reward_functions, state_branch_rewards, substituted_refusals
    from grpo_runtime.smoke.settings import (
        bound_batch,
        cap_generation_kwargs,
        choose_world_size,
        substitute_settings,
        written_groups,
    )
    from grpo_runtime.support import assess, script_of
    from grpo_schema import check_file

    config, raw = result.config, result.raw if isinstance(result.raw, dict) else {}
    profiles = list(args.profiles or result.profile_args)
    strict_paths_check(config, plan, script_of(result))
    funcs = reward_functions(result)
    substitute_model(config, plan, workdir)
    substitute_dataset(config, raw, funcs, plan, workdir, script_of(result))
    state_code_execution(config, script_of(result), funcs, plan)
    state_branch_rewards(config, script_of(result), plan)
    substitute_settings(config, raw, plan, workdir)

    def checked(size):
        sets = [*args.overrides, *plan.set_strings(), f"num_processes={size}"]
        return check_file(
            args.file,
            world_size=size,
            overrides=sets,
            allow_env=args.allow_env,
            profiles=profiles,
            allow_profile_import=True,
        )

    plan.world_size = choose_world_size(args.file, config, plan, result.world_size, checked)
    bound_batch(config, plan, checked)
    cap_generation_kwargs(config, plan)
    if "num_processes" in result.launch or plan.world_size != result.world_size:
        plan.overrides["num_processes"] = plan.world_size
    written_groups(config, result.plan, plan, args.steps, exercised_names(funcs) if funcs else ["the reward model"])
    smoke_result = check(args.file, [*args.overrides, *plan.set_strings()], plan.world_size, args.allow_env, profiles)
    if isinstance(smoke_result, int):
        return {
            "exit_code": EXIT_CANNOT_RUN,
            "component": "substitution",
            "error": "the config with the smoke's substitutions does not validate (see the log)",
        }
    if args.engine == "grpo_runtime":
        substituted = substituted_refusals(smoke_result)
        refusals = [d for d in assess(smoke_result, "launch") if d.severity == "error" and d.message not in substituted]
        if refusals:
            return {
                "exit_code": EXIT_CANNOT_RUN,
                "component": "runtime",
                "error": "grpo_runtime cannot run it as written: "
                + "; ".join(f"{d.code} {', '.join(d.fields)}: {d.message}" for d in refusals),
            }
    return smoke_result


def run_workers(args, result, plan, workdir: Path) -> dict:
    """Start the smoke's processes and wait; returns the report's outcome fields."""
    from grpo_runtime.smoke.plan import config_line

    spec = {
        "file": args.file,
        "overrides": [*args.overrides, *plan.set_strings()],
        "world_size": plan.world_size,
        "allow_env": list(args.allow_env),
        "profiles": list(args.profiles or result.profile_args),
        "steps": args.steps,
        "engine": args.engine,
        "workdir": str(workdir),
        "seed": plan.seed,
        "resume_port": free_port() if plan.world_size > 1 else None,
    }
    spec_path = workdir / "spec.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    module = ["-m", "grpo_runtime.smoke.worker", str(spec_path)]
    if plan.world_size == 1:
        command = [sys.executable, *module]
    else:
        from grpo_runtime.distributed.accelerate import launch_mode, prebuild_deepspeed_ops
        from grpo_runtime.launch.process import default_launch_args, launch_arguments

        flags = launch_arguments(result.launch, [])
        if result.config.deepspeed or launch_mode(result.launch) == "DEEPSPEED" or "--use_deepspeed" in flags:
            with contextlib.redirect_stdout(sys.stderr):
                prebuild_deepspeed_ops()  # once, as `grpo launch` does: ranks building it together can break it
        if "--main_process_port" not in flags:  # never accelerate's fixed 29500, which another run may hold
            port = free_port()
            while port == spec["resume_port"]:
                port = free_port()
            flags = [*flags, "--main_process_port", str(port)]
        command = [
            sys.executable,
            "-m",
            "accelerate.commands.launch",
            "--num_processes",
            str(plan.world_size),
            *flags,
            *default_launch_args(flags, plan.world_size, result.config),
            *module,
        ]
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONPATH=os.pathsep.join([os.getcwd(), *filter(None, [os.environ.get("PYTHONPATH")])]),
        OMP_NUM_THREADS=str(max(1, (os.cpu_count() or 1) // plan.world_size)),
        PYTHONHASHSEED=str(plan.seed),
    )  # set and dict orders of the run: those of this file, every time
    log_path = workdir / "worker.log"
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        code = wait(process, workdir, args.timeout)
    log_text = log_path.read_text(encoding="utf-8", errors="replace")
    results = [json.loads(p.read_text()) for p in sorted(workdir.glob("result-*.json"))]
    failed = [r for r in results if not r["passed"]]
    generated = generated_completions(workdir / "output")
    if failed:
        first = failed[0]
        return {
            **generated,
            "exit_code": EXIT_CANNOT_RUN if first.get("refused") else EXIT_FAILED,
            "component": first["component"],
            "error": first["error"],
            "exception": first.get("exception"),
            "phase": first["phase"],
            "rank": first["rank"],
            "traceback": [f"{f['file']}:{f['line']} in {f['function']}: {f['code']}" for f in first["traceback"]],
            "frame_owners": [f.get("owner", "user" if f.get("user") else "library") for f in first["traceback"]],
            "config_line": config_line(args.file, first.get("key"), first.get("needle")),
        }
    if code == 0 and len(results) == plan.world_size:
        return {**generated, "exit_code": EXIT_OK}
    reason = "timed out" if code is None else f"exited with {code}"
    return {
        **generated,
        "exit_code": EXIT_FAILED,
        "component": "process",
        "error": f"the smoke process {reason} without a report",
        "exception": last_exception(log_text),
        "log": log_text[-4000:],
    }


def wait(process, workdir: Path, timeout: float):
    """The exit code, or None after a timeout. A failed rank leaves the others waiting in a collective: they are
    stopped after a short grace."""
    deadline, failed_at = time.monotonic() + timeout, None
    while True:
        code = process.poll()
        if code is not None:
            return code
        now = time.monotonic()
        if failed_at is None and any(
            not json.loads(p.read_text() or "{}").get("passed", True)
            for p in workdir.glob("result-*.json")
            if p.stat().st_size
        ):
            failed_at = now
        if now > deadline or (failed_at is not None and now - failed_at > GRACE_AFTER_FAILURE_S):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                return process.wait(10) if failed_at is not None else None
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                return None
        time.sleep(0.2)
