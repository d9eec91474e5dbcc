"""A fourth run backend, registered by name, runs through the service without a line of the manager or the store
written for it: submit, the job's state, its logs, cancel and the outcome all go through grpo_web.runs.backend.

The backend is real, not a stand-in: it starts `grpo launch` detached with `setsid --fork`, so the run's process
group belongs to no one (the service is never its parent and holds no handle on it). The job records its pid and,
at its end, its exit status in files beside it, and prints into RUN_DIR/job.out, which the backend copies into the
run's log. The service is the real app (create_app) with its lifespan, in this process.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from grpo_web.runs import backends, launcher, procs
from grpo_web.runs.backend import JobState, RunBackend, SubmitRefused, Submitted
from tests.runs.conftest import TOKEN, run_yaml
from tests.support.env import wait_for

pytestmark = pytest.mark.skipif(shutil.which("setsid") is None, reason="needs util-linux's setsid")


class DetachedBackend(RunBackend):
    """Runs as process groups this service does not own: `setsid --fork sh -c '...'`."""

    name, label = "detached", "detached"

    def submit(self, run) -> Submitted:
        run_dir = Path(run.run_dir)
        command = launcher.launch_command(
            launcher.config_file(run_dir, run.config_format), run.world_size, run.output_dir, run.resume_checkpoint
        )
        script = (
            f"echo $$ > job.pid; echo '$ {shlex.join(command)}'; {shlex.join(command)}; "
            "echo $? > job.exit.tmp; mv job.exit.tmp job.exit"
        )
        try:
            subprocess.run(
                ["setsid", "--fork", "sh", "-c", f"exec > job.out 2>&1; {script}"],
                cwd=run_dir,
                env=launcher.child_environment(),
                check=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError) as error:
            raise SubmitRefused(f"setsid could not start the run: {error}") from error
        wait_for(lambda: _read(run_dir / "job.pid") is not None, 20, "the detached job to record its pid")
        pid = int(_read(run_dir / "job.pid"))
        return Submitted(str(pid), "RUNNING", f"started detached as process group {pid}", started=True)

    def status(self, run) -> JobState | None:
        run_dir, pid = Path(run.run_dir), int(run.job_id)
        code = _read(run_dir / "job.exit")
        if code is not None:
            return JobState("EXITED", finished=True, exit_code=int(code), note=f"the job exited with {code}")
        if procs.alive(pid, procs.start_time(pid)):
            return JobState("RUNNING")
        return JobState("GONE", finished=True, note="the job ended without an exit status")

    def logs(self, run) -> None:
        run_dir = Path(run.run_dir)
        copied = run_dir / "job.copied"
        done = int(_read(copied) or 0)
        with open(run_dir / "job.out", "rb") as out:
            out.seek(done)
            new = out.read()
        end = new.rfind(b"\n") + 1
        if end:
            with open(run_dir / launcher.LOG_FILE, "ab") as log:
                log.write(new[:end])
            copied.write_text(str(done + end))

    def cancel(self, run) -> str:
        try:
            os.killpg(int(run.job_id), signal.SIGKILL)
        except ProcessLookupError:
            return "cancel requested: the job had already ended"
        return f"cancel requested: SIGKILL sent to process group {run.job_id}"

    def outcome(self, run, found: JobState):
        if run.cancel_requested_at is not None:
            return "cancelled", found.exit_code, "cancelled on request"
        if found.exit_code == 0:
            return "succeeded", 0, None
        return "failed", found.exit_code, found.note


def _read(path: Path) -> str | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return text or None


@pytest.fixture
def service(tmp_path):
    fastapi = pytest.importorskip("fastapi.testclient")
    from grpo_web.app import create_app
    from grpo_web.settings import Settings

    backends.register("detached", DetachedBackend)
    settings = Settings(runs=True, runs_dir=tmp_path / "runs", runs_backend="detached", token=TOKEN, runs_poll_s=0.1)
    try:
        with fastapi.TestClient(create_app(settings), headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            yield client
    finally:
        backends.unregister("detached")
        for pid_file in (tmp_path / "runs").glob("*/job.pid"):
            try:
                os.killpg(int(pid_file.read_text()), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass


def run_of(client, run_id: str) -> dict:
    answer = client.get(f"/api/v1/runs/{run_id}")
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_registered_backend_submits_reports_logs_and_cancels_through_the_service(service, assets):
    # a run that would train for minutes: it is cancelled long before
    answer = service.post(
        "/api/v1/runs", content=run_yaml(assets, max_steps=500), headers={"Content-Type": "application/yaml"}
    )
    assert answer.status_code == 201, answer.text
    run = answer.json()
    wait_for(lambda: run_of(service, run["id"])["state"] == "running", 30, "the run to start")
    found = run_of(service, run["id"])
    pid = int(found["job"]["job_id"])
    assert found["backend"] == "detached" and found["job"]["state"] == "RUNNING"
    assert os.getsid(pid) == pid  # a session of its own, and not a child of this process (no handle on it)
    assert int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) != os.getpid()  # its parent

    def logged() -> str:
        return service.get(f"/api/v1/runs/{run['id']}/logs", params={"limit": 1 << 20}).text

    wait_for(lambda: "grpo_schema launch" in logged(), 30, "the job's output in the run's log", logged)
    assert f"started detached as process group {pid}" in logged()

    cancelled = service.post(f"/api/v1/runs/{run['id']}/cancel")
    assert cancelled.status_code == 202, cancelled.text
    wait_for(
        lambda: run_of(service, run["id"])["state"] == "cancelled",
        30,
        "the run to be cancelled",
        lambda: str(run_of(service, run["id"])),
    )
    found = run_of(service, run["id"])
    assert found["reason"] == "cancelled on request"
    assert "cancel requested: SIGKILL sent to process group" in logged()
    wait_for(lambda: not procs.alive(pid, procs.start_time(pid)), 10, "the process group to be gone")


def test_an_unknown_backend_is_refused_at_start_with_the_registered_names(tmp_path):
    from grpo_web.runs.manager import RunManager
    from grpo_web.settings import Settings

    with pytest.raises(RuntimeError, match="no run backend called 'nomad'; the registered ones are local, ray, slurm"):
        RunManager(Settings(runs=True, runs_dir=tmp_path / "runs", runs_backend="nomad"))
