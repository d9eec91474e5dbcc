"""The service's Ray backend (GRPO_WEB_RUNS_BACKEND=ray) on the real local Ray cluster of tests/ray: POST
/api/v1/runs submits the demo at 2 processes as one Ray job (a machine on each node), which trains to success with
its metrics, checkpoints and log served as for a local run, followed again by a service restarted after a SIGKILL; a world size the cluster cannot place, and a cluster
that does not answer, are refused with their coded diagnostic before anything is queued or submitted."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest

from tests.ray.conftest import ENV, GRPO, demo_text, ray_service_env
from tests.support.env import free_port, wait_for

pytestmark = pytest.mark.slow


def jobs(cluster) -> int:
    from ray.job_submission import JobSubmissionClient

    return len(JobSubmissionClient(cluster.address).list_jobs())


def post(service, text: str, **params):
    with service.client() as client:
        return client.post("/api/v1/runs", content=text, params=params, headers={"Content-Type": "application/yaml"})


def test_a_run_from_the_service_is_a_ray_job_that_trains_to_success(ray_cluster, demo, make_service, no_jobs_left):
    service = make_service(**ray_service_env(ray_cluster))
    text = demo_text(demo, max_steps=4, save_steps=2)
    before = jobs(ray_cluster)
    refused = post(service, text, world_size=3)  # 3 processes of 1 CPU: the 2 nodes of 1 CPU cannot hold them
    assert refused.status_code == 422, refused.text
    (found,) = [d for d in refused.json()["diagnostics"] if d["severity"] == "error"]
    assert found["code"] == "GRPO-U012" and "world size 3 asks 3 CPU" in found["message"], found
    assert "(2 CPU, 0 GPU in all)" in found["message"] and found["hint"]
    with service.client() as client:
        assert client.get("/api/v1/runs").json()["runs"] == []  # nothing queued
    assert jobs(ray_cluster) == before  # nothing submitted

    run = service.launch(text, world_size=2)
    service.wait_state(run["id"], ("running", "succeeded"), 300)
    wait_for(lambda: "machine 1:" in service.run_log(run["id"]), 120, "the machines to start")
    service.stop(signal.SIGKILL)  # the job goes on without the service; a new one follows it again by its id
    service = make_service(**ray_service_env(ray_cluster))
    done = service.wait_state(run["id"], ("succeeded", "failed", "cancelled"), 400)
    log = service.run_log(run["id"])
    assert "service restarted: following Ray job" in log
    assert log.count("[grpo-config] machine 1:") == 1  # the job's output copied once, across the restart
    assert (done["state"], done["exit_code"]) == ("succeeded", 0), log[-4000:]
    assert done["backend"] == "ray" and done["world_size"] == 2
    ray = done["ray"]
    assert ray["state"] == "SUCCEEDED" and ray["job_id"].startswith(f"grpo-{run['id']}-0-")
    assert [m["step"] for m in done["metrics"]] == [1, 2, 3, 4]
    assert done["checkpoints"] == ["checkpoint-2", "checkpoint-4"]
    # the job's output is the run's log, as a local run's: both machines' lines, without Ray's actor prefix
    assert f"submitted to the Ray cluster at {ray_cluster.address} as job {ray['job_id']}: 2 machines" in log
    assert "--num_machines 2 --machine_rank 1" in log and "(Machine pid=" not in log
    assert f"Ray job {ray['job_id']} SUCCEEDED" in log and log.rstrip().endswith("run succeeded")
    # the run's folder is the job's folder: `grpo ray status` answers for it too
    status = subprocess.run(
        [*GRPO, "ray", "status", str(service.runs_dir / run["id"]), "--format", "json"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert json.loads(status.stdout)["state"] == "SUCCEEDED", status.stderr
    assert jobs(ray_cluster) == before + 1


def test_a_ray_cluster_that_does_not_answer_refuses_the_launch(demo, make_service, tmp_path):
    service = make_service(GRPO_WEB_RUNS_BACKEND="ray", GRPO_WEB_RUNS_RAY_ADDRESS=f"http://127.0.0.1:{free_port()}")
    refused = post(service, demo_text(demo), world_size=1)
    assert refused.status_code == 422, refused.text
    codes = {d["code"]: d for d in refused.json()["diagnostics"] if d["severity"] == "error"}
    assert list(codes) == ["GRPO-U011"] and "no Ray cluster answers" in codes["GRPO-U011"]["message"]


def test_the_ray_backend_without_an_address_says_so_at_start(make_service):
    service = make_service(GRPO_WEB_RUNS_BACKEND="ray")
    with service.client() as client:
        answer = client.get("/api/v1/runs")
    assert answer.status_code == 503 and "GRPO_WEB_RUNS_RAY_ADDRESS" in answer.text
