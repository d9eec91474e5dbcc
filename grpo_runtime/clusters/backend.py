"""The one interface of a run that trains on a cluster (Slurm, Ray, and the next one): written once per cluster,
driven by `grpo launch FILE --NAME`, `grpo NAME status|logs|wait|cancel|resume RUN_DIR` and the service.

A job is plain data, `Job(run_dir, job_id)`: the job's folder (RUN_DIR: a copy of the config and the cluster's
record of the job) and the cluster's id for it. A cluster backend answers for it with the same methods whoever
asks:
- `submit(request)`: submit the job a request describes (the cluster's own plain data: Slurm's JobSpec, Ray's
  RayRequest; both name RUN_DIR and the checkpoint it resumes from, if any), write its record in RUN_DIR; its id;
- `status(job)`: one JobState (the cluster's own state word and reason, started, finished, exit code, one sentence
  that says it), or None when the cluster no longer knows the job;
- `logs(job)`: what the job printed so far; `cancel(job)`: ask the cluster to stop it, a line that says so;
- `outcome(found)`: a finished job's end as succeeded, failed or cancelled, with its exit code and reason.
Everything the cluster raises when it refuses or does not answer is one of the backend's `errors`.

The command line is the same backend's too: `launch(argv)` (`grpo launch FILE --NAME ...`), `load` (RUN_DIR's
job), `report` (`grpo NAME status --format json`), `wait`, `resume` (a new job from the newest complete
checkpoint), and `follow_command`, the one `grpo NAME ...` command over any backend. The service's run backends
(grpo_web.runs.cluster) adapt a service run to a Job and call these same methods, so a job is the same job
either way and `grpo NAME status RUNS_DIR/<id>` answers for a service run. grpo_runtime.clusters.backends names
the backends. Standard library and grpo_schema only: the service imports this when a cluster run is followed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpo_schema.commands.options import add_format

SUCCEEDED, FAILED, CANCELLED = "succeeded", "failed", "cancelled"  # a finished job's outcome


class JobFolderError(Exception):
    """RUN_DIR is not a job's folder (or its job was never submitted): the message says which."""


@dataclass(frozen=True)
class Job:
    """A submitted job: its folder and the cluster's id for it."""

    run_dir: Path
    job_id: str


@dataclass(frozen=True)
class JobState:
    """A job as its cluster reports it now: the cluster's own state word and reason, whether it has started and
    ended, and its exit status once it has. (The service's grpo_web.runs.backend.JobState has the same fields, so
    a service that runs on this machine imports nothing of grpo_runtime.)"""

    state: str
    reason: str | None = None
    started: bool = True
    finished: bool = False
    exit_code: int | None = None
    note: str | None = None  # one sentence: what happened to the job (a line for a run's log)
    detail: object = field(default=None, compare=False)  # the cluster's own answer, for `outcome` and `report`


class ClusterBackend:
    """The interface every cluster backend implements (the defaults say what a backend may leave out)."""

    name: str = ""  # the flag of `grpo launch --NAME` and the command `grpo NAME`
    label: str = ""  # how messages name it ("Slurm", "Ray")
    help: dict[str, str] = {}  # the subcommands' help where the backend says more than the default
    errors: tuple[type[BaseException], ...] = ()  # what the cluster raises when it refuses or does not answer
    failed_exit: int = 2  # `grpo NAME wait`'s exit code for a job that did not succeed
    poll_s: float = 2.0  # how often `wait` asks

    # --- the job: the command line and the service alike ---------------------------------------------------------
    def submit(self, request: Any, env: dict[str, str] | None = None) -> str:
        """Submit the job `request` describes and record it in its RUN_DIR; the job's id. `env`: the environment
        the cluster's client runs in and passes on (None: this process's)."""
        raise NotImplementedError

    def status(self, job: Job) -> JobState | None:
        raise NotImplementedError

    def logs(self, job: Job) -> str:
        raise NotImplementedError

    def cancel(self, job: Job) -> str:
        """Ask the cluster to stop the job (its checkpoints stay); what to tell the user."""
        raise NotImplementedError

    def outcome(self, found: JobState, cancel_requested: bool = False) -> tuple[str, int | None, str | None]:
        """A finished job's end: (SUCCEEDED, FAILED or CANCELLED; exit code; reason in words)."""
        raise NotImplementedError

    def forgotten(self, job: Job, last_state: str | None) -> str:
        """Why a job the cluster no longer knows counts as failed."""
        return f"{self.label} no longer knows job {job.job_id}; its last known state was {last_state or 'unknown'}"

    # --- the command line ---------------------------------------------------------------------------------------
    def launch(self, argv: list[str]) -> int:
        """`grpo launch FILE --NAME ...`: check, place, write RUN_DIR, submit; an exit code."""
        raise NotImplementedError

    def load(self, run_dir: Path, action: str) -> Job:
        """RUN_DIR's job; JobFolderError when there is none (or none to `action`)."""
        raise NotImplementedError

    def report(self, job: Job) -> dict:
        """`grpo NAME status --format json`: at least job_id, state, reason, finished, exit_code, checkpoints."""
        raise NotImplementedError

    def status_text(self, job: Job, found: dict) -> str:
        return f"{self.label} job {found['job_id']}: {found['state']}"

    def wait(self, job: Job, follow: bool) -> int:
        """Until the job ends (printing its log as it grows when `follow`); 0 when it succeeded."""
        printed = 0
        while True:
            found = self.status(job)
            if follow:
                text = self.logs(job)
                sys.stdout.write(text[printed:])
                sys.stdout.flush()
                printed = len(text)
            if found is None or found.finished:
                break
            time.sleep(self.poll_s)
        return self.ended(job, found)

    def ended(self, job: Job, found: JobState | None) -> int:
        """The line `wait` ends with, and its exit code."""
        succeeded = found is not None and self.outcome(found)[0] == SUCCEEDED
        text = found.note if found else self.forgotten(job, None)
        print(f"grpo: {text}", file=sys.stdout if succeeded else sys.stderr)
        return 0 if succeeded else self.failed_exit

    def resume_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--wait", action="store_true")

    def resume(self, job: Job, args: argparse.Namespace) -> int:
        raise NotImplementedError

    def error_text(self, error: BaseException) -> str:
        return str(error)


def follow_command(backend: ClusterBackend, argv: list[str]) -> int:
    """`grpo NAME status|logs|wait|cancel|resume RUN_DIR`, for any cluster backend."""
    name = backend.name
    parser = argparse.ArgumentParser(prog=f"grpo {name}", description=f"Follow jobs from `grpo launch --{name}`.")
    sub = parser.add_subparsers(dest="action", required=True)
    helps = {
        "status": "the job's state, exit reason and checkpoints",
        "logs": "the job's output",
        "wait": "wait for the job to end; exit 0 if it completed",
        "cancel": "stop the job (its checkpoints stay)",
        "resume": "submit the job again from its newest complete checkpoint",
        **backend.help,
    }
    commands = {action: sub.add_parser(action, help=text) for action, text in helps.items()}
    add_format(commands["status"], ("text", "json"))
    commands["logs"].add_argument("--follow", "-f", action="store_true", help="keep printing until the job ends")
    backend.resume_options(commands["resume"])
    for command in commands.values():
        command.add_argument("run_dir", help=f"the job's folder (printed by grpo launch --{name})")
    args = parser.parse_args(argv)
    try:
        job = backend.load(Path(args.run_dir), args.action)
    except JobFolderError as error:
        print(f"grpo {name}: {error}", file=sys.stderr)
        return 2
    try:
        return _act(backend, job, args)
    except backend.errors as error:  # a cluster that refused or went away is a message, not a traceback
        print(f"grpo {name}: {backend.error_text(error)}", file=sys.stderr)
        return 2


def _act(backend: ClusterBackend, job: Job, args: argparse.Namespace) -> int:
    if args.action == "status":
        found = backend.report(job)
        print(json.dumps(found, indent=1) if args.format == "json" else backend.status_text(job, found))
        return 0
    if args.action == "logs":
        if args.follow:
            return backend.wait(job, follow=True)
        sys.stdout.write(backend.logs(job))
        return 0
    if args.action == "wait":
        return backend.wait(job, follow=False)
    if args.action == "cancel":
        print(f"grpo: {backend.cancel(job)}")
        return 0
    return backend.resume(job, args)
