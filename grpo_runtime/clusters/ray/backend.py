"""Ray behind the cluster interface (grpo_runtime.clusters.backend): a job is one submission of RUN_DIR's record
(RUN_DIR/ray_job.json, grpo_runtime.clusters.ray.jobs), answered for by Ray's Jobs API, from `grpo launch --ray`
(its options: grpo_runtime.clusters.ray.cli), `grpo ray ...` (ray_command) and the service's Ray runs alike.
Ray is imported when a cluster is asked."""

from __future__ import annotations

import argparse
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
from grpo_runtime.clusters.ray import jobs
from grpo_runtime.clusters.ray.cli import diagnostic, launch_ray
from grpo_runtime.clusters.ray.placement import Refused, plan
from grpo_schema.engine.resume import complete_checkpoints


def said(state: str, job_id: str, message: str | None) -> str:
    """One sentence: Ray's state, with the first line of its message."""
    first = (message or "").strip().splitlines()
    return f"Ray job {job_id} {state}" + (f": {first[0]}" if first else "")


class RayBackend(ClusterBackend):
    """Ray's jobs: submit_job, get_job_info, get_job_logs, stop_job of the cluster's Jobs API."""

    name, label, errors, failed_exit, poll_s = "ray", "Ray", (Exception,), 4, 1.0  # errors: whatever Ray raised
    help = {"wait": "wait for the job to end; exit 0 if it succeeded"}

    # --- the job --------------------------------------------------------------------------------------------------
    def submit(self, request: jobs.RayRequest, env: dict[str, str] | None = None) -> str:
        """One job of the run, recorded in RUN_DIR/ray_job.json. Raises RayJobError."""
        return jobs.submit(request, env)

    def status(self, job: Job) -> JobState | None:
        """None when the cluster answers but no longer knows the job (its head was restarted)."""
        record = jobs.load(job.run_dir)
        try:
            info = jobs.client(record["address"]).get_job_info(job.job_id)
        except Exception as error:
            if "does not exist" in str(error):
                return None
            raise
        state = str(getattr(info.status, "value", info.status))
        return JobState(
            state,
            info.message,
            started=state != "PENDING",
            finished=state in jobs.FINISHED,
            exit_code=getattr(info, "driver_exit_code", None),
            note=said(state, job.job_id, info.message),
            detail=record,
        )

    def logs(self, job: Job) -> str:
        """The job's output so far (the driver's lines and every machine's)."""
        return jobs.client(jobs.load(job.run_dir)["address"]).get_job_logs(job.job_id)

    def cancel(self, job: Job) -> str:
        """SIGTERM to the driver, which ends every machine; its checkpoints stay."""
        jobs.client(jobs.load(job.run_dir)["address"]).stop_job(job.job_id)
        return f"stop requested for Ray job {job.job_id}"

    def outcome(self, found: JobState, cancel_requested: bool = False) -> tuple[str, int | None, str | None]:
        if found.state == "SUCCEEDED":
            return SUCCEEDED, found.exit_code or 0, None
        if found.state == "STOPPED":
            how = "cancelled on request; " if cancel_requested else "stopped outside the service (ray job stop); "
            return CANCELLED, found.exit_code, how + found.note
        return FAILED, found.exit_code, found.note + "; resume it from its last complete checkpoint"

    def forgotten(self, job: Job, last_state: str | None) -> str:
        return (
            f"the Ray cluster no longer knows job {job.job_id} (its head was restarted?); its last known state "
            f"was {last_state or 'unknown'}; resume it from its last complete checkpoint"
        )

    # --- the command line -----------------------------------------------------------------------------------------
    def launch(self, argv: list[str]) -> int:
        return launch_ray(argv, self)

    def load(self, run_dir: Path, action: str) -> Job:
        run_dir = run_dir.resolve()
        try:
            record = jobs.load(run_dir)
        except (OSError, ValueError) as error:
            raise JobFolderError(f"{run_dir} is not a job folder written by grpo launch --ray ({error})") from None
        submitted = record.get("jobs") or [{}]
        return Job(run_dir, submitted[-1].get("submission_id"))

    def report(self, job: Job) -> dict:
        """The job's state as Ray reports it, with its exit reason and what it left in output_dir."""
        found = self.status(job)
        if found is None:
            raise jobs.RayJobError(f"the Ray cluster no longer knows job {job.job_id}")
        record = found.detail
        return {
            "job_id": job.job_id,
            "run_dir": str(job.run_dir),
            "state": found.state,
            "finished": found.finished,
            "reason": found.reason,
            "exit_code": found.exit_code,
            "world_size": record["world_size"],
            "machines": record.get("machines", 1),
            "processes_per_machine": record.get("processes_per_machine", record["world_size"]),
            "restarts": len(record["jobs"]) - 1,
            "output_dir": record["output_dir"],
            "checkpoints": [c.name for c in complete_checkpoints(record["output_dir"])],
        }

    def status_text(self, job: Job, found: dict) -> str:
        return (
            f"Ray job {found['job_id']}: {found['state']}"
            + (f" ({found['reason']})" if found["reason"] else "")
            + f"\n  checkpoints: {', '.join(found['checkpoints']) or 'none'}"
        )

    def wait(self, job: Job, follow: bool) -> int:
        """Ray streams the log (`follow`) until the job ends; then its state, and its message when it gives one."""
        if follow:
            import asyncio

            client = jobs.client(jobs.load(job.run_dir)["address"])

            async def tail() -> None:
                async for lines in client.tail_job_logs(job.job_id):
                    print(lines, end="", flush=True)

            asyncio.run(tail())
        while (found := self.status(job)) is not None and not found.finished:
            time.sleep(self.poll_s)
        if found is None:
            raise jobs.RayJobError(f"the Ray cluster no longer knows job {job.job_id}")
        print(f"grpo: Ray job {job.job_id} {found.state}" + (f": {found.reason}" if found.reason else ""))
        return 0 if found.state == "SUCCEEDED" else self.failed_exit

    def resume(self, job: Job, args: argparse.Namespace) -> int:
        """A new job of the same record (placed again: the cluster may have changed) from the newest complete
        checkpoint."""
        record = jobs.load(job.run_dir)
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
        submitted = self.submit(jobs.RayRequest(job.run_dir, record, resume=str(checkpoints[-1])))
        print(f"grpo: submitted Ray job {submitted} from {checkpoints[-1]}", flush=True)
        return 0 if not args.wait else self.wait(Job(job.run_dir, submitted), follow=False)

    def error_text(self, error: BaseException) -> str:
        return f"{type(error).__name__}: {error}"


def ray_command(argv: list[str]) -> int:
    """`grpo ray status|logs|wait|cancel|resume RUN_DIR`."""
    return follow_command(RayBackend(), argv)
