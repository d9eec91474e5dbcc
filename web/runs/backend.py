"""Where a run trains, behind one interface: the service's run manager (grpo_web.runs.manager) submits, follows,
cancels and settles every run through a RunBackend, never through the name of one.

A backend turns a queued run into a job and answers for it: `submit` (the job's id, and a line for the run's log),
`status` (the job's state now, None when the backend no longer knows it), `logs` (bring what the job printed into
RUN_DIR/run.log), `cancel`, `outcome` (the run's end from the job's) and `resume` (a resumed run is a new run
submitted with the checkpoint it starts from: the same `submit`, nothing to add unless a backend says otherwise).
The store keeps one job's worth of columns for every backend: `backend` (the name), `job_id`, `job_state`,
`job_reason`.

Backends are registered by name (grpo_web.runs.backends); `GRPO_WEB_RUNS_BACKEND` names the one a service uses.
A cluster's run backend is grpo_web.runs.cluster's adapter over the cluster backend that `grpo launch --NAME` and
`grpo NAME ...` use too (grpo_runtime.clusters.backend): its submit, status, logs, cancel and outcome are written
once, there; this machine's (grpo_web.runs.local) is a RunBackend of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grpo_web.runs.settings import RunsSettings
    from grpo_web.runs.store import Run


class BackendUnavailable(RuntimeError):
    """The backend did not answer (a controller down, a cluster unreachable): ask again later, decide nothing."""


class SubmitRefused(RuntimeError):
    """The backend refused the run (sbatch's error, a cluster that cannot place it): the run fails with this."""


@dataclass(frozen=True)
class JobState:
    """A job as its backend reports it now: the backend's own state word and reason, whether it has started and
    ended, and its exit status once it has. The fields of grpo_runtime.clusters.backend.JobState, which a cluster's
    run backend returns; this one is for backends that are no cluster's, so a service that runs on this machine
    imports nothing of grpo_runtime."""

    state: str
    reason: str | None = None
    started: bool = True
    finished: bool = False
    exit_code: int | None = None
    note: str | None = None  # a line for the run's log when the state changes (None: nothing to say)
    detail: object = field(default=None, compare=False)  # the backend's own record of the job, for its `outcome`


@dataclass(frozen=True)
class Submitted:
    job_id: str
    state: str  # the job's first state (PENDING for a scheduler, RUNNING for a process started here)
    note: str  # for the run's log: where it went and how it is placed
    started: bool = False  # a process started here is running at once; a scheduler's job waits for its turn
    process: tuple[int, int | None] | None = None  # a process group of this machine: its pid and start time


class RunBackend:
    """The interface every backend implements (the defaults say what a backend may leave out)."""

    name: str = ""
    label: str = ""  # how the log names it ("Slurm", "Ray", "this machine")
    queues: bool = False  # True: every queued run is submitted at once and the backend's own queue decides when
    #                       it starts (Slurm); False: runs are submitted while fewer than runs_max_concurrent run

    def __init__(self, settings: RunsSettings):
        self.settings = settings

    def available(self) -> str | None:
        """Why this backend cannot work with these settings in this environment, or None (checked at start)."""
        return None

    def refusals(self, result) -> list:
        """Diagnostics that keep a checked config from being queued at all (a cluster that cannot place it)."""
        return []

    def poll_s(self) -> float:
        """How often the job is asked about (every supervisor tick by default)."""
        return 0.0

    def submit(self, run: Run) -> Submitted:  # raises SubmitRefused
        raise NotImplementedError

    def resume(self, run: Run) -> Submitted:
        """A run that starts from run.resume_checkpoint (the manager made it a new run of its parent's config)."""
        return self.submit(run)

    def status(self, run: Run) -> JobState | None:  # raises BackendUnavailable
        raise NotImplementedError

    def logs(self, run: Run) -> None:
        """Bring what the job printed since the last look into RUN_DIR/run.log (a job that writes there itself,
        as a process of this machine or a Slurm job on a shared file system does, needs nothing)."""

    def cancel(self, run: Run) -> str:
        """Ask the job to stop; returns the line for the run's log. The end itself comes from `status`."""
        raise NotImplementedError

    def outcome(self, run: Run, found: JobState) -> tuple[str, int | None, str | None]:
        """The run's end (succeeded, failed or cancelled; exit code; reason) from a finished job's state."""
        raise NotImplementedError

    def recorded_process(self, run: Run) -> tuple[int | None, int | None]:
        """For a running run without a recorded process: the process the job left a record of (pid, start)."""
        return None, None

    def forgotten(self, run: Run) -> str:
        """Why a run whose job the backend no longer knows failed."""
        return (
            f"{self.label or self.name} no longer knows job {run.job_id}; its last known state was "
            f"{run.job_state or 'unknown'}"
        )

    def reattach(self, run: Run) -> str | None:
        """After a service restart, before the run is followed again: the line for its log (None: none)."""
        return f"service restarted: following {self.label or self.name} job {run.job_id} again"
