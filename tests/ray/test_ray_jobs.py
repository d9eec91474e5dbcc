"""`grpo launch --ray`: the demo as a Ray job on the real local Ray cluster of tests/ray (a head and a worker of 1
CPU each): 2 processes placed as 2 accelerate machines, one on each node; cancelled mid-run and resumed from its
checkpoint to completion; and the coded refusals before submission."""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from pathlib import Path

import pytest

from tests.ray.conftest import ENV
from tests.support.cli import grpo as grpo_command
from tests.support.env import free_port, wait_until_gone

ROOT = Path(__file__).resolve().parents[2]


def grpo(*args, timeout=400):
    return grpo_command(*args, env=ENV, timeout=timeout, cwd=ROOT, subprocess=True)


@pytest.mark.parametrize("world", [3, 8])
def test_an_unplaceable_world_size_is_refused_before_submission(ray_cluster, demo, world):
    """3 processes of 1 CPU: neither one node (1 CPU) nor the two together (2 CPU) hold them."""
    from ray.job_submission import JobSubmissionClient

    before = len(JobSubmissionClient(ray_cluster.address).list_jobs())
    done = grpo("launch", str(demo), "--ray", ray_cluster.address, "--num-processes", str(world))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "GRPO-U012" in done.stderr and f"world size {world} asks {world} CPU" in done.stderr
    assert "2 live nodes have" in done.stderr and "(2 CPU, 0 GPU in all)" in done.stderr
    assert len(JobSubmissionClient(ray_cluster.address).list_jobs()) == before  # nothing submitted


def test_machines_of_a_fixed_size_that_no_node_holds_are_refused(ray_cluster, demo):
    done = grpo("launch", str(demo), "--ray", ray_cluster.address, "--num-processes", "2", "--processes-per-node", "2")
    assert done.returncode == 2 and "GRPO-U012" in done.stderr and "machines of 2 processes" in done.stderr


def test_an_unreachable_cluster_is_a_coded_diagnostic(demo):
    done = grpo("launch", str(demo), "--ray", f"http://127.0.0.1:{free_port()}", timeout=120)
    assert done.returncode == 2 and "GRPO-U011" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_cancelled_ray_job_resumes_from_its_checkpoint(ray_cluster, demo, tmp_path, no_jobs_left):
    out, job = tmp_path / "out", tmp_path / "job"
    done = grpo(
        "launch",
        str(demo),
        "--ray",
        ray_cluster.address,
        "--num-processes",
        "2",
        "--python",
        sys.executable,
        "--set",
        "max_steps=40",
        "--set",
        "save_steps=2",
        "--set",
        f"output_dir={out}",
        "--run-dir",
        str(job),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 machines x 1 process = world size 2" in done.stdout
    deadline = time.time() + 240
    while not (out / "checkpoint-2" / "runtime_state.json").exists():
        assert time.time() < deadline, grpo("ray", "logs", str(job)).stdout[-3000:]
        time.sleep(1)
    assert grpo("ray", "cancel", str(job)).returncode == 0
    assert grpo("ray", "wait", str(job)).returncode == 4
    status = json.loads(grpo("ray", "status", str(job), "--format", "json").stdout)
    assert status["state"] == "STOPPED" and status["finished"]
    wait_until_gone(str(out))  # both machines' processes ended, none trains on

    resumed_from = status["checkpoints"][-1]
    stopped_at = int(resumed_from.split("-")[1])
    assert stopped_at < 40
    done = grpo("ray", "resume", str(job), "--wait")
    logs = grpo("ray", "logs", str(job))
    log = logs.stdout
    assert done.returncode == 0 and "SUCCEEDED" in done.stdout, log[-3000:]
    assert logs.returncode == 0, logs.stderr[-3000:]
    placed = re.search(r"machines on nodes 0: \S+ \((\w+)\), 1: \S+ \((\w+)\)", log)
    assert placed, log[-3000:]  # one machine on each node of the cluster: the placement group spread them
    assert set(placed.groups()) == {node["node_id"] for node in ray_cluster.nodes()}
    assert "--num_machines 2 --machine_rank 1 --main_process_ip" in log
    record = json.loads((job / "ray_job.json").read_text())
    assert record["jobs"][-1]["resume"].endswith(resumed_from)
    steps = [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert steps[-1] == 40 and (out / "checkpoint-40").is_dir()  # trained to completion: metrics and checkpoints
    status = json.loads(grpo("ray", "status", str(job), "--format", "json").stdout)
    assert status["state"] == "SUCCEEDED" and status["world_size"] == 2 and status["machines"] == 2


# A stand-in for a training machine: it reads the vLLM server's address the driver gave it and asks its /health/.
TRAINER = """
import json, sys, urllib.request
args = sys.argv[2:]
sets = dict(args[i + 1].split("=", 1) for i, word in enumerate(args) if word == "--set")
rank = args[args.index("--machine_rank") + 1]
url = "http://%s:%s/health/" % (sets["vllm_server_host"], sets["vllm_server_port"])
status = urllib.request.urlopen(url, timeout=10).status
open("%s/machine-%s.json" % (sys.argv[1], rank), "w").write(json.dumps({"url": url, "status": status}))
"""


def driver_job(cluster, folder: Path, server: list[str], port: int) -> tuple[str, str]:
    """The job driver of `grpo launch --ray` with 2 machines and a server bundle, on the cluster; (state, log)."""
    from ray.job_submission import JobSubmissionClient

    import grpo_runtime
    import grpo_schema

    work = folder / "work"
    (work / "health").mkdir(parents=True)
    (work / "health" / "index.html").write_text("ok")  # what a stand-in server answers at /health/
    (work / "trainer.py").write_text(TRAINER)
    entrypoint = [
        sys.executable,
        "-m",
        "grpo_runtime.clusters.ray.driver",
        "--machines",
        "2",
        "--cpus",
        "0.5",
        "--server-cpus",
        "0.5",
        "--server-port",
        str(port),
        "--server-timeout",
        "60",
        "--server-command",
        json.dumps(server),
        "--",
        sys.executable,
        "trainer.py",
        str(folder),
    ]
    client = JobSubmissionClient(cluster.address)
    job = client.submit_job(
        entrypoint=" ".join(shlex.quote(word) for word in entrypoint),
        runtime_env={
            "working_dir": str(work),
            "py_modules": [str(Path(m.__file__).parent) for m in (grpo_runtime, grpo_schema)],
        },
    )
    deadline = time.time() + 240
    while not client.get_job_status(job).is_terminal():
        assert time.time() < deadline, client.get_job_logs(job)[-3000:]
        time.sleep(1)
    return str(client.get_job_status(job).value), client.get_job_logs(job)


@pytest.mark.slow
def test_the_driver_serves_vllm_from_a_bundle_of_its_own_before_the_machines(ray_cluster, tmp_path, no_jobs_left):
    """The open-r1 layout on Ray: the server's bundle starts first, the machines get its address once its /health/
    answers, and it is stopped when they end; a server that exits early fails the job before any machine starts."""
    port = free_port()
    state, log = driver_job(ray_cluster, tmp_path, [sys.executable, "-m", "http.server", str(port)], port)
    assert state == "SUCCEEDED", log[-3000:]
    assert "and a vLLM server of {'CPU': 0.5}" in log and "vLLM server ready at http://" in log
    for rank in (0, 1):
        answer = json.loads((tmp_path / f"machine-{rank}.json").read_text())
        assert answer["status"] == 200 and answer["url"].endswith(f":{port}/health/")
    wait_until_gone(f"http.server {port}")  # stopped with the machines

    failing = tmp_path / "failing"
    failing.mkdir()
    state, log = driver_job(ray_cluster, failing, [sys.executable, "-c", "raise SystemExit(3)"], free_port())
    assert state == "FAILED" and "the vLLM server exited before it answered" in log, log[-3000:]
    assert not list(failing.glob("machine-*.json")) and "machine 0:" not in log  # no machine was started
