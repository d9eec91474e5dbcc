"""One interface for a run that trains on a cluster instead of this machine, behind `grpo launch FILE --NAME` and
`grpo NAME status|logs|wait|cancel|resume RUN_DIR` for every cluster (Slurm, Ray, and the next one).

A cluster backend submits a checked config as a job and writes the job's folder (RUN_DIR: a copy of the config and
the job's record), then answers for the job from that folder: `submit` (the `grpo launch` command line), `status`
(the job's state as the scheduler reports it, with what it left in output_dir), `logs`, `wait` (until the job
ends, printing its log with `follow`), `cancel`, `resume` (a new job from the newest complete checkpoint) and
`outcome` (the exit code a finished job's status stands for). `follow_command` is the one `grpo NAME ...` command
over it; grpo_runtime.clusters.backends names the backends.

The service's run backends (grpo_web.runs.backend) sit on the same engines: grpo_web.runs.slurm and
grpo_web.runs.rayjobs submit and follow a service run with the functions these backends use.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from grpo_schema.commands.options import add_format


class JobFolderError(Exception):
    """RUN_DIR is not a job's folder (or its job was never submitted): the message says which."""


class ClusterBackend:
    """The interface every cluster backend implements."""

    name: str = ""  # the flag of `grpo launch --NAME` and the command `grpo NAME`
    label: str = ""  # how messages name it ("Slurm", "Ray")
    help: dict[str, str] = {}  # the subcommands' help where the backend says more than the default
    errors: tuple[type[BaseException], ...] = ()  # what the scheduler raises when it refuses or does not answer

    def submit(self, argv: list[str]) -> int:
        """`grpo launch FILE --NAME ...`: check, place, write RUN_DIR, submit; an exit code."""
        raise NotImplementedError

    def load(self, run_dir: Path, action: str) -> Any:
        """The job's record in RUN_DIR; JobFolderError when there is none (or none to `action`)."""
        raise NotImplementedError

    def status(self, job: Any) -> dict:
        """The job now: at least job_id, state, reason, finished, exit_code, checkpoints."""
        raise NotImplementedError

    def status_text(self, job: Any, found: dict) -> str:
        return f"{self.label} job {found['job_id']}: {found['state']}"

    def logs(self, job: Any) -> str:
        raise NotImplementedError

    def wait(self, job: Any, follow: bool) -> int:
        """Until the job ends (printing its log as it grows when `follow`); `outcome`'s exit code."""
        raise NotImplementedError

    def cancel(self, job: Any) -> str:
        """Ask the scheduler to stop the job; what to tell the user."""
        raise NotImplementedError

    def resume_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--wait", action="store_true")

    def resume(self, job: Any, args: argparse.Namespace) -> int:
        raise NotImplementedError

    def outcome(self, found: dict) -> int:
        """A finished job's exit code for `grpo NAME wait`: 0 when it completed, else the backend's code."""
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


def _act(backend: ClusterBackend, job: Any, args: argparse.Namespace) -> int:
    if args.action == "status":
        found = backend.status(job)
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
