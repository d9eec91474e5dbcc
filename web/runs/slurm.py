"""The service's Slurm backend: a run is a batch job of the operator's cluster, submitted and followed by the
Slurm cluster backend (grpo_runtime.clusters.slurm.backend) through grpo_web.runs.cluster, as `grpo launch --slurm`
and `grpo slurm ...` are.

What is the service's own is the job's shape: the run's folder gets the batch script `grpo launch --slurm` writes,
with every sbatch option from the operator's settings; the client chose only the config and its world size, which
the policy (GRPO-X008) has already matched to whole nodes. The job's output file is the run's log, so logs,
metrics and checkpoints are read exactly as for a local run. The job is followed by its id (stored before anyone
is told), so a restarted service re-attaches to it; its end comes from Slurm with Slurm's state and reason.

The engine (grpo_runtime.clusters.slurm: standard library only) is imported when a Slurm run is submitted or
followed, so a service that runs locally loads nothing of grpo_runtime.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from grpo_schema import check_text
from grpo_schema.engine.policy import slurm_nodes
from grpo_web.runs import launcher
from grpo_web.runs.cluster import ClusterRunBackend
from grpo_web.runs.settings import RunsSettings
from grpo_web.runs.store import Run

if TYPE_CHECKING:
    from grpo_runtime.clusters.slurm.layout import Layout
    from grpo_runtime.clusters.slurm.script import JobSpec


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
    # the paths the service resolved against its folder (model, datasets): the job works in RUN_DIR, where the
    # posted text's relative paths would name nothing, so they go in as `--set` values as a local run's do
    resolved = {name: value for name, value in json.loads(run.overrides or "{}").items() if name != "output_dir"}
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
        model=str(resolved.get("model_name_or_path", config.model_name_or_path)),
        model_revision=getattr(config, "model_revision", None),
        vllm_server_port=int(getattr(config, "vllm_server_port", 8000) or 8000),
        trust_remote_code=bool(getattr(config, "trust_remote_code", False)),
        overrides=tuple(f"{name}={launcher.yaml_string(value)}" for name, value in resolved.items()),
    )


class SlurmBackend(ClusterRunBackend):
    """Runs as batch jobs of the operator's cluster: every queued run is submitted at once (Slurm's queue decides
    when it starts), asked about every runs_slurm_poll_s, cancelled with scancel (Slurm kills what is left after
    its KillWait). The job writes RUN_DIR/run.log itself, on the shared file system."""

    name, label, queues = "slurm", "Slurm", True

    def poll_s(self) -> float:
        return self.settings.runs_slurm_poll_s

    def request(self, run: Run) -> JobSpec:
        return job_spec(run, self.settings)

    def submitted_note(self, request: JobSpec, job_id: str) -> str:
        return f"submitted to Slurm as job {job_id}: {request.layout.describe()} (script {request.script_path})"
