"""`grpo launch FILE --ray ADDRESS` and `grpo ray status|logs|wait|cancel|resume RUN_DIR`: a run as one Ray job.

The config is validated at its world size, then placed (grpo_runtime.clusters.ray.placement): the fewest accelerate
machines of equal size the cluster's live nodes hold, each one placement bundle, plus the vLLM server's bundle for
a config in the open-r1 layout; a cluster that cannot be reached (GRPO-U011) or cannot hold them (GRPO-U012) gets
nothing. Otherwise one job goes in through Ray's Jobs API: its runtime environment carries the project's packages
(py_modules) and the job's folder with the config (working_dir); its entrypoint is the driver
(grpo_runtime.clusters.ray.driver), which reserves the bundles as one placement group and runs `grpo launch` as each
machine with the rendezvous of machine 0. The job's record lives in the job's folder (RUN_DIR/ray_job.json), as
for `grpo launch --slurm`; resume submits a new job from the newest complete checkpoint. The service's Ray backend
(grpo_web.runs.rayjobs) submits and follows its runs with these same functions. Ray is the `ray` extra; nothing
else imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import time
import uuid
from pathlib import Path

from grpo_runtime.clusters.backend import ClusterBackend, JobFolderError, follow_command
from grpo_runtime.clusters.ray.placement import Placement, Refused, plan, server_for
from grpo_schema.engine.resume import complete_checkpoints

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


def launch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grpo launch --ray", description="Submit a validated run as a Ray job.")
    parser.add_argument("file", help="the run config (YAML or JSON)")
    parser.add_argument(
        "--ray",
        required=True,
        metavar="ADDRESS",
        help="the cluster's dashboard (Jobs API) address, e.g. http://HEAD:8265",
    )
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--allow-env", dest="allow_env", action="append", default=[], metavar="NAME")
    parser.add_argument(
        "--num-processes",
        "--num_processes",
        dest="num_processes",
        type=int,
        help="the world size (default: num_processes of the config, else 1)",
    )
    parser.add_argument(
        "--gpus-per-process",
        type=float,
        default=None,
        help="GPUs each training process asks (default 1 on a cluster with GPUs, else 0)",
    )
    parser.add_argument("--cpus-per-process", type=float, default=1.0, help="CPUs each training process asks")
    parser.add_argument(
        "--processes-per-node",
        type=int,
        default=None,
        metavar="P",
        help="training processes per accelerate machine (one placement bundle, on one node); "
        "default: the most that the cluster's nodes can hold",
    )
    parser.add_argument(
        "--vllm-gpus",
        type=int,
        default=None,
        metavar="N",
        help="GPUs of the vLLM server a config in the open-r1 layout generates through (vllm_mode: "
        "server, no vllm_server_base_url); default: its vllm_tensor_parallel_size on a cluster "
        "with GPUs, else 0",
    )
    parser.add_argument(
        "--placement-timeout",
        type=float,
        default=600.0,
        metavar="S",
        help="seconds the job waits for its placement group before it fails (default 600)",
    )
    parser.add_argument("--python", default="python", help="the interpreter on the cluster's nodes")
    parser.add_argument("--run-dir", help="the job's folder (default OUTPUT_DIR/ray/UTC-TIMESTAMP)")
    parser.add_argument(
        "--wait", action="store_true", help="follow the job's log until it ends; exit 0 if it succeeded"
    )
    return parser


def diagnostic(refused: Refused) -> int:
    print(f"grpo launch --ray: {refused}", file=sys.stderr)
    return 2


def launch_ray(argv: list[str]) -> int:
    args = launch_parser().parse_args(argv)
    from grpo_runtime.launch.checking import check

    overrides = list(args.overrides)
    if args.num_processes is not None:
        overrides.append(f"num_processes={args.num_processes}")
    result = check(args.file, overrides, args.num_processes, args.allow_env)
    if isinstance(result, int):
        return result
    placed = plan(
        args.ray,
        result.world_size,
        args.cpus_per_process,
        args.gpus_per_process,
        args.processes_per_node,
        server_for(result.config, args.python, args.vllm_gpus),
    )
    if isinstance(placed, Refused):
        return diagnostic(placed)
    output_dir = Path(str(result.config.output_dir or "trainer_output")).expanduser().resolve()
    run_dir = Path(args.run_dir).resolve() if args.run_dir else _new_run_dir(output_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    source = Path(args.file)
    config = "config.json" if source.suffix == ".json" else "config.yaml"
    shutil.copyfile(source, run_dir / config)
    record = new_record(
        args.ray,
        config,
        placed,
        args.python,
        str(output_dir),
        [o for o in overrides if not o.startswith("output_dir=")],
        args.allow_env,
        result.launch.get("main_process_port"),
        args.placement_timeout,
    )
    try:
        job = submit(run_dir, record, resume=None)
    except RayJobError as error:
        print(f"grpo launch --ray: {error}", file=sys.stderr)
        return 2
    print(
        f"grpo: submitted Ray job {job}: {placed.describe()}\n  follow: grpo ray status {run_dir}  |  "
        f"grpo ray logs {run_dir} --follow  |  grpo ray cancel {run_dir}",
        flush=True,
    )
    return 0 if not args.wait else _wait(run_dir, follow=True)


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


def _new_run_dir(output_dir: Path) -> Path:
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


def _client(address: str):
    from ray.job_submission import JobSubmissionClient

    return JobSubmissionClient(address)


class RayJobError(RuntimeError):
    """The cluster refused a submission or did not answer; the message says which and Ray's words."""


def job_environment() -> dict[str, str]:
    """The library settings of the submitting environment that the job's processes should share (the cluster's
    own environment is theirs otherwise). Never a token: a runtime environment is shown by Ray's dashboard."""
    env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    return env


def submit(run_dir: Path, record: dict, resume: str | None) -> str:
    """Submit one job of the run (RUN_DIR's config, as the job's working_dir) and record it in RUN_DIR/ray_job.json;
    its id. Raises RayJobError."""
    import grpo_runtime
    import grpo_schema

    modules = [str(Path(grpo_schema.__file__).parent), str(Path(grpo_runtime.__file__).parent)]
    # the job's working_dir is RUN_DIR: only its config travels (a service's run folder holds the log and output)
    excludes = [f"/{entry.name}" for entry in run_dir.iterdir() if entry.name != record["config"]]
    submission = f"grpo-{run_dir.name}-{len(record['jobs'])}-{uuid.uuid4().hex[:8]}"  # unique in the cluster
    try:
        job_id = _client(record["address"]).submit_job(
            entrypoint=entrypoint(record, resume),
            submission_id=submission,
            runtime_env={
                "working_dir": str(run_dir),
                "py_modules": modules,
                "excludes": excludes,
                "env_vars": job_environment(),
            },
            metadata={"grpo_run_dir": str(run_dir), "world_size": str(record["world_size"])},
        )
    except Exception as error:  # a refusal by the cluster is reported, not raised
        raise RayJobError(f"the cluster at {record['address']} refused the job: {error}") from error
    record["jobs"].append({"submission_id": job_id, "resume": resume})
    (run_dir / RECORD).write_text(json.dumps(record, indent=2))
    return job_id


def load(run_dir: Path) -> dict:
    return json.loads((run_dir / RECORD).read_text())


def describe(run_dir: Path) -> dict:
    """The job's state as Ray reports it, with its exit reason and what it left in output_dir."""
    record = load(run_dir)
    job = record["jobs"][-1]["submission_id"]
    info = _client(record["address"]).get_job_info(job)
    state = str(getattr(info.status, "value", info.status))
    return {
        "job_id": job,
        "run_dir": str(run_dir),
        "state": state,
        "finished": state in FINISHED,
        "reason": info.message,
        "exit_code": getattr(info, "driver_exit_code", None),
        "world_size": record["world_size"],
        "machines": record.get("machines", 1),
        "processes_per_machine": record.get("processes_per_machine", record["world_size"]),
        "restarts": len(record["jobs"]) - 1,
        "output_dir": record["output_dir"],
        "checkpoints": [c.name for c in complete_checkpoints(record["output_dir"])],
    }


def logs(run_dir: Path) -> str:
    """The output of the run's newest job so far (the driver's lines and every machine's)."""
    record = load(run_dir)
    return _client(record["address"]).get_job_logs(record["jobs"][-1]["submission_id"])


def stop(run_dir: Path) -> None:
    """Ask Ray to stop the newest job: SIGTERM to the driver, which ends every machine; its checkpoints stay."""
    record = load(run_dir)
    _client(record["address"]).stop_job(record["jobs"][-1]["submission_id"])


def _wait(run_dir: Path, follow: bool) -> int:
    record = load(run_dir)
    job = record["jobs"][-1]["submission_id"]
    client = _client(record["address"])
    if follow:
        import asyncio

        async def tail() -> None:
            async for lines in client.tail_job_logs(job):
                print(lines, end="", flush=True)

        asyncio.run(tail())
    while not (status := describe(run_dir))["finished"]:
        time.sleep(1)
    print(f"grpo: Ray job {job} {status['state']}" + (f": {status['reason']}" if status["reason"] else ""))
    return 0 if status["state"] == "SUCCEEDED" else 4


class RayBackend(ClusterBackend):
    """Ray behind the cluster interface: a job is RUN_DIR/ray_job.json, its newest submission the job."""

    name, label, errors = "ray", "Ray", (Exception,)  # whatever Ray raised: a cluster that went away
    help = {"wait": "wait for the job to end; exit 0 if it succeeded"}

    def submit(self, argv: list[str]) -> int:
        return launch_ray(argv)

    def load(self, run_dir: Path, action: str) -> Path:
        run_dir = run_dir.resolve()
        try:
            load(run_dir)
        except (OSError, ValueError) as error:
            raise JobFolderError(f"{run_dir} is not a job folder written by grpo launch --ray ({error})") from None
        return run_dir

    def status(self, job: Path) -> dict:
        return describe(job)

    def status_text(self, job: Path, found: dict) -> str:
        return (
            f"Ray job {found['job_id']}: {found['state']}"
            + (f" ({found['reason']})" if found["reason"] else "")
            + f"\n  checkpoints: {', '.join(found['checkpoints']) or 'none'}"
        )

    def logs(self, job: Path) -> str:
        return logs(job)

    def wait(self, job: Path, follow: bool) -> int:
        return _wait(job, follow)

    def cancel(self, job: Path) -> str:
        stop(job)
        return f"stop requested for Ray job {load(job)['jobs'][-1]['submission_id']}"

    def resume(self, job: Path, args) -> int:
        record = load(job)
        checkpoints = complete_checkpoints(record["output_dir"])
        if not checkpoints:
            print(f"grpo ray: no complete checkpoint in {record['output_dir']} to resume from", file=sys.stderr)
            return 2
        placed = plan(
            record["address"],
            record["world_size"],
            record["cpus_per_process"],
            record["gpus_per_process"],
            server=record.get("server"),
        )
        if isinstance(placed, Refused):
            return diagnostic(placed)
        record.update(machines=placed.machines, processes_per_machine=placed.per_machine, server=placed.server)
        submitted = submit(job, record, resume=str(checkpoints[-1]))
        print(f"grpo: submitted Ray job {submitted} from {checkpoints[-1]}", flush=True)
        return 0 if not args.wait else _wait(job, follow=False)

    def outcome(self, found: dict) -> int:
        return 0 if found["state"] == "SUCCEEDED" else 4

    def error_text(self, error: BaseException) -> str:
        return f"{type(error).__name__}: {error}"


def ray_command(argv: list[str]) -> int:
    return follow_command(RayBackend(), argv)
