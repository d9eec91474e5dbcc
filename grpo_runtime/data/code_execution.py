"""One program run on this machine with limits: grpo_runtime's local stand-in for the remote sandboxes that open-r1's
code rewards send completions to (E2B, MorphCloud, Piston).

A run is a subprocess started through a small launcher (this interpreter, `-I -S`) that sets the limits and then
becomes the program, so nothing runs in the trainer's process between fork and exec (the trainer has threads):

* wall-clock time: the run is killed, with everything it started (its own session), at `time_s`; CPU time is
  capped too (RLIMIT_CPU), a little above it;
* memory: the address space (RLIMIT_AS), as Piston's `ulimit -v`; no core files (RLIMIT_CORE 0);
* processes: at most `processes` more than the user it runs as already has (RLIMIT_NPROC, which the kernel counts
  per user and does not apply to root: as root the program runs as `nobody`, when it can read the interpreter);
* output: every file it writes, stdout included, holds at most `output_bytes` (RLIMIT_FSIZE);
* a scratch working folder of its own, and an environment built from nothing (PATH, HOME and TMPDIR in the
  scratch folder, a UTF-8 locale, one BLAS/OpenMP thread, PYTHONHASHSEED 0): no variable of the trainer's
  environment, no token, reaches the program.

It limits resources; it is not a security boundary: the program can read what its user can read and reach the
network. A killed, crashing or runaway program is an outcome (`Outcome.status`), never an exception.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

STATUSES = ("ok", "failed", "timeout", "memory", "output_limit", "crashed", "error")
LAUNCH_ALLOWANCE_S = 0.25  # the launcher's own start, not counted against the program's time limit
STDERR_KEPT = 8192  # characters of a program's stderr kept in its outcome (the tail)
LAUNCH_FAILED = 127
SANDBOX_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
}

# Runs as `python -I -S -c LAUNCHER SPEC PROGRAM ARGS...`: limits, then (as root) nobody's identity, then exec.
LAUNCHER = r"""
import json, os, resource, sys
spec = json.loads(sys.argv[1])
for name, pair in spec["limits"].items():
    kind = getattr(resource, name)
    top = resource.getrlimit(kind)[1]
    soft, hard = [top if v is None or (top != resource.RLIM_INFINITY and v > top) else v for v in pair]
    if hard != resource.RLIM_INFINITY and (soft == resource.RLIM_INFINITY or soft > hard):
        soft = hard
    resource.setrlimit(kind, (soft, hard))
if spec.get("user"):
    uid, gid = spec["user"]
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
try:
    os.execv(sys.argv[2], sys.argv[2:])
except OSError as error:
    sys.stderr.write("grpo-sandbox: cannot start %s: %s\n" % (sys.argv[2], error))
    os._exit(127)
"""


@dataclass(frozen=True)
class Limits:
    time_s: float = 5.0  # wall-clock seconds (open-r1's limit per test of its `code` reward)
    memory_mb: float = 1024.0  # address space
    processes: int = 32  # processes and threads it may start
    output_bytes: int = 32 << 20  # the largest file it may write, stdout included


@dataclass(frozen=True)
class Outcome:
    status: str  # one of STATUSES
    exit_code: int | None  # the exit status, -N for a signal, None when it never started
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@functools.cache
def sandbox_user() -> tuple[int, int] | None:
    """(uid, gid) programs run as: `nobody`'s when this process is root (root's processes are not capped, and a
    program should not have root's rights), else None (this process's user)."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def tasks_of(uid: int) -> int | None:
    """Processes and threads the kernel counts against `uid`'s RLIMIT_NPROC (None where /proc cannot say)."""
    if not os.path.isdir("/proc/self"):
        return None
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            text = Path(entry.path, "status").read_text()
            fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields.get("Threads", "1").strip() or 1)
    return count


def rlimits(limits: Limits, user: tuple[int, int] | None) -> dict:
    memory = int(limits.memory_mb * 1024 * 1024)
    cpu = int(math.ceil(limits.time_s)) + 1
    found = {
        "RLIMIT_AS": (memory, memory),
        "RLIMIT_CORE": (0, 0),
        "RLIMIT_CPU": (cpu, cpu + 1),
        "RLIMIT_FSIZE": (limits.output_bytes, limits.output_bytes),
        "RLIMIT_STACK": (None, None),
    }  # as deep as allowed: Piston's `ulimit -s unlimited`
    running = tasks_of(user[0] if user else os.getuid())
    if running is not None:
        cap = running + limits.processes + 1  # +1: the program itself
        found["RLIMIT_NPROC"] = (cap, cap)
    return found


def run(
    argv: list[str], stdin: str | bytes, cwd: Path | str, limits: Limits = Limits(), as_sandbox_user: bool = True
) -> Outcome:
    """Run `argv` in the scratch folder `cwd` with `stdin` and `limits`; never raises for what the program does,
    never hangs. Its stdin, stdout and stderr are files in a folder beside `cwd`, removed afterwards."""
    cwd = Path(cwd).resolve()
    user = sandbox_user() if as_sandbox_user else None
    spec = {"limits": rlimits(limits, user), "user": list(user) if user else None}
    io = Path(cwd.parent, f".{cwd.name}.io")  # beside the working folder, where the program does not write
    io.mkdir(exist_ok=True)
    (io / "stdin").write_bytes(stdin.encode() if isinstance(stdin, str) else stdin)
    env = dict(SANDBOX_ENV, HOME=str(cwd), TMPDIR=str(cwd))
    command = [sys.executable, "-I", "-S", "-c", LAUNCHER, json.dumps(spec), *argv]
    started = time.monotonic()
    try:
        with open(io / "stdin", "rb") as given, open(io / "stdout", "wb") as out, open(io / "stderr", "wb") as err:
            process = subprocess.Popen(
                command, stdin=given, stdout=out, stderr=err, cwd=cwd, env=env, start_new_session=True, close_fds=True
            )
            timed_out = wait(process, limits.time_s + LAUNCH_ALLOWANCE_S)
        stdout = read_text(io / "stdout", limits.output_bytes)
        filled = (io / "stdout").stat().st_size >= limits.output_bytes  # Python ignores SIGXFSZ: EFBIG instead
        stderr = read_text(io / "stderr", limits.output_bytes)[-STDERR_KEPT:]
    except OSError as error:
        return Outcome("error", None, "", f"cannot start {argv[0]}: {error}", 0.0)
    finally:
        for name in ("stdin", "stdout", "stderr"):
            (io / name).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            io.rmdir()
    seconds = time.monotonic() - started
    status = status_of(process.returncode, timed_out, stderr)
    if filled and status != "ok":
        status = "output_limit"
    return Outcome(status, process.returncode, stdout, stderr, seconds)


def wait(process: subprocess.Popen, seconds: float) -> bool:
    """Wait up to `seconds`; True when the program had to be killed. Whatever it started in its session goes too."""
    try:
        process.wait(seconds)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return timed_out


def read_text(path: Path, limit: int) -> str:
    with open(path, "rb") as handle:
        return handle.read(limit).decode("utf-8", errors="replace")


def status_of(code: int, timed_out: bool, stderr: str) -> str:
    if timed_out or code == -signal.SIGXCPU:
        return "timeout"
    if code == -signal.SIGXFSZ:
        return "output_limit"
    if code == LAUNCH_FAILED and stderr.startswith("grpo-sandbox:"):
        return "error"
    if code != 0 and ("MemoryError" in stderr or "bad_alloc" in stderr):
        return "memory"
    if code < 0:
        return "crashed"
    return "ok" if code == 0 else "failed"
