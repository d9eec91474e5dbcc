"""`grpo launch CONFIG --slurm ...`, for the Slurm backend (grpo_runtime.clusters.slurm.backend, which `grpo slurm
status|logs|wait|cancel|resume RUN_DIR` follows the job with).

The config is validated at the job's world size (nodes x processes per node) before anything is written; the
batch script goes into the job's folder, then to sbatch through the backend.
Exit codes as for `grpo launch`: 0 success, 1 invalid config, 2 bad usage, a refusal by Slurm or a failed job.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from grpo_runtime.clusters.backend import ClusterBackend, Job
from grpo_runtime.clusters.slurm import jobs, scheduler
from grpo_runtime.clusters.slurm.layout import LayoutError, plan_layout, wants_vllm_server
from grpo_runtime.clusters.slurm.script import JobSpec, write
from grpo_schema.commands.options import add_overrides


def launch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grpo launch --slurm", description="Submit a validated run to Slurm.")
    parser.add_argument("file", help="the run config (YAML or JSON)")
    parser.add_argument("--slurm", action="store_true", help="submit to Slurm (this command)")
    add_overrides(parser)
    parser.add_argument("--allow-env", dest="allow_env", action="append", default=[], metavar="NAME")
    _add_shape_options(parser)
    _add_sbatch_options(parser)
    parser.add_argument("--run-dir", help="the job's folder (default OUTPUT_DIR/slurm/UTC-TIMESTAMP)")
    parser.add_argument("--no-submit", action="store_true", help="write the folder and the script; do not submit")
    parser.add_argument(
        "--wait", action="store_true", help="follow the job's log until it ends; exit 0 if it completed"
    )
    return parser


def _add_shape_options(parser: argparse.ArgumentParser) -> None:
    shape = parser.add_argument_group("the job's shape (world size = nodes x processes per node)")
    shape.add_argument("--nodes", type=int, help="training nodes (default: num_machines from the config, else 1)")
    shape.add_argument("--gpus-per-node", type=int, default=0, help="GPUs per node (default: none, CPU nodes)")
    shape.add_argument(
        "--processes-per-node",
        type=int,
        help="training processes per node (default: --gpus-per-node, else num_processes / nodes)",
    )
    shape.add_argument(
        "--num-processes",
        "--num_processes",
        dest="num_processes",
        type=int,
        help="the world size, when the config declares none (must equal nodes x processes per node)",
    )
    shape.add_argument(
        "--tasks-per-node",
        type=int,
        default=1,
        help="accelerate launchers (srun tasks) per node, each one machine (default 1)",
    )
    shape.add_argument(
        "--vllm-tensor-parallel-size",
        type=int,
        default=1,
        help="tensor parallel size of the vLLM server node (server mode)",
    )


def _add_sbatch_options(parser: argparse.ArgumentParser) -> None:
    slurm = parser.add_argument_group("sbatch options")
    for name, text in (
        ("--partition", "partition"),
        ("--account", "account to charge"),
        ("--qos", "quality of service"),
        ("--time", "time limit, as sbatch reads it (e.g. 2-00:00:00, 90)"),
        ("--job-name", "job name (default grpo-CONFIG)"),
    ):
        slurm.add_argument(name, help=text)
    slurm.add_argument("--cpus-per-task", type=int, help="CPUs of each launcher")
    slurm.add_argument(
        "--requeue",
        action="store_true",
        help="let Slurm requeue the job after a preemption or node failure; it resumes from the "
        "newest complete checkpoint",
    )
    slurm.add_argument(
        "--sbatch-arg",
        dest="sbatch_args",
        action="append",
        default=[],
        metavar="--OPTION=VALUE",
        help="one more #SBATCH line (repeatable), e.g. --sbatch-arg=--constraint=h100",
    )


def launch_slurm(argv: list[str], backend: ClusterBackend) -> int:
    args = launch_parser().parse_args(argv)
    from grpo_runtime.launch.checking import check

    first = _declared(args)
    if isinstance(first, int):
        return first
    try:
        layout = plan_layout(
            {**first.launch, **({"num_processes": args.num_processes} if args.num_processes else {})},
            nodes=args.nodes,
            processes_per_node=args.processes_per_node,
            tasks_per_node=args.tasks_per_node,
            gpus_per_node=args.gpus_per_node,
            vllm_server=wants_vllm_server(first.config),
            vllm_tensor_parallel_size=args.vllm_tensor_parallel_size,
        )
    except LayoutError as error:
        print(f"grpo launch --slurm: error: {error}", file=sys.stderr)
        return 2
    result = check(args.file, args.overrides, layout.world_size, args.allow_env)
    if isinstance(result, int):
        return result
    config = result.config
    output_dir = Path(str(config.output_dir or "trainer_output")).expanduser().resolve()
    run_dir = Path(args.run_dir).resolve() if args.run_dir else jobs.new_run_dir(output_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    source = Path(args.file)
    copy = run_dir / ("config.json" if source.suffix == ".json" else "config.yaml")
    shutil.copyfile(source, copy)
    spec = JobSpec(
        layout=layout,
        run_dir=run_dir,
        config=copy,
        output_dir=str(output_dir),
        python=sys.executable,
        workdir=Path.cwd(),
        job_name=args.job_name or f"grpo-{source.stem}",
        partition=args.partition,
        account=args.account,
        qos=args.qos,
        time=args.time,
        cpus_per_task=args.cpus_per_task,
        requeue=args.requeue,
        sbatch_args=tuple(args.sbatch_args),
        overrides=tuple(o for o in args.overrides if not o.startswith("output_dir=")),
        allow_env=tuple(args.allow_env),
        main_process_port=result.launch.get("main_process_port"),
        model=str(config.model_name_or_path),
        model_revision=getattr(config, "model_revision", None),
        vllm_server_port=int(getattr(config, "vllm_server_port", 8000) or 8000),
        trust_remote_code=bool(getattr(config, "trust_remote_code", False)),
    )
    return submit_and_tell(spec, args.no_submit, args.wait, backend)


def _declared(args):
    """The config checked once at its declared world size, for its launch keys (diagnostics come later)."""
    from grpo_schema import check_file

    try:
        return check_file(args.file, overrides=args.overrides or None, allow_env=args.allow_env)
    except OSError as error:
        print(f"grpo: cannot read {args.file}: {error}", file=sys.stderr)
        return 2


def submit_and_tell(spec: JobSpec, no_submit: bool, wait: bool, backend: ClusterBackend) -> int:
    """Submit through the backend and say where the job is and how to follow it (or only write the folder)."""
    if no_submit:
        try:
            script = write(spec)
        except ValueError as error:
            print(f"grpo launch --slurm: error: {error}", file=sys.stderr)
            return 2
        jobs.save(spec, None)
        print(f"grpo: wrote {script} (not submitted: sbatch {script})")
        return 0
    try:
        job_id = backend.submit(spec)
    except ValueError as error:
        print(f"grpo launch --slurm: error: {error}", file=sys.stderr)
        return 2
    except scheduler.SlurmError as error:
        print(f"grpo launch --slurm: {error}", file=sys.stderr)
        return 2
    run = spec.run_dir
    print(
        f"grpo: submitted Slurm job {job_id}: {spec.layout.describe()}\n  script: {spec.script_path}\n  log:    "
        f"{spec.log_path}\n  follow: grpo slurm status {run}  |  grpo slurm logs {run} --follow  |  "
        f"grpo slurm cancel {run}",
        flush=True,
    )
    return backend.wait(Job(run, job_id), follow=True) if wait else 0
