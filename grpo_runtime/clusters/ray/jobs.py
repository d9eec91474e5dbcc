"""A run's Ray job as plain data: its record (RUN_DIR/ray_job.json: the cluster's address, the placement, the
config and its overrides, and one entry per submission), the driver's entrypoint, and the submission through
Ray's Jobs API with the project's packages (py_modules) and the job's folder (working_dir, where only the config
travels). grpo_runtime.clusters.ray.backend submits and follows jobs with these; Ray is imported when a cluster is
asked.
"""

from __future__ import annotations

import json
import os
import shlex
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from grpo_runtime.clusters.ray.placement import Placement

RECORD = "ray_job.json"
FINISHED = {"SUCCEEDED", "FAILED", "STOPPED"}
# Set in the submitting environment, passed on to the job: where models come from and how libraries behave.
FORWARDED_ENV = (
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_ENDPOINT",
    "HF_HOME",
    "TRANSFORMERS_VERBOSITY",
    "TOKENIZERS_PARALLELISM",
    "OMP_NUM_THREADS",
)


@dataclass
class RayRequest:
    """One job of a run: its folder (the config in it), its record (new_record), the checkpoint it resumes from."""

    run_dir: Path
    record: dict
    resume: str | None = None


def new_record(
    address: str,
    config: str,
    placed: Placement,
    python: str,
    output_dir: str,
    overrides: list[str],
    allow_env: list[str],
    port: int | None = None,
    placement_timeout: float = 600.0,
) -> dict:
    """What a run's jobs are submitted from (RUN_DIR/ray_job.json): `jobs` gets one entry per submission."""
    return {
        "address": address,
        "config": config,
        "world_size": placed.machines * placed.per_machine,
        "machines": placed.machines,
        "processes_per_machine": placed.per_machine,
        "cpus_per_process": placed.cpus,
        "gpus_per_process": placed.gpus,
        "python": python,
        "output_dir": output_dir,
        "overrides": list(overrides),
        "allow_env": list(allow_env),
        "port": port,
        "placement_timeout": placement_timeout,
        "server": placed.server,
        "jobs": [],
    }


def new_run_dir(output_dir: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for n in range(1000):
        candidate = output_dir / "ray" / (stamp if n == 0 else f"{stamp}-{n}")
        if not candidate.exists():
            return candidate
    raise OSError(f"no free job folder under {output_dir / 'ray'}")


def entrypoint(record: dict, resume: str | None) -> str:
    """The driver (grpo_runtime.clusters.ray.driver) with its machines, then the `grpo launch` every machine runs."""
    python = record["python"]
    machines = record.get("machines", 1)  # a record written before runs were split over machines
    per_machine = record.get("processes_per_machine", record["world_size"])
    words = [
        python,
        "-m",
        "grpo_runtime.clusters.ray.driver",
        "--machines",
        str(machines),
        "--cpus",
        f"{per_machine * record['cpus_per_process']:g}",
        "--gpus",
        f"{per_machine * record['gpus_per_process']:g}",
        "--placement-timeout",
        f"{record.get('placement_timeout', 600):g}",
        *(["--port", str(record["port"])] if record.get("port") else []),
        *server_arguments(record.get("server")),
        "--",
        python,
        "-m",
        "grpo_schema",
        "launch",
        record["config"],
        "--num-processes",
        str(record["world_size"]),
        "--set",
        f"output_dir={json.dumps(record['output_dir'])}",
    ]
    if resume:
        words += ["--set", f"resume_from_checkpoint={json.dumps(resume)}"]
    for override in record["overrides"]:
        words += ["--set", override]
    for name in record["allow_env"]:
        words += ["--allow-env", name]
    return " ".join(shlex.quote(word) for word in words)


def server_arguments(server: dict | None) -> list[str]:
    """The driver's options for the vLLM server's bundle and command (the open-r1 layout)."""
    if not server:
        return []
    return [
        "--server-cpus",
        f"{server['cpus']:g}",
        "--server-gpus",
        f"{server['gpus']:g}",
        "--server-port",
        str(server["port"]),
        "--server-timeout",
        f"{server['timeout']:g}",
        "--server-command",
        json.dumps(server["command"]),
    ]


def client(address: str):
    from ray.job_submission import JobSubmissionClient

    return JobSubmissionClient(address)


class RayJobError(RuntimeError):
    """The cluster refused a submission or did not answer; the message says which and Ray's words."""


def job_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The library settings of the submitting environment (`environ`, else this process's) that the job's
    processes should share (the cluster's own environment is theirs otherwise). Never a token: a runtime
    environment is shown by Ray's dashboard."""
    environ = os.environ if environ is None else environ
    env = {name: environ[name] for name in FORWARDED_ENV if name in environ}
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    return env


def submit(request: RayRequest, env: dict[str, str] | None = None) -> str:
    """Submit one job of the run (RUN_DIR's config, as the job's working_dir) and record it in RUN_DIR/ray_job.json;
    its id. Raises RayJobError."""
    import grpo_runtime
    import grpo_schema

    run_dir, record = request.run_dir, request.record
    modules = [str(Path(grpo_schema.__file__).parent), str(Path(grpo_runtime.__file__).parent)]
    # the job's working_dir is RUN_DIR: only its config travels (a service's run folder holds the log and output)
    excludes = [f"/{entry.name}" for entry in run_dir.iterdir() if entry.name != record["config"]]
    submission = f"grpo-{run_dir.name}-{len(record['jobs'])}-{uuid.uuid4().hex[:8]}"  # unique in the cluster
    try:
        job_id = client(record["address"]).submit_job(
            entrypoint=entrypoint(record, request.resume),
            submission_id=submission,
            runtime_env={
                "working_dir": str(run_dir),
                "py_modules": modules,
                "excludes": excludes,
                "env_vars": job_environment(env),
            },
            metadata={"grpo_run_dir": str(run_dir), "world_size": str(record["world_size"])},
        )
    except Exception as error:  # a refusal by the cluster is reported, not raised
        raise RayJobError(f"the cluster at {record['address']} refused the job: {error}") from error
    record["jobs"].append({"submission_id": job_id, "resume": request.resume})
    save(run_dir, record)
    return job_id


def load(run_dir: Path) -> dict:
    return json.loads((run_dir / RECORD).read_text())


def save(run_dir: Path, record: dict) -> None:
    (run_dir / RECORD).write_text(json.dumps(record, indent=2))
