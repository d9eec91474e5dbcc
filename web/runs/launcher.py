"""Starting a run: `grpo launch` (accelerate launch) under the wrapper, in a session of its own.

The service never trains in its own process. It writes the posted config into the run's folder and starts
`python -m grpo_web.runs.wrapper RUN_DIR -- python -m grpo_schema launch CONFIG --num-processes N --set ...`, which is
exactly `grpo launch`: the config is validated again in the child, `env:` is applied there, and accelerate starts
N copies of `python -m grpo_runtime`. Paths the service resolved (output_dir, resume_from_checkpoint) go in
as `--set` overrides, so the posted text is kept byte for byte.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grpo_web.runs import procs

LOG_FILE = "run.log"
EXIT_FILE = "exit.json"
PROCESS_FILE = "process.json"
# The child must not see the service's own secrets (GRPO_WEB_TOKEN) or settings.
PRIVATE_PREFIXES = ("GRPO_WEB_",)


@dataclass(frozen=True)
class Started:
    pid: int
    start_time: int | None
    popen: subprocess.Popen


def config_file(run_dir: Path, config_format: str) -> Path:
    return run_dir / ("config.json" if config_format == "json" else "config.yaml")


def write_config(run_dir: Path, text: str, config_format: str) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    path = config_file(run_dir, config_format)
    path.write_text(text, encoding="utf-8")
    return path


def yaml_string(value: str) -> str:
    """A `--set` value is read as YAML; a JSON string is a YAML double-quoted scalar, whatever the path holds."""
    return json.dumps(value)


def path_arguments(overrides: dict[str, str] | None) -> list[str]:
    """`--set NAME=PATH` for the paths the service resolved when it validated the config."""
    command: list[str] = []
    for name, value in (overrides or {}).items():
        command += ["--set", f"{name}={yaml_string(value)}"]
    return command


def allow_env_arguments(allow_env: tuple[str, ...] | list[str]) -> list[str]:
    """The operator's allow-list, so the child validates the posted env: as the service did."""
    return [part for name in allow_env for part in ("--allow-env", name)]


def launch_command(
    config: Path,
    world_size: int,
    output_dir: str,
    resume: str | None,
    allow_env: tuple[str, ...] = (),
    overrides: dict[str, str] | None = None,
) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "grpo_schema",
        "launch",
        str(config),
        "--num-processes",
        str(world_size),
        "--set",
        f"output_dir={yaml_string(output_dir)}",
        *path_arguments(overrides),
    ]
    if resume:
        command += ["--set", f"resume_from_checkpoint={yaml_string(resume)}"]
    return command + allow_env_arguments(allow_env)


def child_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(PRIVATE_PREFIXES)}
    env["PYTHONUNBUFFERED"] = "1"  # log lines reach run.log as they are printed
    env.update(extra or {})
    return env


def spawn(
    command: list[str], cwd: Path, stdout: Any, stderr: Any = subprocess.STDOUT, env: dict[str, str] | None = None
) -> subprocess.Popen:
    """A process the service starts for a client (a run, a smoke test): in a session of its own (so a cancel or a
    time limit reaches every process below it), no stdin, and the service's environment without its own
    GRPO_WEB_* settings and token (plus `env`)."""
    return subprocess.Popen(
        command,
        cwd=cwd,
        env=child_environment(env),
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )


def stop(popen: subprocess.Popen, started: int | None, grace_s: float = 5.0) -> None:
    """End a spawned process (started at `started`, procs.start_time) and everything below it: SIGTERM, then
    SIGKILL after `grace_s`. Nothing is signalled once the process has ended (its pid may be another's by then)."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        if popen.poll() is not None:
            return
        procs.signal_run(popen.pid, started, sig)
        try:
            popen.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


def start(
    run_dir: Path,
    config_format: str,
    world_size: int,
    output_dir: str,
    resume: str | None,
    allow_env: tuple[str, ...] = (),
    overrides: dict[str, str] | None = None,
) -> Started:
    """Start the run's process group; stdout and stderr go to RUN_DIR/run.log, which the child keeps open."""
    launch = launch_command(config_file(run_dir, config_format), world_size, output_dir, resume, allow_env, overrides)
    command = [sys.executable, "-m", "grpo_web.runs.wrapper", str(run_dir), "--", *launch]
    for stale in (EXIT_FILE, PROCESS_FILE):
        (run_dir / stale).unlink(missing_ok=True)
    with open(run_dir / LOG_FILE, "ab") as log:
        log.write(f"$ {shlex.join(launch)}\n".encode())
        log.flush()
        popen = spawn(command, run_dir, stdout=log)
    return Started(popen.pid, procs.start_time(popen.pid), popen)


def read_json(path: Path) -> dict | None:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def recorded_exit(run_dir: Path) -> int | None:
    """The exit status the wrapper recorded, or None (still running, or killed before it could write)."""
    found = read_json(run_dir / EXIT_FILE)
    code = found.get("exit_code") if found else None
    return code if isinstance(code, int) else None


def recorded_process(run_dir: Path) -> tuple[int | None, int | None]:
    found = read_json(run_dir / PROCESS_FILE) or {}
    return found.get("pid"), found.get("start_time")


def note(run_dir: Path, text: str) -> None:
    """A line from the service in the run's log, so the log tells the whole story (appends interleave safely)."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    try:
        with open(run_dir / LOG_FILE, "ab+") as handle:
            prefix = "" if _ends_line(handle) else "\n"  # after a progress bar's carriage returns
            handle.write(f"{prefix}[grpo-config {stamp}] {text}\n".encode())
    except OSError:
        pass


def _ends_line(handle) -> bool:
    if handle.seek(0, 2) == 0:
        return True
    handle.seek(-1, 2)
    return handle.read(1) == b"\n"
