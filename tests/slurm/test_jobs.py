"""The demo as real Slurm jobs on a real (one-node) cluster: from `grpo launch --slurm` and from POST
/api/v1/runs on a service configured for Slurm. A 1-node job and a 2-task job (two accelerate machines of one CPU
process each) train to a rising reward; a cancelled job and one killed at its time limit are reported with
Slurm's state and reason; the killed one resumes from its last complete checkpoint; a restarted service follows
its job again by id. The time-limited job is submitted first and counts down (60-150 s: Slurm's limits are in
minutes and checked every 30 s) while the others run. About 5 minutes on two heavily shared cores."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.slurm.conftest import grpo
from tests.support.env import wait_for

pytestmark = pytest.mark.slow


def submitted(answer) -> Path:
    """The job folder `grpo launch --slurm` printed."""
    assert answer.returncode == 0, answer.stdout + answer.stderr
    match = re.search(r"script: (\S+)/job\.sbatch", answer.stdout)
    assert match and re.search(r"submitted Slurm job \d+", answer.stdout), answer.stdout
    return Path(match.group(1))


def status(run_dir: Path) -> dict:
    answer = grpo("slurm", "status", str(run_dir), "--format", "json", timeout=60)
    assert answer.returncode == 0, answer.stderr
    return json.loads(answer.stdout)


def wait_finished(run_dir: Path, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = status(run_dir)
        if found["finished"]:
            return found
        time.sleep(1)
    raise AssertionError(
        f"job in {run_dir} still {found['state']} after {timeout:.0f} s\n"
        + (run_dir / "run.log").read_text(errors="replace")[-3000:]
    )


def metrics(output_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (output_dir / "metrics.jsonl").read_text().splitlines()]


def rising(records: list[dict]) -> bool:
    rewards = [r["reward"] for r in records]
    return sum(rewards[-3:]) / 3 > sum(rewards[:3]) / 3 + 0.1


@pytest.fixture(scope="module")
def time_limited(cluster, demo, tmp_path_factory) -> Path:
    """Submitted before the other tests: a job far longer than its 1-minute limit, checkpointing every step."""
    output = tmp_path_factory.mktemp("timed") / "output"
    return submitted(
        grpo(
            "launch",
            str(demo),
            "--slurm",
            "--time",
            "1",
            "--job-name",
            "timed",
            "--set",
            "max_steps=100000",
            "--set",
            "save_steps=1",
            "--set",
            f"output_dir={output}",
            cwd=demo.parent,
        )
    )


def test_the_demo_trains_as_a_one_node_job_from_grpo_launch(cluster, demo, time_limited, tmp_path):
    output = tmp_path / "output"
    answer = grpo(
        "launch",
        str(demo),
        "--slurm",
        "--nodes",
        "1",
        "--set",
        "max_steps=12",
        "--set",
        "save_steps=6",
        "--set",
        f"output_dir={output}",
        "--wait",
        cwd=demo.parent,
        timeout=400,
    )
    run_dir = submitted(answer)
    assert "Slurm job" in answer.stdout and "completed (COMPLETED)" in answer.stdout, answer.stderr
    script = (run_dir / "job.sbatch").read_text()
    assert "#SBATCH --nodes=1" in script and "--num-processes 1" in script and "#SBATCH --no-requeue" in script
    assert (run_dir / "config.yaml").read_text() == demo.read_text()  # the job trains its own copy
    found = status(run_dir)
    assert (found["state"], found["exit_code"], found["world_size"]) == ("COMPLETED", 0, 1)
    assert found["checkpoints"] == ["checkpoint-6", "checkpoint-12"] and found["steps"] == 12
    records = metrics(output)
    assert [r["step"] for r in records] == list(range(1, 13)) and rising(records), records
    log = grpo("slurm", "logs", str(run_dir)).stdout
    assert log == (run_dir / "run.log").read_text() and "training ended with exit status 0" in log
    assert (output / "model.safetensors").is_file()


@pytest.fixture(scope="module")
def killed(time_limited) -> dict:
    """The time-limited job once Slurm has killed it."""
    return wait_finished(time_limited, 300)


@pytest.fixture(scope="module")
def resumed(killed, time_limited) -> tuple[Path, int]:
    """`grpo slurm resume` of the killed job, submitted without waiting (it trains beside the service's runs)."""
    last = int(killed["checkpoints"][-1].split("-")[1]) if killed["checkpoints"] else 0
    answer = grpo("slurm", "resume", str(time_limited), "--time", "10", "--set", f"max_steps={last + 3}")
    assert f"resuming from {killed['output_dir']}/checkpoint-{last}" in answer.stdout, answer.stdout + answer.stderr
    return submitted(answer), last


def test_a_time_limit_kill_is_reported_with_slurms_reason(killed, time_limited):
    assert (killed["state"], killed["reason"]) == ("TIMEOUT", "TimeLimit"), killed
    assert "was killed at its time limit (TIMEOUT, Reason=TimeLimit)" in killed["description"]
    assert killed["checkpoints"], "the job was killed before its first checkpoint"
    # the kill can land inside a character the job was writing
    assert "DUE TO TIME LIMIT" in (time_limited / "run.log").read_text(errors="replace")
    waited = grpo("slurm", "wait", str(time_limited))
    assert waited.returncode == 2 and "time limit" in waited.stderr
    # this cluster has no slurmdbd: sacct's accounting answers nothing, the job completion log has the job
    from grpo_runtime.clusters.slurm import scheduler

    assert scheduler._from_sacct(killed["job_id"], None, completion=False) is None
    logged = scheduler._from_sacct(killed["job_id"], None, completion=True)
    assert (logged.state, logged.source, logged.finished) == ("TIMEOUT", "sacct --completion", True)


# An operator's Slurm settings: nodes of 2 processes as 2 launchers (so world size 2 is a 2-machine job on this
# one-node cluster), requeue allowed.
SLURM_SERVICE = dict(
    GRPO_WEB_RUNS_BACKEND="slurm",
    GRPO_WEB_RUNS_MAX_PROCESSES=2,
    GRPO_WEB_RUNS_SLURM_PROCESSES_PER_NODE=2,
    GRPO_WEB_RUNS_SLURM_TASKS_PER_NODE=2,
    GRPO_WEB_RUNS_SLURM_REQUEUE=1,
    GRPO_WEB_RUNS_SLURM_POLL_S=1,
)


def steps(run: dict) -> list[int]:
    return [m["step"] for m in run["metrics"]]


def test_runs_from_the_service_are_slurm_jobs(cluster, demo, resumed, make_service):
    """POST /api/v1/runs: a 2-task job (two machines of one process) trains, and a SIGKILLed service follows it
    again by job id; another run, requeued by Slurm, resumes from its newest checkpoint by itself, then is
    cancelled and reported with Slurm's word for it."""
    service = make_service(**SLURM_SERVICE)
    config = yaml.safe_load(demo.read_text())
    config.pop("output_dir")  # the service places it under its runs directory
    text = yaml.safe_dump({**config, "max_steps": 10, "save_steps": 5}, sort_keys=False)
    with service.client() as client:  # 3 processes do not fill whole nodes of 2
        refused = client.post(
            "/api/v1/runs", params={"world_size": 3}, content=text, headers={"Content-Type": "application/yaml"}
        )
    assert refused.status_code == 422 and "GRPO-X008" in {d["code"] for d in refused.json()["diagnostics"]}
    two = service.launch(text, world_size=2)
    long = service.launch(yaml.safe_dump({**config, "max_steps": 100000, "save_steps": 2}), world_size=1)
    script = (service.runs_dir / two["id"] / "job.sbatch").read_text()
    assert "--ntasks=2 --ntasks-per-node=2" in script and "--num_machines 2" in script
    assert "#SBATCH --requeue" in script and "GRPO_WEB" not in script

    # Slurm requeues the long run (as after a preemption): it starts again and goes on from its newest checkpoint
    wait_for(
        lambda: service.run(long["id"])["checkpoints"], 300, "a first checkpoint", lambda: service.run_log(long["id"])
    )
    before = service.run(long["id"])
    saved, job, reached = int(before["checkpoints"][-1].split("-")[1]), before["slurm"]["job_id"], max(steps(before))
    subprocess.run(["scontrol", "requeue", job], check=True, timeout=30)
    wait_for(
        lambda: (
            subprocess.run(
                ["squeue", "-h", "-j", job, "-o", "%T"], capture_output=True, text=True, timeout=30
            ).stdout.strip()
            == "PENDING"
        ),
        60,
        "the job to be pending again",
    )
    # Slurm holds a requeued job back until its old credential expires (cred_expire, 30 s on this cluster); forcing
    # an earlier start makes slurmd refuse the batch script ("Job credential revoked").

    run = service.wait_state(two["id"], ("running", "succeeded"), 240)
    assert run["backend"] == "slurm" and run["slurm"]["job_id"].isdigit()
    service.stop(signal.SIGKILL)  # the jobs go on without the service
    service = make_service(**SLURM_SERVICE)
    done = service.wait_state(two["id"], ("succeeded", "failed", "cancelled"), 300)
    assert (done["state"], done["exit_code"]) == ("succeeded", 0), service.run_log(two["id"])
    assert done["slurm"]["state"] == "COMPLETED" and done["world_size"] == 2
    assert steps(done) == list(range(1, 11)) and rising(done["metrics"])
    assert done["checkpoints"] == ["checkpoint-5", "checkpoint-10"]
    log = service.run_log(two["id"])
    assert "following Slurm job" in log and log.rstrip().endswith("run succeeded")
    # the service's run folder is a job folder: the command line answers for its job through the same backend
    followed = status(service.runs_dir / two["id"])
    assert (followed["job_id"], followed["state"], followed["world_size"]) == (done["slurm"]["job_id"], "COMPLETED", 2)

    def restarted() -> bool:
        return "(restart 1)" in service.run_log(long["id"]) and max(steps(service.run(long["id"]))) > reached + 2

    wait_for(restarted, 300, "the requeued run to train again", lambda: service.run_log(long["id"]))
    found = steps(service.run(long["id"]))
    assert found.count(1) == 1  # it did not start over: it went on from its newest checkpoint (every 2 steps),
    assert all((b - 1) % 2 == 0 and b - 1 >= saved for a, b in zip(found, found[1:]) if b <= a), found  # so any
    # step logged after that checkpoint and before the requeue is trained again from there
    log = service.run_log(long["id"])
    assert "DUE TO JOB REQUEUE" in log and "(restart 1)" in log and f"Slurm job {job} is running" in log
    with service.client() as client:
        assert client.post(f"/api/v1/runs/{long['id']}/cancel").status_code == 202
    cancelled = service.wait_state(long["id"], ("cancelled", "failed", "succeeded"), 60)
    assert cancelled["state"] == "cancelled", cancelled
    assert cancelled["reason"].startswith("cancelled on request; Slurm job ") and "(CANCELLED" in cancelled["reason"]
    assert cancelled["checkpoints"]  # kept
    with service.client() as client:
        assert client.post(f"/api/v1/runs/{long['id']}/cancel").status_code == 409


def test_the_killed_job_resumes_from_its_last_checkpoint(killed, resumed):
    run_dir, last = resumed
    done = wait_finished(run_dir, 300)
    assert done["state"] == "COMPLETED", (run_dir / "run.log").read_text(errors="replace")[-3000:]
    assert done["checkpoints"][-1] == f"checkpoint-{last + 3}"
    steps = [r["step"] for r in metrics(Path(killed["output_dir"]))]
    assert steps[-3:] == [last + 1, last + 2, last + 3]  # it went on from the checkpoint, not from step 1
    script = (run_dir / "job.sbatch").read_text()
    assert f'resume_from_checkpoint="{killed["output_dir"]}/checkpoint-{last}"' in script
    assert "#SBATCH --time=10" in script and "--set max_steps=" in script
