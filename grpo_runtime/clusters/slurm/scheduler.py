"""Slurm's commands, as the runs see them: submit (sbatch), look up (scontrol / sacct), cancel (scancel).

Where a job's state comes from, in order:
1. `scontrol show job` while the controller knows the job: pending, running, and for MinJobAge seconds after the
   end (state, reason, exit code and restarts, in one answer);
2. `sacct`: Slurm's accounting (slurmdbd), which remembers every job;
3. `sacct --completion`: the job completion log (JobCompType=jobcomp/filetxt), for clusters without slurmdbd.
A job none of them knows is reported as unknown, never guessed.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_S = 30
RUNNING = {"RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "STAGE_OUT", "SIGNALING", "RESIZING"}
PENDING = {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SPECIAL_EXIT"}
# Slurm's end states, in words; "killed" ones can be resumed from their last complete checkpoint.
ENDINGS = {
    "COMPLETED": "completed",
    "CANCELLED": "was cancelled",
    "FAILED": "failed",
    "TIMEOUT": "was killed at its time limit",
    "PREEMPTED": "was preempted",
    "NODE_FAIL": "was ended by a node failure",
    "BOOT_FAIL": "could not start: its nodes failed to boot",
    "DEADLINE": "was killed at its deadline",
    "OUT_OF_MEMORY": "was killed for running out of memory",
}
KILLED = {"TIMEOUT", "PREEMPTED", "NODE_FAIL", "DEADLINE", "OUT_OF_MEMORY"}


class SlurmError(RuntimeError):
    """A Slurm command failed or is missing; the message is Slurm's own."""


@dataclass(frozen=True)
class JobStatus:
    job_id: str
    state: str  # Slurm's JobState: PENDING, RUNNING, COMPLETED, TIMEOUT, ...
    reason: str | None = None  # Slurm's Reason (TimeLimit, Resources, ...) when it gives one
    exit_code: int | None = None  # the batch script's exit code; 128+N when a signal N ended it
    restarts: int = 0
    nodes: str | None = None
    source: str = "scontrol"  # which command answered

    @property
    def pending(self) -> bool:
        return self.state in PENDING

    @property
    def finished(self) -> bool:
        return self.state not in PENDING | RUNNING

    @property
    def killed(self) -> bool:
        return self.state in KILLED

    def describe(self) -> str:
        """One sentence: what happened to the job, with Slurm's own state and reason."""
        said = self.state + (f", Reason={self.reason}" if self.reason and self.reason != "None" else "")
        if self.pending:
            return f"Slurm job {self.job_id} is waiting in the queue ({said})"
        if not self.finished:
            return f"Slurm job {self.job_id} is {self.state.lower()} on {self.nodes or 'its nodes'}"
        words = ENDINGS.get(self.state, f"ended as {self.state}")
        if self.state == "FAILED" and self.exit_code is not None:
            words += f" with exit code {self.exit_code}"
        return f"Slurm job {self.job_id} {words} ({said})"


def _run(command: list[str], env: dict[str, str] | None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise SlurmError(f"{command[0]} is not installed on this machine (it comes with Slurm's client tools)")
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{command[0]} did not answer within {TIMEOUT_S} s; is slurmctld reachable?")


def _said(answer: subprocess.CompletedProcess) -> str:
    return (answer.stderr.strip() or answer.stdout.strip() or f"exit status {answer.returncode}")[-2000:]


def submit(script: Path, env: dict[str, str] | None = None) -> str:
    """sbatch SCRIPT; returns the job id. Raises SlurmError with sbatch's message when it refuses."""
    answer = _run(["sbatch", "--parsable", str(script)], env)
    if answer.returncode != 0:
        raise SlurmError(f"sbatch refused the job: {_said(answer)}")
    job_id = answer.stdout.strip().split(";")[0]  # "ID" or "ID;CLUSTER"
    if not job_id.isdigit():
        raise SlurmError(f"sbatch answered {answer.stdout.strip()!r}, not a job id")
    return job_id


def cancel(job_id: str, env: dict[str, str] | None = None) -> None:
    answer = _run(["scancel", job_id], env)
    if answer.returncode != 0:
        raise SlurmError(f"scancel {job_id} failed: {_said(answer)}")


def query(job_id: str, env: dict[str, str] | None = None) -> JobStatus | None:
    """The job's state from the first source that knows it (see the module's docstring), or None."""
    return (
        _from_scontrol(job_id, env)
        or _from_sacct(job_id, env, completion=False)
        or _from_sacct(job_id, env, completion=True)
    )


def _exit(text: str | None) -> int | None:
    """Slurm's 'CODE:SIGNAL' as one exit status (128+SIGNAL when a signal ended it)."""
    match = re.fullmatch(r"(\d+):(\d+)", (text or "").strip())
    if not match:
        return None
    code, sig = int(match.group(1)), int(match.group(2))
    return 128 + sig if sig else code


def parse_scontrol(text: str) -> dict[str, str]:
    """`scontrol show job -o` fields; values run to the next ` Key=` (Command= and paths may hold spaces)."""
    fields: dict[str, str] = {}
    for match in re.finditer(r"(?:^|\s)([A-Za-z/:_]+)=(.*?)(?=\s+[A-Za-z/:_]+=|\s*$)", text.strip()):
        fields.setdefault(match.group(1), match.group(2))
    return fields


def _from_scontrol(job_id: str, env: dict[str, str] | None) -> JobStatus | None:
    answer = _run(["scontrol", "show", "job", "-o", job_id], env)
    if answer.returncode != 0 and "Invalid job id" not in answer.stderr:  # no answer is not "no such job"
        raise SlurmError(f"scontrol show job {job_id} failed: {_said(answer)}")
    if answer.returncode != 0 or not answer.stdout.strip():  # no longer known to the controller
        return None
    fields = parse_scontrol(answer.stdout.splitlines()[0])
    if fields.get("JobId") != job_id:
        return None
    return JobStatus(
        job_id,
        fields.get("JobState", "UNKNOWN"),
        fields.get("Reason"),
        _exit(fields.get("ExitCode")),
        int(fields.get("Restarts", "0") or 0),
        fields.get("NodeList"),
        "scontrol",
    )


def _from_sacct(job_id: str, env: dict[str, str] | None, completion: bool) -> JobStatus | None:
    fields = "JobID,State,ExitCode,NodeList" + ("" if completion else ",Reason")
    command = ["sacct", "-n", "-P", "-j", job_id, "-o", fields] + (["--completion"] if completion else ["-X"])
    answer = _run(command, env)
    if answer.returncode != 0:  # no accounting storage, or no completion log: the next source decides
        return None
    for line in answer.stdout.splitlines():
        values = line.split("|")
        if values[0] != job_id:
            continue
        state = values[1].split()[0] if values[1] else "UNKNOWN"  # "CANCELLED by 0" -> CANCELLED
        reason = values[4] if len(values) > 4 and values[4] else None
        return JobStatus(
            job_id,
            state,
            reason,
            _exit(values[2]),
            0,
            values[3] or None,
            "sacct --completion" if completion else "sacct",
        )
    return None
