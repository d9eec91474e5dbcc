"""The `local` run backend: a run is a process group of this machine, `grpo launch` under the wrapper
(grpo_web.runs.launcher, grpo_web.runs.wrapper), its output in RUN_DIR/run.log.

The job's id is the wrapper's pid; the store keeps its start time too (pid_start), so a pid the system has given to
another process since is never taken for the run. A cancel is SIGTERM to the group, then SIGKILL when the group is
still there runs_cancel_grace_s later. A restarted service finds a run's process again by its pid, or in
RUN_DIR/process.json when the service died before recording it, and its exit status in RUN_DIR/exit.json.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from grpo_web.runs import launcher, procs
from grpo_web.runs.backend import JobState, RunBackend, SubmitRefused, Submitted
from grpo_web.runs.store import Run


class LocalBackend(RunBackend):
    name, label = "local", "this machine"

    def __init__(self, settings):
        super().__init__(settings)
        self._popens: dict[str, subprocess.Popen] = {}  # runs this service started (others: by pid)
        self._killed: set[str] = set()

    def submit(self, run: Run) -> Submitted:
        try:
            started = launcher.start(
                Path(run.run_dir),
                run.config_format,
                run.world_size,
                run.output_dir,
                run.resume_checkpoint,
                tuple(self.settings.runs_env_allowlist),
                json.loads(run.overrides or "{}"),
            )
        except OSError as error:
            raise SubmitRefused(f"the run could not be started: {error}") from error
        self._popens[run.id] = started.popen
        return Submitted(
            str(started.pid),
            "RUNNING",
            f"started on this machine (pid {started.pid})",
            started=True,
            process=(started.pid, started.start_time),
        )

    def status(self, run: Run) -> JobState | None:
        ended, code = self._exit_status(run)
        if not ended:
            self._escalate_cancel(run)
            return JobState("RUNNING")
        self._popens.pop(run.id, None)
        self._killed.discard(run.id)
        return JobState("EXITED", finished=True, exit_code=code)

    def cancel(self, run: Run) -> str:
        first = signal.SIGKILL if self.settings.runs_cancel_grace_s == 0 else signal.SIGTERM
        procs.signal_run(run.pid, run.pid_start, first)
        return f"cancel requested: {first.name} sent to the run's processes"

    def outcome(self, run: Run, found: JobState) -> tuple[str, int | None, str | None]:
        code = found.exit_code
        if run.cancel_requested_at is not None:
            return "cancelled", code, "cancelled on request"
        if code == 0:
            return "succeeded", 0, None
        if code is None:
            return "failed", None, "the run's process ended while the service was not running and left no exit status"
        return "failed", code, f"{describe_exit(code)}; the log says why"

    def reattach(self, run: Run) -> str | None:
        if procs.alive(run.pid, run.pid_start):
            return f"service restarted: re-attached to the run's process (pid {run.pid})"
        return None  # gone while the service was not running: the first look settles it

    def recorded_process(self, run: Run) -> tuple[int | None, int | None]:
        """The wrapper's own record of its pid, for a run the service died before recording."""
        return launcher.recorded_process(Path(run.run_dir))

    # --- following the process ----------------------------------------------------------------------------------
    def _exit_status(self, run: Run) -> tuple[bool, int | None]:
        popen = self._popens.get(run.id)
        if popen is not None:
            code = popen.poll()
            return code is not None, code
        if procs.alive(run.pid, run.pid_start):
            return False, None
        return True, launcher.recorded_exit(Path(run.run_dir))

    def _escalate_cancel(self, run: Run) -> None:
        if run.cancel_requested_at is None or run.id in self._killed:
            return
        if time.time() - run.cancel_requested_at >= self.settings.runs_cancel_grace_s:
            if procs.signal_run(run.pid, run.pid_start, signal.SIGKILL):
                launcher.note(
                    Path(run.run_dir),
                    f"still running {self.settings.runs_cancel_grace_s:g} s after the cancel: SIGKILL sent",
                )
            self._killed.add(run.id)


def describe_exit(code: int) -> str:
    """The wrapper's status: the command's exit code, 128+N when it was killed by signal N, or -N when the
    wrapper itself was."""
    number = -code if code < 0 else code - 128 if code > 128 else None
    if number:
        try:
            return f"killed by {signal.Signals(number).name}"
        except ValueError:
            pass
    return f"exited with code {code}"
