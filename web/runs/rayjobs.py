"""The service's Ray backend: a run is one job of the operator's Ray cluster (GRPO_WEB_RUNS_BACKEND=ray), submitted
and followed by the Ray cluster backend (grpo_runtime.clusters.ray.backend) through grpo_web.runs.cluster, as
`grpo launch --ray` and `grpo ray ...` are.

The run's folder RUNS_DIR/<id> is the job's folder (its ray_job.json, so `grpo ray status RUNS_DIR/<id>` answers
for a service run too) and the job's working_dir (only the config travels). What is the service's own: the
cluster is asked whether it can place the world size before the run is queued (GRPO-U011 / GRPO-U012 in the 422)
and again when it is submitted, with the operator's settings; the job's output is copied into RUN_DIR/run.log as
it grows, without Ray's actor prefixes, so the log, the metrics and the checkpoints (output_dir on a filesystem
the service shares with the cluster's nodes) are read as for a local run.

The cluster backend (and Ray) is imported when a Ray run is checked, submitted or followed, so a service with
another backend loads neither.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from grpo_web.runs import launcher
from grpo_web.runs.cluster import ClusterRunBackend
from grpo_web.runs.settings import RunsSettings
from grpo_web.runs.store import Run

LOG_COPIED = "log_copied"  # characters of the job's output already in run.log (kept in ray_job.json)
# Ray starts each line an actor prints with "(Machine pid=N, ip=A) " (coloured on a terminal); without it the
# run's log reads as a local run's.
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_ACTOR_PREFIX = re.compile(r"^\(Machine pid=\d+(?:, ip=[^)]*)?\) ", re.M)


def available() -> str | None:
    """Why the backend cannot work in this environment (Ray is the `ray` extra), or None."""
    try:
        import ray.job_submission  # noqa: F401
    except ImportError as error:
        return f"the ray backend needs Ray in the service's environment (pip install 'grpo-config[ray]'): {error}"
    return None


def plan(settings: RunsSettings, world_size: int, config):
    """Where a run of `world_size` would sit on the cluster now (a Placement, with the vLLM server a config in the
    open-r1 layout generates through), or why it cannot be submitted (a Refused, with its GRPO-U011 / GRPO-U012
    code)."""
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
    from grpo_runtime.clusters.ray.placement import Refused
    from grpo_schema.engine.policy import cluster_refusal

    found = plan(settings, result.world_size, result.config)
    if isinstance(found, Refused):
        return [cluster_refusal(result, found.code, found.message, found.fix)]
    return []


def request(run: Run, settings: RunsSettings):
    """The run placed on the cluster now, as the cluster backend's RayRequest. Raises ValueError with the coded
    diagnostic when the cluster cannot take it."""
    from grpo_runtime.clusters.ray import jobs
    from grpo_runtime.clusters.ray.placement import Refused
    from grpo_schema import check_text

    checked = check_text(
        run.config_text.encode(), world_size=run.world_size, allow_env=list(settings.runs_env_allowlist)
    )
    if checked.config is None:
        raise ValueError("the run's config no longer validates")
    placed = plan(settings, run.world_size, checked.config)
    if isinstance(placed, Refused):
        raise ValueError(str(placed))
    run_dir = Path(run.run_dir)
    sets = [f"{name}={launcher.yaml_string(value)}" for name, value in json.loads(run.overrides or "{}").items()]
    record = jobs.new_record(
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
    record["placed"] = placed.describe()  # for the run's log line (ray_job.json keeps it too)
    return jobs.RayRequest(run_dir, record, run.resume_checkpoint)


class RayBackend(ClusterRunBackend):
    """Runs as Ray jobs: submitted while fewer than runs_max_concurrent are (Ray has no queue: a job would wait
    for its placement group), asked about every runs_ray_poll_s, their output copied into RUN_DIR/run.log,
    cancelled with Ray's stop_job (the job's driver ends every machine)."""

    name, label, copies_log = "ray", "Ray", True

    def available(self) -> str | None:
        if not self.settings.runs_ray_address:
            return "the ray backend needs the cluster's address (GRPO_WEB_RUNS_RAY_ADDRESS=http://HEAD:8265)"
        return available()

    def refusals(self, result) -> list:
        return refusals(self.settings, result)

    def poll_s(self) -> float:
        return self.settings.runs_ray_poll_s

    def request(self, run: Run):
        return request(run, self.settings)

    def submitted_note(self, request, job_id: str) -> str:
        placed = request.record["placed"]
        return f"submitted to the Ray cluster at {self.settings.runs_ray_address} as job {job_id}: {placed}"

    def cleaned(self, text: str) -> str:
        return _ACTOR_PREFIX.sub("", _COLOUR.sub("", text))

    def copied(self, run: Run) -> int:  # kept in ray_job.json, as the service has always kept it
        from grpo_runtime.clusters.ray import jobs

        return int(jobs.load(Path(run.run_dir)).get(LOG_COPIED, 0))

    def set_copied(self, run: Run, count: int) -> None:
        from grpo_runtime.clusters.ray import jobs

        record = jobs.load(Path(run.run_dir))
        jobs.save(Path(run.run_dir), {**record, LOG_COPIED: count})
