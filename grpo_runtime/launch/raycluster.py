"""`grpo launch FILE --ray ADDRESS` and `grpo ray status|logs|wait|cancel|resume RUN_DIR`: a run as one Ray job.

The config is validated at its world size, then the cluster is asked (through the dashboard's state API) for its
live nodes: if it cannot be reached (GRPO-U011) or no node has the CPUs and GPUs that world size x the resources per
process ask for (GRPO-U012), nothing is submitted. Otherwise one job goes in through Ray's Jobs API: its runtime
environment carries the project's packages (py_modules) and the job's folder with the config (working_dir), and its
entrypoint, placed by Ray with all those resources, runs `grpo launch` at that world size. The job's record lives
in the job's folder (RUN_DIR/ray_job.json), as for `grpo launch --slurm`; resume submits a new job from the newest
complete checkpoint. Ray is the `ray` extra; nothing else imports it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
import time
import uuid
from pathlib import Path

from grpo_schema.engine.codes import U_RAY_UNPLACEABLE, U_RAY_UNREACHABLE
from grpo_schema.engine.resume import complete_checkpoints

RECORD = "ray_job.json"
FINISHED = {"SUCCEEDED", "FAILED", "STOPPED"}
PACKAGES = ("grpo_schema", "grpo_runtime")


def launch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grpo launch --ray", description="Submit a validated run as a Ray job.")
    parser.add_argument("file", help="the run config (YAML or JSON)")
    parser.add_argument("--ray", required=True, metavar="ADDRESS",
                        help="the cluster's dashboard (Jobs API) address, e.g. http://HEAD:8265")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--allow-env", dest="allow_env", action="append", default=[], metavar="NAME")
    parser.add_argument("--num-processes", "--num_processes", dest="num_processes", type=int,
                        help="the world size (default: num_processes of the config, else 1)")
    parser.add_argument("--gpus-per-process", type=float, default=None,
                        help="GPUs each training process asks (default 1 on a cluster with GPUs, else 0)")
    parser.add_argument("--cpus-per-process", type=float, default=1.0, help="CPUs each training process asks")
    parser.add_argument("--python", default="python", help="the interpreter on the cluster's nodes")
    parser.add_argument("--run-dir", help="the job's folder (default OUTPUT_DIR/ray/UTC-TIMESTAMP)")
    parser.add_argument("--wait", action="store_true", help="follow the job's log until it ends; exit 0 if it "
                                                            "succeeded")
    return parser


def diagnostic(code: str, message: str, fix: str) -> int:
    print(f"grpo launch --ray: error[{code}] {message}\n  fix: {fix}", file=sys.stderr)
    return 2


def nodes_of(address: str) -> list[dict] | str:
    """The cluster's live nodes and their total resources, or why it cannot be reached."""
    try:
        from ray.util.state import list_nodes

        nodes = list_nodes(address=address, filters=[("state", "=", "ALIVE")], timeout=20, raise_on_missing_output=False)
    except Exception as error:  # noqa: BLE001 - any failure to reach it is the diagnostic
        return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    return [{"id": node.node_id, "ip": node.node_ip, "resources": dict(node.resources_total or {})} for node in nodes]


def placement(nodes: list[dict], world: int, cpus: float, gpus: float) -> dict | None:
    """The first live node with world x (cpus, gpus): the job's entrypoint starts every process there."""
    for node in nodes:
        have = node["resources"]
        if have.get("CPU", 0) >= world * cpus and have.get("GPU", 0) >= world * gpus:
            return node
    return None


def preflight(address: str, world: int, cpus: float, gpus: float | None) -> tuple[float, float] | int:
    """(cpus, gpus) per process the cluster can place, or the exit code after a coded diagnostic."""
    nodes = nodes_of(address)
    if isinstance(nodes, str):
        return diagnostic(U_RAY_UNREACHABLE, f"no Ray cluster answers at {address} ({nodes}); nothing submitted",
                          "start it (`ray start --head`) or give its dashboard address, e.g. http://HEAD:8265")
    if not nodes:
        return diagnostic(U_RAY_UNREACHABLE, f"the Ray cluster at {address} has no live node", "start a node")
    if gpus is None:
        gpus = 1.0 if any(n["resources"].get("GPU", 0) for n in nodes) else 0.0
    if placement(nodes, world, cpus, gpus) is None:
        largest = ", ".join(f"{n['ip']}: {n['resources'].get('CPU', 0):g} CPU, {n['resources'].get('GPU', 0):g} GPU"
                            for n in nodes)
        return diagnostic(U_RAY_UNPLACEABLE,
                          f"world size {world} asks {world * cpus:g} CPU and {world * gpus:g} GPU on one node "
                          f"({cpus:g} CPU, {gpus:g} GPU per process), but the cluster's nodes have {largest}; "
                          "the job would wait forever, so nothing was submitted",
                          "a smaller --num-processes (the config's world size changes with it), fewer "
                          "--cpus-per-process / --gpus-per-process, or a node that has them")
    return cpus, gpus


def launch_ray(argv: list[str]) -> int:
    args = launch_parser().parse_args(argv)
    from grpo_runtime.launch.checking import check

    overrides = list(args.overrides)
    if args.num_processes is not None:
        overrides.append(f"num_processes={args.num_processes}")
    result = check(args.file, overrides, args.num_processes, args.allow_env)
    if isinstance(result, int):
        return result
    world = result.world_size
    placed = preflight(args.ray, world, args.cpus_per_process, args.gpus_per_process)
    if isinstance(placed, int):
        return placed
    output_dir = Path(str(result.config.output_dir or "trainer_output")).expanduser().resolve()
    run_dir = Path(args.run_dir).resolve() if args.run_dir else _new_run_dir(output_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    source = Path(args.file)
    config = "config.json" if source.suffix == ".json" else "config.yaml"
    shutil.copyfile(source, run_dir / config)
    record = {"address": args.ray, "config": config, "world_size": world, "cpus_per_process": placed[0],
              "gpus_per_process": placed[1], "python": args.python, "output_dir": str(output_dir),
              "overrides": [o for o in overrides if not o.startswith("output_dir=")], "allow_env": args.allow_env,
              "jobs": []}
    code = _submit(run_dir, record, resume=None)
    return code if code or not args.wait else _wait(run_dir, follow=True)


def _new_run_dir(output_dir: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for n in range(1000):
        candidate = output_dir / "ray" / (stamp if n == 0 else f"{stamp}-{n}")
        if not candidate.exists():
            return candidate
    raise OSError(f"no free job folder under {output_dir / 'ray'}")


def entrypoint(record: dict, resume: str | None) -> str:
    words = [record["python"], "-m", "grpo_schema", "launch", record["config"], "--num-processes",
             str(record["world_size"]), "--set", f"output_dir={json.dumps(record['output_dir'])}"]
    if resume:
        words += ["--set", f"resume_from_checkpoint={json.dumps(resume)}"]
    for override in record["overrides"]:
        words += ["--set", override]
    for name in record["allow_env"]:
        words += ["--allow-env", name]
    return " ".join(shlex.quote(word) for word in words)


def _client(address: str):
    from ray.job_submission import JobSubmissionClient

    return JobSubmissionClient(address)


def _submit(run_dir: Path, record: dict, resume: str | None) -> int:
    import grpo_runtime
    import grpo_schema

    modules = [str(Path(grpo_schema.__file__).parent), str(Path(grpo_runtime.__file__).parent)]
    world = record["world_size"]
    submission = f"grpo-{run_dir.name}-{len(record['jobs'])}-{uuid.uuid4().hex[:8]}"  # unique in the cluster
    try:
        job_id = _client(record["address"]).submit_job(
            entrypoint=entrypoint(record, resume), submission_id=submission,
            runtime_env={"working_dir": str(run_dir), "py_modules": modules,
                         "excludes": ["ray_job.json", "checkpoint-*"],
                         "env_vars": {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}},
            entrypoint_num_cpus=world * record["cpus_per_process"],
            entrypoint_num_gpus=world * record["gpus_per_process"] or None,
            metadata={"grpo_run_dir": str(run_dir), "world_size": str(world)})
    except Exception as error:  # noqa: BLE001 - a refusal by the cluster is reported, not raised
        print(f"grpo launch --ray: the cluster refused the job: {error}", file=sys.stderr)
        return 2
    record["jobs"].append({"submission_id": job_id, "resume": resume})
    (run_dir / RECORD).write_text(json.dumps(record, indent=2))
    print(f"grpo: submitted Ray job {job_id} ({world} process(es))\n  follow: grpo ray status {run_dir}  |  "
          f"grpo ray logs {run_dir} --follow  |  grpo ray cancel {run_dir}", flush=True)
    return 0


def load(run_dir: Path) -> dict:
    return json.loads((run_dir / RECORD).read_text())


def describe(run_dir: Path) -> dict:
    """The job's state as Ray reports it, with its exit reason and what it left in output_dir."""
    record = load(run_dir)
    job = record["jobs"][-1]["submission_id"]
    info = _client(record["address"]).get_job_info(job)
    state = str(getattr(info.status, "value", info.status))
    return {"job_id": job, "run_dir": str(run_dir), "state": state, "finished": state in FINISHED,
            "reason": info.message, "exit_code": getattr(info, "driver_exit_code", None),
            "world_size": record["world_size"], "restarts": len(record["jobs"]) - 1,
            "output_dir": record["output_dir"],
            "checkpoints": [c.name for c in complete_checkpoints(record["output_dir"])]}


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


def ray_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grpo ray", description="Follow jobs from `grpo launch --ray`.")
    sub = parser.add_subparsers(dest="action", required=True)
    status = sub.add_parser("status", help="the job's state, exit reason and checkpoints")
    status.add_argument("--format", choices=("text", "json"), default="text")
    logs = sub.add_parser("logs", help="the job's output")
    logs.add_argument("--follow", "-f", action="store_true")
    sub.add_parser("wait", help="wait for the job to end; exit 0 if it succeeded")
    sub.add_parser("cancel", help="stop the job (its checkpoints stay)")
    resume = sub.add_parser("resume", help="submit the job again from its newest complete checkpoint")
    resume.add_argument("--wait", action="store_true")
    for command in sub.choices.values():
        command.add_argument("run_dir", help="the job's folder (printed by grpo launch --ray)")
    args = parser.parse_args(argv)
    run_dir = Path(args.run_dir).resolve()
    try:
        record = load(run_dir)
    except (OSError, ValueError) as error:
        print(f"grpo ray: {args.run_dir} is not a job folder written by grpo launch --ray ({error})",
              file=sys.stderr)
        return 2
    job = record["jobs"][-1]["submission_id"]
    try:
        if args.action == "status":
            status = describe(run_dir)
            print(json.dumps(status, indent=2) if args.format == "json" else
                  f"Ray job {job}: {status['state']}" + (f" ({status['reason']})" if status["reason"] else "")
                  + f"\n  checkpoints: {', '.join(status['checkpoints']) or 'none'}")
            return 0
        if args.action == "logs":
            if args.follow:
                return _wait(run_dir, follow=True)
            print(_client(record["address"]).get_job_logs(job), end="")
            return 0
        if args.action == "wait":
            return _wait(run_dir, follow=False)
        if args.action == "cancel":
            _client(record["address"]).stop_job(job)
            print(f"grpo: stop requested for Ray job {job}")
            return 0
        checkpoints = complete_checkpoints(record["output_dir"])
        if not checkpoints:
            print(f"grpo ray: no complete checkpoint in {record['output_dir']} to resume from", file=sys.stderr)
            return 2
        code = _submit(run_dir, record, resume=str(checkpoints[-1]))
        return code if code or not args.wait else _wait(run_dir, follow=False)
    except Exception as error:  # noqa: BLE001 - a cluster that went away is a message, not a traceback
        print(f"grpo ray: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
