"""`grpo launch CONFIG --slurm ...` and `grpo slurm status|logs|wait|cancel|resume RUN_DIR`.

The config is validated at the job's world size (nodes x processes per node) before anything is written; the
batch script goes into the job's folder, then to sbatch. The other commands follow the job by its id.
Exit codes as for `grpo launch`: 0 success, 1 invalid config, 2 bad usage, a refusal by Slurm or a failed job.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

from grpo_runtime.clusters.backend import ClusterBackend, JobFolderError, follow_command
from grpo_runtime.clusters.slurm import jobs, scheduler
from grpo_runtime.clusters.slurm.layout import LayoutError, plan_layout, wants_vllm_server
from grpo_runtime.clusters.slurm.script import JobSpec, write
from grpo_schema.engine.resume import complete_checkpoints
from grpo_schema.engine.words import plural

POLL_S = float(os.environ.get("GRPO_SLURM_POLL_S", "2"))


def launch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grpo launch --slurm", description="Submit a validated run to Slurm.")
    parser.add_argument("file", help="the run config (YAML or JSON)")
    parser.add_argument("--slurm", action="store_true", help="submit to Slurm (this command)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--allow-env", dest="allow_env", action="append", default=[], metavar="NAME")
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
    parser.add_argument("--run-dir", help="the job's folder (default OUTPUT_DIR/slurm/UTC-TIMESTAMP)")
    parser.add_argument("--no-submit", action="store_true", help="write the folder and the script; do not submit")
    parser.add_argument(
        "--wait", action="store_true", help="follow the job's log until it ends; exit 0 if it completed"
    )
    return parser


def launch_slurm(argv: list[str]) -> int:
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
    return _submit(spec, args.no_submit, args.wait)


def _declared(args):
    """The config checked once at its declared world size, for its launch keys (diagnostics come later)."""
    from grpo_schema import check_file

    try:
        return check_file(args.file, overrides=args.overrides or None, allow_env=args.allow_env)
    except OSError as error:
        print(f"grpo: cannot read {args.file}: {error}", file=sys.stderr)
        return 2


def _submit(spec: JobSpec, no_submit: bool, wait: bool) -> int:
    try:
        script = write(spec)
    except ValueError as error:
        print(f"grpo launch --slurm: error: {error}", file=sys.stderr)
        return 2
    if no_submit:
        jobs.save(spec, None)
        print(f"grpo: wrote {script} (not submitted: sbatch {script})")
        return 0
    try:
        job_id = scheduler.submit(script)
    except scheduler.SlurmError as error:
        jobs.save(spec, None)
        print(f"grpo launch --slurm: {error}", file=sys.stderr)
        return 2
    jobs.save(spec, job_id, os.environ.get("SLURM_CONF"))
    run = spec.run_dir
    print(
        f"grpo: submitted Slurm job {job_id}: {spec.layout.describe()}\n  script: {script}\n  log:    "
        f"{spec.log_path}\n  follow: grpo slurm status {run}  |  grpo slurm logs {run} --follow  |  "
        f"grpo slurm cancel {run}",
        flush=True,
    )
    return _wait(run, job_id, follow=True) if wait else 0


# --- grpo slurm ... ----------------------------------------------------------------------------------------------
class SlurmBackend(ClusterBackend):
    """Slurm behind the cluster interface: a job is RUN_DIR/job.json (its id and JobSpec), followed by its id."""

    name, label, errors = "slurm", "Slurm", (scheduler.SlurmError,)
    help = {
        "status": "the job's state, exit code and reason, checkpoints and last metrics",
        "logs": "the job's output (stdout and stderr of every task)",
        "cancel": "scancel the job (its checkpoints stay)",
    }

    def submit(self, argv: list[str]) -> int:
        return launch_slurm(argv)

    def load(self, run_dir: Path, action: str) -> tuple[JobSpec, str | None]:
        try:
            record, spec = jobs.load(run_dir)
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise JobFolderError(f"{run_dir} is not a job folder written by grpo launch --slurm ({error})") from None
        job_id = record.get("job_id")
        if job_id is None and action != "resume":
            raise JobFolderError(f"{run_dir} was written but never submitted (sbatch {spec.script_path})")
        return spec, job_id

    def status(self, job) -> dict:
        return describe(*job)

    def status_text(self, job, found: dict) -> str:
        latest = found["latest"] or {}
        return (
            f"{found['description']}\n  world size {found['world_size']}, "
            f"{plural(found['steps'], 'logged step')}"
            + (f", last step {latest.get('step')} reward {latest.get('reward')}" if latest else "")
            + f"\n  checkpoints: {', '.join(found['checkpoints']) or 'none'}\n  log: {found['log']}"
        )

    def logs(self, job) -> str:
        spec, _ = job
        try:
            return spec.log_path.read_text(errors="replace")
        except OSError:
            print(f"grpo slurm: no log yet at {spec.log_path} (the job has not started)", file=sys.stderr)
            return ""

    def wait(self, job, follow: bool) -> int:
        spec, job_id = job
        return _wait(spec.run_dir, job_id, follow)

    def cancel(self, job) -> str:
        scheduler.cancel(job[1])
        return f"cancel requested for Slurm job {job[1]}"

    def resume_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--time", help="a new time limit")
        parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
        parser.add_argument("--wait", action="store_true")

    def resume(self, job, args) -> int:
        return _resume(job[0], args)

    def outcome(self, found: dict) -> int:
        return 0 if found["state"] == "COMPLETED" else 2


def slurm_command(argv: list[str]) -> int:
    return follow_command(SlurmBackend(), argv)


def describe(spec: JobSpec, job_id: str) -> dict:
    """What the CLI and `--format json` show: Slurm's view of the job, and what it left in output_dir."""
    status = scheduler.query(job_id)
    metrics = _metrics(Path(spec.output_dir))
    return {
        "job_id": job_id,
        "run_dir": str(spec.run_dir),
        "world_size": spec.layout.world_size,
        "state": status.state if status else "UNKNOWN",
        "reason": status.reason if status else None,
        "exit_code": status.exit_code if status else None,
        "restarts": status.restarts if status else 0,
        "nodes": status.nodes if status else None,
        "source": status.source if status else None,
        "description": status.describe() if status else f"Slurm no longer knows job {job_id} (no accounting)",
        "finished": status.finished if status else True,
        "output_dir": spec.output_dir,
        "checkpoints": [c.name for c in complete_checkpoints(spec.output_dir)],
        "log": str(spec.log_path),
        "steps": len(metrics),
        "latest": metrics[-1] if metrics else None,
    }


def _metrics(output_dir: Path) -> list[dict]:
    try:
        lines = (output_dir / "metrics.jsonl").read_text().splitlines()
    except OSError:
        return []
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            pass  # a line still being written
    return records


def _wait(run_dir: Path, job_id: str, follow: bool) -> int:
    """Poll until the job ends (printing its log as it grows when `follow`); 0 if it completed, else 2."""
    log, offset = run_dir / "run.log", 0
    while True:
        status = scheduler.query(job_id)
        if follow and log.exists():
            with log.open("rb") as handle:
                handle.seek(offset)
                data = handle.read()
            offset += len(data)
            sys.stdout.write(data.decode(errors="replace"))
            sys.stdout.flush()
        if status is None or status.finished:
            break
        time.sleep(POLL_S)
    text = status.describe() if status else f"Slurm no longer knows job {job_id}"
    print(f"grpo: {text}", file=sys.stderr if not status or status.state != "COMPLETED" else sys.stdout)
    return 0 if status and status.state == "COMPLETED" else 2


def _resume(spec: JobSpec, args) -> int:
    """A new job in a new folder beside the old one: same config and shape, from the newest complete
    checkpoint, validated again (with any new --set) before it is submitted."""
    import dataclasses

    from grpo_runtime.launch.checking import check

    found = complete_checkpoints(spec.output_dir)
    if not found:
        print(f"grpo slurm: {spec.output_dir} has no complete checkpoint to resume from", file=sys.stderr)
        return 2
    overrides = (*spec.overrides, *args.overrides)
    checkpoint = str(found[-1])
    result = check(
        str(spec.config),
        [*overrides, f"resume_from_checkpoint={json.dumps(checkpoint)}", f"output_dir={json.dumps(spec.output_dir)}"],
        spec.layout.world_size,
        list(spec.allow_env),
    )
    if isinstance(result, int):
        return result
    run_dir = jobs.new_run_dir(Path(spec.output_dir))
    config = run_dir / spec.config.name
    shutil.copyfile(spec.config, config)
    resumed = dataclasses.replace(
        spec, run_dir=run_dir, config=config, resume=checkpoint, overrides=overrides, time=args.time or spec.time
    )
    print(f"grpo: resuming from {checkpoint}")
    return _submit(resumed, False, args.wait)
