"""The service's runs on a cluster: one RunBackend over any cluster backend (grpo_runtime.clusters.backend), so a
cluster's submit, status, logs, cancel and outcome are written once, in grpo_runtime.clusters, and the service
and the command line (`grpo launch --NAME`, `grpo NAME ...`) drive the same ones.

A service run is the cluster's Job (RUN_DIR/<id>, the store's job_id): `grpo NAME status RUNS_DIR/<id>` answers
for it. What the service adds is its own: the request for a run (`request`: the operator's settings decide the
job's shape, the client only the config and its world size), the line for the run's log, and, for a cluster whose
jobs do not write RUN_DIR/run.log themselves, copying their output there (`logs`).

The cluster backend (and grpo_runtime) is imported when a cluster run is checked, submitted or followed, so a
service that runs on this machine loads nothing of grpo_runtime.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from grpo_web.runs import launcher
from grpo_web.runs.backend import BackendUnavailable, JobState, RunBackend, SubmitRefused, Submitted
from grpo_web.runs.store import Run

if TYPE_CHECKING:
    from grpo_runtime.clusters.backend import ClusterBackend, Job


class ClusterRunBackend(RunBackend):
    """A RunBackend whose jobs are those of the cluster backend of the same name
    (grpo_runtime.clusters.backends)."""

    queues = False
    copies_log = False  # True: the job's output is copied into RUN_DIR/run.log (its own log is elsewhere)
    COPIED = ".log_copied"  # characters of the job's output already in run.log (so a restart copies none twice)

    def __init__(self, settings):
        super().__init__(settings)
        self._cluster: ClusterBackend | None = None

    @property
    def cluster(self) -> ClusterBackend:
        if self._cluster is None:
            from grpo_runtime.clusters.backends import backend

            self._cluster = backend(self.name)
        return self._cluster

    # --- what the service adds ------------------------------------------------------------------------------------
    def request(self, run: Run) -> Any:
        """The cluster's request for this run (raises ValueError with why it cannot be submitted)."""
        raise NotImplementedError

    def submitted_note(self, request: Any, job_id: str) -> str:
        return f"submitted to {self.label} as job {job_id}"

    def cleaned(self, text: str) -> str:
        """The job's output as the run's log shows it."""
        return text

    def copied(self, run: Run) -> int:
        try:
            return int((Path(run.run_dir) / self.COPIED).read_text())
        except (OSError, ValueError):
            return 0

    def set_copied(self, run: Run, count: int) -> None:
        (Path(run.run_dir) / self.COPIED).write_text(str(count))

    def job(self, run: Run) -> Job:
        from grpo_runtime.clusters.backend import Job

        return Job(Path(run.run_dir), run.job_id)

    # --- the run backend, over the cluster's ----------------------------------------------------------------------
    def submit(self, run: Run) -> Submitted:
        """The cluster's client runs in the child environment (no GRPO_WEB_* secrets); the job inherits it, as a
        local run does."""
        try:
            request = self.request(run)
            job_id = self.cluster.submit(request, launcher.child_environment())
        except (ValueError, OSError, *self.cluster.errors) as error:
            raise SubmitRefused(f"the run could not be submitted to {self.label}: {error}") from error
        return Submitted(job_id, "PENDING", self.submitted_note(request, job_id))

    def status(self, run: Run) -> JobState | None:
        """The cluster's JobState (grpo_runtime.clusters.backend.JobState: the same fields as the service's)."""
        try:
            return self.cluster.status(self.job(run))
        except self.cluster.errors as error:
            raise BackendUnavailable(self.cluster.error_text(error)) from error

    def logs(self, run: Run) -> None:
        """Append what the job printed since the last look to RUN_DIR/run.log, whole lines only (a line still
        being written waits for the next look)."""
        if not self.copies_log:
            return
        try:
            text, copied = self.cluster.logs(self.job(run)), self.copied(run)
        except self.cluster.errors as error:
            raise BackendUnavailable(self.cluster.error_text(error)) from error
        end = text.rfind("\n", copied) + 1
        if end <= copied:
            return
        with open(Path(run.run_dir) / launcher.LOG_FILE, "ab") as log:
            log.write(self.cleaned(text[copied:end]).encode("utf-8", "replace"))
        self.set_copied(run, end)

    def cancel(self, run: Run) -> str:
        try:
            return self.cluster.cancel(self.job(run))
        except self.cluster.errors as error:  # e.g. the job ended meanwhile: the next look settles the run
            return f"cancel requested: {self.cluster.error_text(error)}"

    def outcome(self, run: Run, found: JobState) -> tuple[str, int | None, str | None]:
        return self.cluster.outcome(found, run.cancel_requested_at is not None)

    def forgotten(self, run: Run) -> str:
        return self.cluster.forgotten(self.job(run), run.job_state)
