"""`grpo launch FILE --ray ADDRESS`, for the Ray backend (grpo_runtime.clusters.ray.backend, which `grpo ray
status|logs|wait|cancel|resume RUN_DIR` follows the job with): a run as one Ray job.

The config is validated at its world size, then placed (grpo_runtime.clusters.ray.placement): the fewest accelerate
machines of equal size the cluster's live nodes hold, each one placement bundle, plus the vLLM server's bundle for
a config in the open-r1 layout; a cluster that cannot be reached (GRPO-U011) or cannot hold them (GRPO-U012) gets
nothing. Otherwise one job goes in through the backend (grpo_runtime.clusters.ray.backend; the job's record and
submission are grpo_runtime.clusters.ray.jobs): its entrypoint is the driver (grpo_runtime.clusters.ray.driver),
which reserves the bundles as one placement group and runs `grpo launch` as each machine with the rendezvous of
machine 0. The job's record lives in the job's folder (RUN_DIR/ray_job.json), as for `grpo launch --slurm`;
`grpo ray resume` submits a new job from the newest complete checkpoint. Ray is the `ray` extra; nothing else
imports it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from grpo_runtime.clusters.backend import ClusterBackend, Job
from grpo_runtime.clusters.ray import jobs
from grpo_runtime.clusters.ray.placement import Refused, plan, server_for
from grpo_schema.commands.options import add_overrides


def launch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grpo launch --ray", description="Submit a validated run as a Ray job.")
    parser.add_argument("file", help="the run config (YAML or JSON)")
    parser.add_argument(
        "--ray",
        required=True,
        metavar="ADDRESS",
        help="the cluster's dashboard (Jobs API) address, e.g. http://HEAD:8265",
    )
    add_overrides(parser)
    parser.add_argument("--allow-env", dest="allow_env", action="append", default=[], metavar="NAME")
    _add_process_options(parser)
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


def _add_process_options(parser: argparse.ArgumentParser) -> None:
    """The world size and what each training process asks of the cluster."""
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


def diagnostic(refused: Refused) -> int:
    print(f"grpo launch --ray: {refused}", file=sys.stderr)
    return 2


def launch_ray(argv: list[str], backend: ClusterBackend) -> int:
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
    run_dir = Path(args.run_dir).resolve() if args.run_dir else jobs.new_run_dir(output_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    source = Path(args.file)
    config = "config.json" if source.suffix == ".json" else "config.yaml"
    shutil.copyfile(source, run_dir / config)
    record = jobs.new_record(
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
        job = backend.submit(jobs.RayRequest(run_dir, record))
    except jobs.RayJobError as error:
        print(f"grpo launch --ray: {error}", file=sys.stderr)
        return 2
    print(
        f"grpo: submitted Ray job {job}: {placed.describe()}\n  follow: grpo ray status {run_dir}  |  "
        f"grpo ray logs {run_dir} --follow  |  grpo ray cancel {run_dir}",
        flush=True,
    )
    return 0 if not args.wait else backend.wait(Job(run_dir, job), follow=True)
