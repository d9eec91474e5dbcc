"""Slurm behind the cluster interface (grpo_runtime.clusters.backend): a job is RUN_DIR/job.json (its id and the
JobSpec it was submitted from), submitted with sbatch and followed by its id, from `grpo launch --slurm` (its
options: grpo_runtime.clusters.slurm.cli), `grpo slurm ...` (slurm_command) and the service's Slurm runs alike.

Exit codes as for `grpo launch`: 0 success, 2 bad usage, a refusal by Slurm or a job that did not complete.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

from grpo_runtime.clusters.backend import (
    CANCELLED,
    FAILED,
    SUCCEEDED,
    ClusterBackend,
    Job,
    JobFolderError,
    JobState,
    follow_command,
)
from grpo_runtime.clusters.slurm import jobs, scheduler
from grpo_runtime.clusters.slurm.cli import launch_slurm, submit_and_tell
from grpo_runtime.clusters.slurm.script import JobSpec, write
from grpo_schema.commands.options import add_overrides
from grpo_schema.engine.resume import complete_checkpoints
from grpo_schema.engine.words import plural

POLL_S = float(os.environ.get("GRPO_SLURM_POLL_S", "2"))


def state_of(found: scheduler.JobStatus) -> JobState:
    """Slurm's answer as the interface's JobState."""
    return JobState(
        found.state,
        found.reason,
        started=not found.pending,
        finished=found.finished,
        exit_code=found.exit_code,
        note=found.describe(),
        detail=found,
    )


class SlurmBackend(ClusterBackend):
    """Slurm's batch jobs: sbatch, scontrol / sacct, scancel (grpo_runtime.clusters.slurm.scheduler)."""

    name, label, errors, poll_s = "slurm", "Slurm", (scheduler.SlurmError,), POLL_S
    help = {
        "status": "the job's state, exit code and reason, checkpoints and last metrics",
        "logs": "the job's output (stdout and stderr of every task)",
        "cancel": "scancel the job (its checkpoints stay)",
    }

    # --- the job --------------------------------------------------------------------------------------------------
    def submit(self, request: JobSpec, env: dict[str, str] | None = None) -> str:
        """Write RUN_DIR/job.sbatch, sbatch it, record it in RUN_DIR/job.json (a refused job is recorded without
        an id, so it can be submitted again). Raises ValueError (a spec the script cannot hold) or SlurmError."""
        script = write(request)
        try:
            job_id = scheduler.submit(script, env)
        except scheduler.SlurmError:
            jobs.save(request, None)
            raise
        jobs.save(request, job_id, (os.environ if env is None else env).get("SLURM_CONF"))
        return job_id

    def status(self, job: Job) -> JobState | None:
        found = scheduler.query(job.job_id)
        return state_of(found) if found else None

    def logs(self, job: Job) -> str:
        """RUN_DIR/run.log, which the job writes itself (on the cluster's shared file system)."""
        try:
            return (job.run_dir / "run.log").read_text(errors="replace")
        except OSError:
            print(f"grpo slurm: no log yet at {job.run_dir / 'run.log'} (the job has not started)", file=sys.stderr)
            return ""

    def cancel(self, job: Job) -> str:
        scheduler.cancel(job.job_id)
        return f"cancel requested for Slurm job {job.job_id}"

    def outcome(self, found: JobState, cancel_requested: bool = False) -> tuple[str, int | None, str | None]:
        """With Slurm's own state and reason in words; a killed job is said to be resumable."""
        if found.state == "COMPLETED":
            return SUCCEEDED, found.exit_code or 0, None
        if found.state == "CANCELLED":
            return CANCELLED, found.exit_code, ("cancelled on request; " if cancel_requested else "") + found.note
        if found.detail is not None and found.detail.killed:
            return FAILED, found.exit_code, found.note + "; resume it from its last complete checkpoint"
        return FAILED, found.exit_code, found.note

    def forgotten(self, job: Job, last_state: str | None) -> str:
        return (
            f"Slurm no longer knows job {job.job_id} and has no accounting record of it; its last known "
            f"state was {last_state or 'unknown'}"
        )

    # --- the command line -----------------------------------------------------------------------------------------
    def launch(self, argv: list[str]) -> int:
        return launch_slurm(argv, self)

    def load(self, run_dir: Path, action: str) -> Job:
        try:
            record, spec = jobs.load(run_dir)
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise JobFolderError(f"{run_dir} is not a job folder written by grpo launch --slurm ({error})") from None
        job_id = record.get("job_id")
        if job_id is None and action != "resume":
            raise JobFolderError(f"{run_dir} was written but never submitted (sbatch {spec.script_path})")
        return Job(spec.run_dir, job_id)

    def report(self, job: Job) -> dict:
        """Slurm's view of the job, and what it left in output_dir."""
        _, spec = jobs.load(job.run_dir)
        found = self.status(job)
        status = found.detail if found else None
        metrics = _metrics(Path(spec.output_dir))
        return {
            "job_id": job.job_id,
            "run_dir": str(spec.run_dir),
            "world_size": spec.layout.world_size,
            "state": status.state if status else "UNKNOWN",
            "reason": status.reason if status else None,
            "exit_code": status.exit_code if status else None,
            "restarts": status.restarts if status else 0,
            "nodes": status.nodes if status else None,
            "source": status.source if status else None,
            "description": found.note if found else f"Slurm no longer knows job {job.job_id} (no accounting)",
            "finished": status.finished if status else True,
            "output_dir": spec.output_dir,
            "checkpoints": [c.name for c in complete_checkpoints(spec.output_dir)],
            "log": str(spec.log_path),
            "steps": len(metrics),
            "latest": metrics[-1] if metrics else None,
        }

    def status_text(self, job: Job, found: dict) -> str:
        latest = found["latest"] or {}
        return (
            f"{found['description']}\n  world size {found['world_size']}, "
            f"{plural(found['steps'], 'logged step')}"
            + (f", last step {latest.get('step')} reward {latest.get('reward')}" if latest else "")
            + f"\n  checkpoints: {', '.join(found['checkpoints']) or 'none'}\n  log: {found['log']}"
        )

    def wait(self, job: Job, follow: bool) -> int:
        """Poll until the job ends, printing run.log's new bytes as it grows when `follow` (the file may not
        exist until the job starts)."""
        log, offset = job.run_dir / "run.log", 0
        while True:
            found = self.status(job)
            if follow and log.exists():
                with log.open("rb") as handle:
                    handle.seek(offset)
                    data = handle.read()
                offset += len(data)
                sys.stdout.write(data.decode(errors="replace"))
                sys.stdout.flush()
            if found is None or found.finished:
                break
            time.sleep(self.poll_s)
        if found is None:
            print(f"grpo: Slurm no longer knows job {job.job_id}", file=sys.stderr)
            return self.failed_exit
        return self.ended(job, found)

    def resume_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--time", help="a new time limit")
        add_overrides(parser)
        parser.add_argument("--wait", action="store_true")

    def resume(self, job: Job, args: argparse.Namespace) -> int:
        """A new job in a new folder beside the old one: same config and shape, from the newest complete
        checkpoint, validated again (with any new --set) before it is submitted."""
        import shutil

        from grpo_runtime.launch.checking import check

        _, spec = jobs.load(job.run_dir)
        found = complete_checkpoints(spec.output_dir)
        if not found:
            print(f"grpo slurm: {spec.output_dir} has no complete checkpoint to resume from", file=sys.stderr)
            return 2
        overrides = (*spec.overrides, *args.overrides)
        checkpoint = str(found[-1])
        sets = [f"resume_from_checkpoint={json.dumps(checkpoint)}", f"output_dir={json.dumps(spec.output_dir)}"]
        result = check(str(spec.config), [*overrides, *sets], spec.layout.world_size, list(spec.allow_env))
        if isinstance(result, int):
            return result
        run_dir = jobs.new_run_dir(Path(spec.output_dir))
        config = run_dir / spec.config.name
        shutil.copyfile(spec.config, config)
        resumed = dataclasses.replace(
            spec, run_dir=run_dir, config=config, resume=checkpoint, overrides=overrides, time=args.time or spec.time
        )
        print(f"grpo: resuming from {checkpoint}")
        return submit_and_tell(resumed, False, args.wait, self)


def slurm_command(argv: list[str]) -> int:
    """`grpo slurm status|logs|wait|cancel|resume RUN_DIR`."""
    return follow_command(SlurmBackend(), argv)


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
