"""The operator's settings for runs (GRPO_WEB_RUNS*, GRPO_WEB_TOKEN), mixed into grpo_web.settings.Settings.

Everything a client could use to run its own code is off by default; each allowance is a separate switch.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from grpo_schema.engine.policy import ServicePolicy

# Variables that only tune libraries; none changes which code runs.
DEFAULT_ENV_ALLOWLIST = [
    "TOKENIZERS_PARALLELISM",
    "OMP_NUM_THREADS",
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "TRANSFORMERS_VERBOSITY",
    "WANDB_MODE",
]
# Reward functions shipped with grpo_runtime that are not TRL built-ins (the demo's reward).
DEFAULT_REWARD_IMPORTS = ["grpo_runtime.data.reward_library.target_word_reward"]


class RunsSettings(BaseSettings):
    runs: bool = Field(False, description="start training runs over HTTP (POST /api/v1/runs); off: 403")
    token: SecretStr | None = Field(
        None,
        description="bearer token for the runs endpoints (generated and printed "
        "at start when runs are on and none is set)",
    )
    runs_dir: Path = Field(Path("grpo-runs"), description="where runs live: their output_dir, logs and the database")
    runs_db: Path | None = Field(None, description="SQLite file of the runs (default RUNS_DIR/runs.sqlite3)")
    runs_max_concurrent: int = Field(1, ge=1, description="runs training at the same time; more wait in the queue")
    runs_max_queued: int = Field(100, ge=1, description="runs waiting in the queue at most (429 above)")
    runs_max_processes: int = Field(1, ge=1, description="largest world size (training processes) of one run")
    runs_cancel_grace_s: float = Field(10.0, ge=0, description="seconds between SIGTERM and SIGKILL on cancel")
    runs_poll_s: float = Field(0.5, gt=0, description="how often run processes and metrics are looked at")
    runs_follow_max_s: float = Field(
        300.0, gt=0, description="longest ?follow=true log stream; clients reconnect with ?offset="
    )
    runs_env_allowlist: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ENV_ALLOWLIST),
        description="env: variables a posted config may set (JSON list)",
    )
    runs_reward_imports: list[str] = Field(
        default_factory=lambda: list(DEFAULT_REWARD_IMPORTS),
        description="dotted reward_funcs paths a posted config may use",
    )
    runs_allow_reward_imports: bool = Field(False, description="allow any dotted reward_funcs path")
    runs_allow_trust_remote_code: bool = Field(False, description="allow trust_remote_code: true")
    runs_allow_push_to_hub: bool = Field(
        False, description="allow push_to_hub: true (runs push with the service's own Hub token, HF_TOKEN)"
    )
    runs_prepare_demo: bool = Field(
        True,
        description="write the Demo recipe's demo/model and demo/data (`grpo demo "
        "demo`) in the service's folder when runs start and they are "
        "missing",
    )
    runs_allow_outside_dir: bool = Field(
        False, description="allow output_dir and resume_from_checkpoint anywhere (absolute paths, '..')"
    )

    # Slurm: runs become batch jobs of the operator's cluster (grpo_web.runs.slurm). Clients choose only the world
    # size; every sbatch option is the operator's.
    runs_backend: str = Field(
        "local",
        pattern=r"^[a-z][a-z0-9_-]*$",
        description="where runs train: 'local' processes of this machine, 'slurm' jobs "
        "(sbatch), 'ray' jobs (Ray's Jobs API), or a backend registered in "
        "grpo_web.runs.backends",
    )
    runs_slurm_partition: str | None = Field(None, description="sbatch --partition")
    runs_slurm_account: str | None = Field(None, description="sbatch --account")
    runs_slurm_qos: str | None = Field(None, description="sbatch --qos")
    runs_slurm_time: str | None = Field(None, description="sbatch --time: the time limit of every run's job")
    runs_slurm_gpus_per_node: int = Field(0, ge=0, description="GPUs per node (0: CPU nodes)")
    runs_slurm_processes_per_node: int | None = Field(
        None, ge=1, description="training processes per node (default: the GPUs per node, else 1)"
    )
    runs_slurm_tasks_per_node: int = Field(1, ge=1, description="accelerate launchers (srun tasks) per node")
    runs_slurm_cpus_per_task: int | None = Field(None, ge=1, description="sbatch --cpus-per-task")
    runs_slurm_max_nodes: int = Field(1, ge=1, description="training nodes of one run at most")
    runs_slurm_requeue: bool = Field(
        False, description="let Slurm requeue a preempted run (it resumes from its newest complete checkpoint)"
    )
    runs_slurm_sbatch_args: list[str] = Field(
        default_factory=list, description='more #SBATCH options for every run (JSON list, e.g. ["--constraint=h100"])'
    )
    runs_slurm_poll_s: float = Field(5.0, gt=0, description="how often Slurm is asked about each job")

    # Ray: runs become jobs of the operator's Ray cluster (grpo_web.runs.rayjobs). Clients choose only the world size.
    runs_ray_address: str | None = Field(
        None,
        description="the Ray cluster's dashboard (Jobs API) address, e.g. "
        "http://HEAD:8265 (required with the ray backend)",
    )
    runs_ray_cpus_per_process: float = Field(1.0, ge=0, description="CPUs each training process asks of Ray")
    runs_ray_gpus_per_process: float | None = Field(
        None, ge=0, description="GPUs each training process asks (default: 1 on a cluster with GPUs, else 0)"
    )
    runs_ray_processes_per_node: int | None = Field(
        None,
        ge=1,
        description="training processes per accelerate "
        "machine, one placement bundle on one node (default: the most "
        "the cluster's nodes hold)",
    )
    runs_ray_vllm_gpus: int | None = Field(
        None,
        ge=0,
        description="GPUs of the vLLM server of a config in the "
        "open-r1 layout (default: its tensor parallel size on a cluster with "
        "GPUs, else 0)",
    )
    runs_ray_python: str | None = Field(
        None,
        description="the interpreter with grpo-config's dependencies on the "
        "cluster's nodes (default: the service's own)",
    )
    runs_ray_placement_timeout_s: float = Field(
        600.0, gt=0, description="seconds a job waits for its placement group before it fails"
    )
    runs_ray_poll_s: float = Field(2.0, gt=0, description="how often Ray is asked about each job and its output")

    @property
    def runs_slurm_node_processes(self) -> int:
        return self.runs_slurm_processes_per_node or self.runs_slurm_gpus_per_node or 1

    @property
    def runs_db_path(self) -> Path:
        return (self.runs_db or self.runs_dir / "runs.sqlite3").expanduser().resolve()

    def service_policy(self) -> ServicePolicy:
        return ServicePolicy(
            runs_dir=self.runs_dir.expanduser().resolve(),
            reward_imports=frozenset(self.runs_reward_imports),
            allow_reward_imports=self.runs_allow_reward_imports,
            env_allowlist=frozenset(self.runs_env_allowlist),
            allow_trust_remote_code=self.runs_allow_trust_remote_code,
            allow_outside_runs_dir=self.runs_allow_outside_dir,
            max_processes=self.runs_max_processes,
            slurm_node_processes=self.runs_slurm_node_processes if self.runs_backend == "slurm" else None,
            slurm_max_nodes=self.runs_slurm_max_nodes,
            allow_push_to_hub=self.runs_allow_push_to_hub,
        )
