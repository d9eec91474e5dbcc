"""The service's Ray backend: a run is one job of the operator's Ray cluster (GRPO_WEB_RUNS_BACKEND=ray).

Placement, submission and following are grpo_runtime.clusters.ray.cli's, exactly as for `grpo launch --ray`: the
run's folder RUNS_DIR/<id> is the job's folder (its ray_job.json, so `grpo ray status RUNS_DIR/<id>` answers for a
service run too) and the job's working_dir (only the config travels). The cluster is asked whether it can place
the world size before the run is queued (GRPO-U011 / GRPO-U012 in the 422) and again when it is submitted. The
job's state, exit reason and output come from Ray's Jobs API; its output is copied into RUN_DIR/run.log as it
grows, so the log, the metrics and the checkpoints (output_dir on a filesystem the service shares with the
cluster's nodes) are read as for a local run.

grpo_runtime.clusters.ray.cli (and Ray) is imported when a Ray run is checked, submitted or followed, so a service
with another backend loads neither.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from grpo_web.runs import launcher
from grpo_web.runs.backend import BackendUnavailable, JobState, RunBackend, SubmitRefused, Submitted
from grpo_web.runs.settings import RunsSettings
from grpo_web.runs.store import Run

FINISHED = {"SUCCEEDED", "FAILED", "STOPPED"}
LOG_COPIED = "log_copied"  # characters of the job's output already in run.log (kept in ray_job.json)
# Ray starts each line an actor prints with "(Machine pid=N, ip=A) " (coloured on a terminal); without it the
# run's log reads as a local run's.
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_ACTOR_PREFIX = re.compile(r"^\(Machine pid=\d+(?:, ip=[^)]*)?\) ", re.M)


class RayUnavailable(RuntimeError):
    """Ray's Jobs API did not answer, or refused a request; the message is Ray's own."""


@dataclass(frozen=True)
class JobStatus:
    job_id: str
    state: str  # Ray's: PENDING, RUNNING, SUCCEEDED, FAILED, STOPPED
    message: str | None
    exit_code: int | None

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    def describe(self) -> str:
        first = (self.message or "").strip().splitlines()
        return f"Ray job {self.job_id} {self.state}" + (f": {first[0]}" if first else "")


def _cluster():
    from grpo_runtime.clusters.ray import cli as raycluster

    return raycluster  # it re-exports rayplace's Refused and Placement


def available() -> str | None:
    """Why the backend cannot work in this environment (Ray is the `ray` extra), or None."""
    try:
        import ray.job_submission  # noqa: F401
    except ImportError as error:
        return f"the ray backend needs Ray in the service's environment (pip install 'grpo-config[ray]'): {error}"
    return None


def plan(settings: RunsSettings, world_size: int, config):
    """Where a run of `world_size` would sit on the cluster now (rayplace.Placement, with the vLLM server a config
    in the open-r1 layout generates through), or why it cannot be submitted (rayplace.Refused, with its GRPO-U011 /
    GRPO-U012 code)."""
    from grpo_runtime.clusters.ray import placement as rayplace

    server = rayplace.server_for(config, python(settings), settings.runs_ray_vllm_gpus)
    return rayplace.plan(
        settings.runs_ray_address,
        world_size,
        settings.runs_ray_cpus_per_process,
        settings.runs_ray_gpus_per_process,
        settings.runs_ray_processes_per_node,
        server,
    )


def python(settings: RunsSettings) -> str:
    return settings.runs_ray_python or sys.executable


def refusals(settings: RunsSettings, result) -> list:
    """The diagnostic that keeps a run of this checked config from being queued: the cluster not reached or
    unable to place its world size. Empty when it can (the check is repeated at submission)."""
    from grpo_schema.engine.policy import cluster_refusal

    found = plan(settings, result.world_size, result.config)
    if isinstance(found, _cluster().Refused):
        return [cluster_refusal(result, found.code, found.message, found.fix)]
    return []


def submit(run: Run, settings: RunsSettings) -> tuple[str, str]:
    """Place and submit the run as one Ray job: (the job id, how it is placed). Raises ValueError with the coded
    diagnostic when the cluster cannot take it, RayUnavailable when it refused the job."""
    raycluster = _cluster()
    from grpo_schema import check_text

    checked = check_text(
        run.config_text.encode(), world_size=run.world_size, allow_env=list(settings.runs_env_allowlist)
    )
    if checked.config is None:
        raise ValueError("the run's config no longer validates")
    placed = plan(settings, run.world_size, checked.config)
    if isinstance(placed, raycluster.Refused):
        raise ValueError(str(placed))
    run_dir = Path(run.run_dir)
    sets = [f"{name}={launcher.yaml_string(value)}" for name, value in json.loads(run.overrides or "{}").items()]
    record = raycluster.new_record(
        settings.runs_ray_address,
        launcher.config_file(run_dir, run.config_format).name,
        placed,
        python(settings),
        run.output_dir,
        sets,
        list(settings.runs_env_allowlist),
        checked.launch.get("main_process_port"),
        settings.runs_ray_placement_timeout_s,
    )
    try:
        return raycluster.submit(run_dir, record, resume=run.resume_checkpoint), placed.describe()
    except raycluster.RayJobError as error:
        raise RayUnavailable(str(error)) from error


def status(run: Run) -> JobStatus | None:
    """The job's state as Ray reports it; None when the cluster answers but no longer knows the job (its head
    was restarted). Raises RayUnavailable when it does not answer."""
    try:
        found = _cluster().describe(Path(run.run_dir))
    except Exception as error:  # whatever Ray raised, the supervisor asks again later
        if "does not exist" in str(error):
            return None
        raise RayUnavailable(f"{type(error).__name__}: {error}") from error
    return JobStatus(found["job_id"], found["state"], found["reason"], found["exit_code"])


def cancel(run: Run) -> None:
    try:
        _cluster().stop(Path(run.run_dir))
    except Exception as error:
        raise RayUnavailable(f"{type(error).__name__}: {error}") from error


def copy_output(run: Run) -> int:
    """Append what the job printed since the last look to RUN_DIR/run.log (Ray's API gives the whole output; the
    count copied so far is kept in ray_job.json, so a restarted service copies nothing twice). Returns the
    characters added."""
    raycluster = _cluster()
    run_dir = Path(run.run_dir)
    try:
        text = raycluster.logs(run_dir)
        record = raycluster.load(run_dir)
    except Exception as error:
        raise RayUnavailable(f"{type(error).__name__}: {error}") from error
    copied = int(record.get(LOG_COPIED, 0))
    if len(text) <= copied:
        return 0
    new = text[copied:]
    end = new.rfind("\n") + 1  # whole lines only: a line still being written waits for the next look
    if end == 0:
        return 0
    with open(run_dir / launcher.LOG_FILE, "ab") as log:
        log.write(_ACTOR_PREFIX.sub("", _COLOUR.sub("", new[:end])).encode("utf-8", "replace"))
    record[LOG_COPIED] = copied + end
    (run_dir / raycluster.RECORD).write_text(json.dumps(record, indent=2))
    return end


def outcome(found: JobStatus, cancel_requested: bool) -> tuple[str, int | None, str | None]:
    """The run's end (state, exit code, reason) from the job's, with Ray's state and message in words."""
    if found.state == "SUCCEEDED":
        return "succeeded", found.exit_code or 0, None
    if found.state == "STOPPED":
        return (
            "cancelled",
            found.exit_code,
            ("cancelled on request; " if cancel_requested else "stopped outside the service (ray job stop); ")
            + found.describe(),
        )
    return "failed", found.exit_code, found.describe() + "; resume it from its last complete checkpoint"


def forgotten(run: Run) -> str:
    return (
        f"the Ray cluster no longer knows job {run.job_id} (its head was restarted?); its last known state "
        f"was {run.job_state or 'unknown'}; resume it from its last complete checkpoint"
    )


class RayBackend(RunBackend):
    """Runs as Ray jobs: submitted while fewer than runs_max_concurrent are (Ray has no queue: a job would wait
    for its placement group), asked about every runs_ray_poll_s, their output copied into RUN_DIR/run.log,
    cancelled with Ray's stop_job (the job's driver ends every machine)."""

    name, label = "ray", "Ray"

    def available(self) -> str | None:
        if not self.settings.runs_ray_address:
            return "the ray backend needs the cluster's address (GRPO_WEB_RUNS_RAY_ADDRESS=http://HEAD:8265)"
        return available()

    def refusals(self, result) -> list:
        return refusals(self.settings, result)

    def poll_s(self) -> float:
        return self.settings.runs_ray_poll_s

    def submit(self, run: Run) -> Submitted:
        try:
            job_id, placed = submit(run, self.settings)
        except (RayUnavailable, ValueError, OSError) as error:
            raise SubmitRefused(f"the run could not be submitted to Ray: {error}") from error
        return Submitted(
            job_id,
            "PENDING",
            f"submitted to the Ray cluster at {self.settings.runs_ray_address} as job {job_id}: {placed}",
        )

    def status(self, run: Run) -> JobState | None:
        try:
            found = status(run)
        except RayUnavailable as error:
            raise BackendUnavailable(str(error)) from error
        if found is None:
            return None
        return JobState(
            found.state,
            found.message,
            started=found.state != "PENDING",
            finished=found.finished,
            exit_code=found.exit_code,
            note=found.describe(),
            detail=found,
        )

    def logs(self, run: Run) -> None:
        try:
            copy_output(run)
        except RayUnavailable as error:
            raise BackendUnavailable(str(error)) from error

    def cancel(self, run: Run) -> str:
        try:
            cancel(run)
        except RayUnavailable as error:  # e.g. the job ended meanwhile: the next look settles the run
            return f"cancel requested: {error}"
        return f"cancel requested: Ray asked to stop job {run.job_id}"

    def outcome(self, run: Run, found: JobState) -> tuple[str, int | None, str | None]:
        return outcome(found.detail, run.cancel_requested_at is not None)

    def forgotten(self, run: Run) -> str:
        return forgotten(run)
