"""`grpo launch --ray`: the demo as a Ray job on a real local Ray cluster started here (a head of 2 CPUs, stopped
after the module), cancelled and resumed from its checkpoint, and the coded refusals before submission."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is the `ray` extra (pip install -e '.[ray]')")

ROOT = Path(__file__).resolve().parents[2]
GRPO = [sys.executable, "-m", "grpo_schema"]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "RAY_USAGE_STATS_ENABLED": "0"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A real Ray head in the foreground (--block), so stopping its process stops the cluster."""
    dashboard, gcs = free_port(), free_port()
    temp = Path("/tmp") / f"grpo-ray-{os.getpid()}"
    head = subprocess.Popen([str(Path(sys.executable).parent / "ray"), "start", "--head", "--block", "--num-cpus",
                             "2", "--port", str(gcs), "--dashboard-port", str(dashboard), "--include-dashboard",
                             "true", "--dashboard-host", "127.0.0.1", "--temp-dir", str(temp),
                             "--disable-usage-stats"], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    address = f"http://127.0.0.1:{dashboard}"
    from ray.job_submission import JobSubmissionClient

    deadline = time.time() + 120
    while True:
        try:
            JobSubmissionClient(address).list_jobs()
            break
        except Exception:  # noqa: BLE001 - not up yet
            if time.time() > deadline or head.poll() is not None:
                head.kill()
                pytest.fail("the Ray head did not start in 120 s")
            time.sleep(1)
    yield address
    head.terminate()
    try:
        head.wait(60)
    except subprocess.TimeoutExpired:
        head.kill()


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    directory = tmp_path_factory.mktemp("demo")
    subprocess.run([*GRPO, "demo", str(directory)], check=True, env=ENV, capture_output=True)
    return directory / "config.yaml"


def grpo(*args, timeout=400):
    return subprocess.run([*GRPO, *args], capture_output=True, text=True, env=ENV, timeout=timeout, cwd=ROOT)


def test_an_unplaceable_world_size_is_refused_before_submission(cluster, demo):
    from ray.job_submission import JobSubmissionClient

    before = len(JobSubmissionClient(cluster).list_jobs())
    done = grpo("launch", str(demo), "--ray", cluster, "--num-processes", "8")
    assert done.returncode == 2
    assert "GRPO-U012" in done.stderr and "8 CPU" in done.stderr and "2 CPU" in done.stderr
    assert len(JobSubmissionClient(cluster).list_jobs()) == before  # nothing submitted


def test_an_unreachable_cluster_is_a_coded_diagnostic(demo):
    done = grpo("launch", str(demo), "--ray", f"http://127.0.0.1:{free_port()}", timeout=120)
    assert done.returncode == 2 and "GRPO-U011" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_demo_trains_to_completion_as_a_ray_job_on_two_processes(cluster, demo, tmp_path):
    out = tmp_path / "out"
    done = grpo("launch", str(demo), "--ray", cluster, "--num-processes", "2", "--python", sys.executable,
                "--set", "max_steps=4", "--set", "save_steps=2", "--set", f"output_dir={out}",
                "--run-dir", str(tmp_path / "job"), "--wait")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "SUCCEEDED" in done.stdout
    steps = [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert steps[-1] == 4
    assert (out / "checkpoint-2").is_dir() and (out / "checkpoint-4").is_dir()
    status = json.loads(grpo("ray", "status", str(tmp_path / "job"), "--format", "json").stdout)
    assert status["state"] == "SUCCEEDED" and status["world_size"] == 2 and "checkpoint-4" in status["checkpoints"]


@pytest.mark.slow
def test_a_cancelled_ray_job_resumes_from_its_checkpoint(cluster, demo, tmp_path):
    out, job = tmp_path / "out", tmp_path / "job"
    done = grpo("launch", str(demo), "--ray", cluster, "--num-processes", "2", "--python", sys.executable,
                "--set", "max_steps=40", "--set", "save_steps=2", "--set", f"output_dir={out}", "--run-dir", str(job))
    assert done.returncode == 0, done.stderr[-3000:]
    deadline = time.time() + 240
    while not (out / "checkpoint-2" / "runtime_state.json").exists():
        assert time.time() < deadline, grpo("ray", "logs", str(job)).stdout[-3000:]
        time.sleep(1)
    assert grpo("ray", "cancel", str(job)).returncode == 0
    assert grpo("ray", "wait", str(job)).returncode == 4
    status = json.loads(grpo("ray", "status", str(job), "--format", "json").stdout)
    assert status["state"] == "STOPPED" and status["finished"]
    resumed_from = status["checkpoints"][-1]
    stopped_at = int(resumed_from.split("-")[1])
    assert stopped_at < 40
    done = grpo("ray", "resume", str(job), "--wait")
    assert done.returncode == 0, grpo("ray", "logs", str(job)).stdout[-3000:]
    record = json.loads((job / "ray_job.json").read_text())
    assert record["jobs"][-1]["resume"].endswith(resumed_from)
    steps = [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert steps[-1] == 40 and (out / "checkpoint-40").is_dir()
