"""The smoke's processes: one, or `accelerate launch` for a world size above 1, each running
grpo_runtime.smoke.worker in the scratch folder; waited for, and their results read into the report's outcome."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from grpo_runtime.launch.checking import EXIT_CANNOT_RUN, EXIT_FAILED, EXIT_OK
from grpo_runtime.launch.process import free_port
from grpo_runtime.smoke.report import generated_completions, last_exception

GRACE_AFTER_FAILURE_S = 15


def run_workers(args, result, plan, workdir: Path) -> dict:
    """Start the smoke's processes and wait; returns the report's outcome fields."""
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
    command = worker_command(result, plan, spec, spec_path)
    log_path = workdir / "worker.log"
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=worker_env(plan), start_new_session=True
        )
        code = wait(process, workdir, args.timeout)
    return outcome(args, plan, workdir, code, log_path.read_text(encoding="utf-8", errors="replace"))


def worker_command(result, plan, spec: dict, spec_path: Path) -> list[str]:
    """One worker process, or `accelerate launch` of one a rank (its DeepSpeed ops built once first, as `grpo
    launch` does, and a free main process port)."""
    module = ["-m", "grpo_runtime.smoke.worker", str(spec_path)]
    if plan.world_size == 1:
        return [sys.executable, *module]
    from grpo_runtime.distributed.accelerate import launch_mode, offloads_optimizer, prebuild_deepspeed_ops
    from grpo_runtime.launch.process import default_launch_args, launch_arguments

    flags = launch_arguments(result.launch, [])
    if result.config.deepspeed or launch_mode(result.launch) == "DEEPSPEED" or "--use_deepspeed" in flags:
        # once, as `grpo launch` does: ranks building it together can break it
        with contextlib.redirect_stdout(sys.stderr):
            prebuild_deepspeed_ops(cpu_adam=offloads_optimizer(result.config, flags))
    if "--main_process_port" not in flags:  # never accelerate's fixed 29500, which another run may hold
        port = free_port()
        while port == spec["resume_port"]:
            port = free_port()
        flags = [*flags, "--main_process_port", str(port)]
    return [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--num_processes",
        str(plan.world_size),
        *flags,
        *default_launch_args(flags, plan.world_size, result.config),
        *module,
    ]


def worker_env(plan) -> dict[str, str]:
    """Offline, this checkout importable, the CPUs shared between the ranks; set and dict orders of the run: those of
    this file, every time."""
    return dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONPATH=os.pathsep.join([os.getcwd(), *filter(None, [os.environ.get("PYTHONPATH")])]),
        OMP_NUM_THREADS=str(max(1, (os.cpu_count() or 1) // plan.world_size)),
        PYTHONHASHSEED=str(plan.seed),
    )


def outcome(args, plan, workdir: Path, code: int | None, log_text: str) -> dict:
    """The report's outcome fields from the ranks' result files: the first failure, a pass, or a process that ended
    without a report."""
    from grpo_runtime.smoke.plan import config_line

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
