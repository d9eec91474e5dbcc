"""The service's Slurm backend: a run is a batch job of the operator's cluster.

The run's folder gets the same batch script `grpo launch --slurm` writes (grpo_runtime.clusters.slurm.script), with every
sbatch option from the operator's settings; the client chose only the config and its world size, which the
policy (GRPO-X008) has already matched to whole nodes. The job's output file is the run's log, so logs, metrics
and checkpoints are read exactly as for a local run. The job is followed by its id (stored before anyone is
told), so a restarted service re-attaches to it; its end comes from Slurm with Slurm's state and reason.

The engine (grpo_runtime.clusters.slurm: standard library only) is imported when a Slurm run is submitted or followed, so
a service that runs locally loads nothing of grpo_runtime.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from grpo_schema import check_text
from grpo_schema.engine.policy import slurm_nodes
from grpo_web.runs import launcher
from grpo_web.runs.backend import BackendUnavailable, JobState, RunBackend, SubmitRefused, Submitted
from grpo_web.runs.settings import RunsSettings
from grpo_web.runs.store import Run

if TYPE_CHECKING:
    from grpo_runtime.clusters.slurm.layout import Layout
    from grpo_runtime.clusters.slurm.scheduler import JobStatus
    from grpo_runtime.clusters.slurm.script import JobSpec


class SlurmError(RuntimeError):
    """Slurm refused a command or did not answer; the message is Slurm's own."""


def _scheduler():
    from grpo_runtime.clusters.slurm import scheduler

    return scheduler


def layout_for(settings: RunsSettings, world_size: int, config) -> Layout:
    """Whole nodes of the operator's shape, or one node holding a smaller run."""
    from grpo_runtime.clusters.slurm.layout import Layout, wants_vllm_server

    per_node = settings.runs_slurm_node_processes
    nodes = slurm_nodes(world_size, per_node)
    if nodes is None:  # the policy refused it at POST; a changed setting since then lands here
        raise ValueError(f"world size {world_size} is not a whole number of nodes of {per_node} processes")
    per_node = min(per_node, world_size)
    tasks = settings.runs_slurm_tasks_per_node if per_node % settings.runs_slurm_tasks_per_node == 0 else 1
    return Layout(nodes, per_node, tasks, settings.runs_slurm_gpus_per_node, wants_vllm_server(config))


def job_spec(run: Run, settings: RunsSettings) -> JobSpec:
    from grpo_runtime.clusters.slurm.script import JobSpec

    allow_env = tuple(settings.runs_env_allowlist)
    result = check_text(run.config_text.encode(), world_size=run.world_size, allow_env=list(allow_env))
    if result.config is None:
        raise ValueError("the run's config no longer validates")
    config, run_dir = result.config, Path(run.run_dir)
    return JobSpec(
        layout=layout_for(settings, run.world_size, config),
        run_dir=run_dir,
        config=launcher.config_file(run_dir, run.config_format),
        output_dir=run.output_dir,
        python=sys.executable,
        workdir=run_dir,
        job_name=f"grpo-{run.id}",
        partition=settings.runs_slurm_partition,
        account=settings.runs_slurm_account,
        qos=settings.runs_slurm_qos,
        time=settings.runs_slurm_time,
        cpus_per_task=settings.runs_slurm_cpus_per_task,
        requeue=settings.runs_slurm_requeue,
        sbatch_args=tuple(settings.runs_slurm_sbatch_args),
        allow_env=allow_env,
        resume=run.resume_checkpoint,
        main_process_port=result.launch.get("main_process_port"),
        model=str(config.model_name_or_path),
        model_revision=getattr(config, "model_revision", None),
        vllm_server_port=int(getattr(config, "vllm_server_port", 8000) or 8000),
        trust_remote_code=bool(getattr(config, "trust_remote_code", False)),
    )


def submit(run: Run, settings: RunsSettings) -> tuple[str, JobSpec]:
    """Write RUN_DIR/job.sbatch and submit it. sbatch gets the child environment (no GRPO_WEB_* secrets); the
    job inherits it, as a local run does. Raises SlurmError or ValueError with what went wrong."""
    from grpo_runtime.clusters.slurm.script import write

    spec = job_spec(run, settings)
    script = write(spec)
    return _calling(lambda scheduler: scheduler.submit(script, launcher.child_environment())), spec


def status(run: Run) -> JobStatus | None:
    return _calling(lambda scheduler: scheduler.query(run.job_id))


def cancel(run: Run) -> None:
    _calling(lambda scheduler: scheduler.cancel(run.job_id))


def _calling(command):
    scheduler = _scheduler()
    try:
        return command(scheduler)
    except scheduler.SlurmError as error:
        raise SlurmError(str(error)) from error


def outcome(found: JobStatus, cancel_requested: bool) -> tuple[str, int | None, str | None]:
    """The run's end (state, exit code, reason) from the job's, with Slurm's own state and reason in words."""
    if found.state == "COMPLETED":
        return "succeeded", found.exit_code or 0, None
    if found.state == "CANCELLED":
        return "cancelled", found.exit_code, ("cancelled on request; " if cancel_requested else "") + found.describe()
    reason = found.describe()
    if found.killed:
        reason += "; resume it from its last complete checkpoint"
    return "failed", found.exit_code, reason


def forgotten(run: Run) -> str:
    return (
        f"Slurm no longer knows job {run.job_id} and has no accounting record of it; its last known "
        f"state was {run.job_state or 'unknown'}"
    )


class SlurmBackend(RunBackend):
    """Runs as batch jobs of the operator's cluster: every queued run is submitted at once (Slurm's queue decides
    when it starts), asked about every runs_slurm_poll_s, cancelled with scancel (Slurm kills what is left after
    its KillWait). The job writes RUN_DIR/run.log itself, on the shared file system."""

    name, label, queues = "slurm", "Slurm", True

    def poll_s(self) -> float:
        return self.settings.runs_slurm_poll_s

    def submit(self, run: Run) -> Submitted:
        try:
            job_id, spec = submit(run, self.settings)
        except (SlurmError, ValueError, OSError) as error:
            raise SubmitRefused(f"the run could not be submitted to Slurm: {error}") from error
        return Submitted(
            job_id,
            "PENDING",
            f"submitted to Slurm as job {job_id}: {spec.layout.describe()} (script {spec.script_path})",
        )

    def status(self, run: Run) -> JobState | None:
        try:
            found = status(run)
        except SlurmError as error:
            raise BackendUnavailable(str(error)) from error
        if found is None:
            return None
        return JobState(
            found.state,
            found.reason,
            started=not found.pending,
            finished=found.finished,
            exit_code=found.exit_code,
            note=found.describe(),
            detail=found,
        )

    def cancel(self, run: Run) -> str:
        try:
            cancel(run)
        except SlurmError as error:  # e.g. the job ended meanwhile: the next look settles the run
            return f"cancel requested: {error}"
        return f"cancel requested: scancel {run.job_id}"

    def outcome(self, run: Run, found: JobState) -> tuple[str, int | None, str | None]:
        return outcome(found.detail, run.cancel_requested_at is not None)

    def forgotten(self, run: Run) -> str:
        return forgotten(run)
