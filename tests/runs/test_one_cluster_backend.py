"""One cluster backend, written once (grpo_runtime.clusters.backend.ClusterBackend), serves both the command line
and the service: the service submits and follows a run through it (grpo_web.runs.cluster, with nothing but the
run's request written for the service), and `grpo NAME status|logs|cancel|wait RUN_DIR` (follow_command) answers
for the same job from the run's folder; a cancel from the command line is what the service reports.

The backend is real: its jobs are `grpo launch` detached with `setsid --fork` (no one's child, no handle held),
recording their pid and, at their end, their exit status beside their output (RUN_DIR/job.out), which the
service copies into the run's log.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from grpo_runtime.clusters import backends as clusters
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
from tests.support.env import wait_for
from tests.support.run_config import run_yaml
from tests.support.service import TOKEN

pytest.importorskip("fastapi", reason="the service needs the web extra")
pytestmark = pytest.mark.skipif(shutil.which("setsid") is None, reason="needs util-linux's setsid")

RECORD = "detached_job.json"


@dataclass(frozen=True)
class Request:
    run_dir: Path
    command: list[str]


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def _alive(pid: int) -> bool:
    stat = _read(Path(f"/proc/{pid}/stat"))
    return stat is not None and stat.rsplit(")", 1)[1].split()[0] != "Z"


class DetachedCluster(ClusterBackend):
    """A cluster of one machine whose jobs are process groups nobody owns."""

    name, label, errors, poll_s = "detached", "detached", (OSError,), 0.2

    def submit(self, request: Request, env: dict[str, str] | None = None) -> str:
        script = (
            f"echo $$ > job.pid; echo '$ {shlex.join(request.command)}'; {shlex.join(request.command)}; "
            "echo $? > job.exit.tmp; mv job.exit.tmp job.exit"
        )
        subprocess.run(
            ["setsid", "--fork", "sh", "-c", f"exec > job.out 2>&1; {script}"],
            cwd=request.run_dir,
            env=env,
            check=True,
            timeout=30,
        )
        wait_for(lambda: _read(request.run_dir / "job.pid") is not None, 20, "the detached job to record its pid")
        job_id = _read(request.run_dir / "job.pid")
        (request.run_dir / RECORD).write_text(json.dumps({"job_id": job_id}))
        return job_id

    def status(self, job: Job) -> JobState | None:
        code = _read(job.run_dir / "job.exit")
        if code is not None:
            return JobState("EXITED", finished=True, exit_code=int(code), note=f"job {job.job_id} exited with {code}")
        if _alive(int(job.job_id)):
            return JobState("RUNNING", note=f"job {job.job_id} is running")
        if (job.run_dir / "job.cancelled").exists():
            return JobState("CANCELLED", finished=True, note=f"job {job.job_id} was cancelled")
        return JobState("GONE", finished=True, note=f"job {job.job_id} ended without an exit status")

    def logs(self, job: Job) -> str:
        return (job.run_dir / "job.out").read_text(errors="replace")

    def cancel(self, job: Job) -> str:
        (job.run_dir / "job.cancelled").touch()
        os.killpg(int(job.job_id), signal.SIGKILL)
        return f"SIGKILL sent to process group {job.job_id}"

    def outcome(self, found: JobState, cancel_requested: bool = False) -> tuple[str, int | None, str | None]:
        if found.state == "CANCELLED":
            return CANCELLED, None, ("cancelled on request; " if cancel_requested else "") + found.note
        if found.exit_code == 0:
            return SUCCEEDED, 0, None
        return FAILED, found.exit_code, found.note

    def load(self, run_dir: Path, action: str) -> Job:
        try:
            return Job(run_dir, json.loads((run_dir / RECORD).read_text())["job_id"])
        except (OSError, ValueError, KeyError) as error:
            raise JobFolderError(f"{run_dir} is not a detached job's folder ({error})") from None

    def report(self, job: Job) -> dict:
        found = self.status(job)
        return {"job_id": job.job_id, "state": found.state, "finished": found.finished, "exit_code": found.exit_code}


def service_backend():
    """The service's side of the same backend: only the request for a run is the service's own."""
    from grpo_web.runs import launcher
    from grpo_web.runs.cluster import ClusterRunBackend

    class DetachedRuns(ClusterRunBackend):
        name, label, copies_log = "detached", "detached", True

        def request(self, run) -> Request:
            run_dir = Path(run.run_dir)
            config = launcher.config_file(run_dir, run.config_format)
            return Request(
                run_dir, launcher.launch_command(config, run.world_size, run.output_dir, run.resume_checkpoint)
            )

    return DetachedRuns


@pytest.fixture
def service(tmp_path):
    from fastapi.testclient import TestClient

    from grpo_web.app import create_app
    from grpo_web.runs import backends
    from grpo_web.settings import Settings

    clusters.register(DetachedCluster)
    backends.register("detached", service_backend())
    settings = Settings(runs=True, runs_dir=tmp_path / "runs", runs_backend="detached", token=TOKEN, runs_poll_s=0.1)
    try:
        with TestClient(create_app(settings), headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            yield client
    finally:
        backends.unregister("detached")
        clusters.unregister("detached")
        for pid_file in (tmp_path / "runs").glob("*/job.pid"):
            try:
                os.killpg(int(pid_file.read_text()), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass


def follow(capsys, *argv: str) -> tuple[int, str, str]:
    code = follow_command(DetachedCluster(), list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_one_backend_serves_the_service_and_the_follow_command(service, assets, capsys, tmp_path):
    assert clusters.chosen(["c.yaml", "--detached"]).name == "detached"  # `grpo launch --detached` would reach it
    answer = service.post(
        "/api/v1/runs", content=run_yaml(assets, max_steps=500), headers={"Content-Type": "application/yaml"}
    )
    assert answer.status_code == 201, answer.text
    run_id = answer.json()["id"]

    def run() -> dict:
        return service.get(f"/api/v1/runs/{run_id}").json()

    def logged() -> str:
        return service.get(f"/api/v1/runs/{run_id}/logs", params={"limit": 1 << 20}).text

    wait_for(lambda: run()["state"] == "running", 30, "the run to start", lambda: str(run()))
    run_dir, job_id = tmp_path / "runs" / run_id, run()["job"]["job_id"]
    assert run()["backend"] == "detached" and f"submitted to detached as job {job_id}" in logged()

    # the command line answers for the service's job from the run's folder, through the same methods
    code, out, _ = follow(capsys, "status", str(run_dir), "--format", "json")
    assert code == 0 and json.loads(out) == {"job_id": job_id, "state": "RUNNING", "finished": False, "exit_code": None}
    wait_for(lambda: "grpo_schema launch" in logged(), 30, "the job's output in the run's log", logged)
    code, out, _ = follow(capsys, "logs", str(run_dir))
    assert code == 0 and out.startswith("$ ") and "grpo_schema launch" in out

    # a cancel from the command line ends the run the service follows, in the backend's words
    code, out, _ = follow(capsys, "cancel", str(run_dir))
    assert (code, out) == (0, f"grpo: SIGKILL sent to process group {job_id}\n")
    wait_for(lambda: run()["state"] == "cancelled", 30, "the service to settle the run", lambda: str(run()))
    assert run()["reason"] == f"job {job_id} was cancelled" and run()["job"]["state"] == "CANCELLED"
    code, _, err = follow(capsys, "wait", str(run_dir))
    assert code == 2 and f"grpo: job {job_id} was cancelled" in err
