"""Real runs through a real service: launch, watch, succeed, cancel, resume, a SIGKILL of the service in the
middle of a run, and a restart that finds everything. Every run trains the tiny local model with `grpo launch`
(accelerate); the three runs start in two waves to keep the test near a minute on two busy cores."""

from __future__ import annotations

import json
import signal
import threading

import pytest

from grpo_web.runs import procs
from tests.support.env import wait_for
from tests.support.run_config import run_yaml

pytestmark = pytest.mark.slow


class follow_log(threading.Thread):
    """GET /logs?follow=true in a thread: the chunked answer grows with the log and ends with the run."""

    def __init__(self, service, run_id: str):
        super().__init__(daemon=True)
        self.service, self.run_id, self.text = service, run_id, ""
        self.start()

    def run(self) -> None:
        with self.service.client() as client:
            with client.stream("GET", f"/api/v1/runs/{self.run_id}/logs", params={"follow": "true"}) as answer:
                for chunk in answer.iter_text():
                    self.text += chunk


def steps(run: dict) -> list[int]:
    return [m["step"] for m in run["metrics"]]


def test_launch_watch_cancel_resume_kill_the_service_and_find_it_all(make_service, assets):
    service = make_service(GRPO_WEB_RUNS_MAX_CONCURRENT=2, GRPO_WEB_RUNS_CANCEL_GRACE_S=5)
    first = service.launch(run_yaml(assets, max_steps=12, output_dir="exp/first"))
    followed = follow_log(service, first["id"])  # streams the first run's log until the run ends
    second = service.launch(run_yaml(assets, max_steps=150, save_steps=5))
    assert first["output_dir"] == str(service.runs_dir.resolve() / "exp" / "first")
    with service.client() as client:  # one output_dir, one writer
        answer = client.post(
            "/api/v1/runs",
            content=run_yaml(assets, output_dir="exp/first"),
            headers={"Content-Type": "application/yaml"},
        )
        assert answer.status_code == 422 and first["id"] in answer.json()["diagnostics"][0]["message"]
        assert answer.json()["diagnostics"][0]["code"] == "GRPO-X007"
        assert client.post(f"/api/v1/runs/{first['id']}/resume").status_code == 409  # still running

    # watch the second run's metrics appear while it runs, then cancel it once it has a checkpoint
    seen: list[int] = []

    def growing_with_a_checkpoint() -> bool:
        run = service.run(second["id"])
        assert run["state"] in ("queued", "running"), run
        seen.append(len(run["metrics"]))
        return run["state"] == "running" and bool(run["checkpoints"]) and len(set(seen) - {0}) >= 2

    wait_for(growing_with_a_checkpoint, 120, "the second run's metrics", lambda: service.run_log(second["id"]))
    with service.client() as client:
        answer = client.post(f"/api/v1/runs/{second['id']}/cancel")
    assert answer.status_code == 202 and answer.json()["cancel_requested"] is True
    cancelled = service.wait_state(second["id"], ("cancelled",), 30)
    assert cancelled["reason"] == "cancelled on request" and max(steps(cancelled)) < 150
    output = service.runs_dir / second["id"] / "output"
    assert cancelled["checkpoints"] and all(
        (output / c / "model.safetensors").is_file() for c in cancelled["checkpoints"]
    )
    process = json.loads((service.runs_dir / second["id"] / "process.json").read_text())
    assert not procs.alive(process["pid"], process["start_time"]) and not procs.descendants(process["pid"])
    with service.client() as client:
        assert client.post(f"/api/v1/runs/{second['id']}/cancel").status_code == 409

    done = service.wait_state(first["id"], ("succeeded", "failed"), 120)
    assert done["state"] == "succeeded" and done["exit_code"] == 0, service.run_log(first["id"])
    assert steps(done) == list(range(1, 13)) and {"reward", "loss", "learning_rate"} <= set(done["metrics"][0])
    assert done["checkpoints"] == [f"checkpoint-{step}" for step in (2, 4, 6, 8, 10, 12)]
    first_output = service.runs_dir / "exp" / "first"
    assert (first_output / "model.safetensors").is_file() and (first_output / "grpo_config.yaml").is_file()
    log = service.run_log(first["id"])
    followed.join(timeout=30)
    assert followed.text == log and log.rstrip().endswith("run succeeded")
    with service.client() as client:  # reading on from an offset gives the rest, and says where it ended
        answer = client.get(f"/api/v1/runs/{first['id']}/logs", params={"offset": 10})
        assert answer.text == log[10:] and answer.headers["X-Log-Offset"] == str(len(log.encode()))
        later = client.get(f"/api/v1/runs/{first['id']}", params={"metrics_after": 10}).json()["metrics"]
        assert [m["step"] for m in later] == [11, 12]

    # resume the cancelled run from its last checkpoint, and kill the service with SIGKILL while it trains
    with service.client() as client:
        answer = client.post(f"/api/v1/runs/{second['id']}/resume")
    assert answer.status_code == 201, answer.text
    resumed_id = answer.json()["id"]
    resumed_from = int(cancelled["checkpoints"][-1].split("-")[1])
    wait_for(
        lambda: max(steps(service.run(resumed_id)), default=0) > resumed_from + 1,
        120,
        "the resumed run to log new steps",
        lambda: service.run_log(resumed_id),
    )
    before_kill = {
        run_id: (service.run(run_id), service.run_log(run_id)) for run_id in (first["id"], second["id"], resumed_id)
    }
    service.stop(signal.SIGKILL)

    again = make_service()
    # re-attached (its pid and start time still match), or finished while the service was down
    assert again.run(resumed_id)["state"] in ("running", "succeeded")
    resumed = again.wait_state(resumed_id, ("succeeded", "failed"), 120)
    assert resumed["state"] == "succeeded" and resumed["exit_code"] == 0, again.run_log(resumed_id)
    assert resumed["resumed_from"] == second["id"]
    assert resumed["resume_from_checkpoint"].endswith(cancelled["checkpoints"][-1])
    assert steps(resumed) == list(range(1, 151))  # the history before the checkpoint, then the rest

    # nothing recorded before the kill is missing, and the finished runs are exactly as they were
    run, log = before_kill.pop(resumed_id)
    assert resumed["metrics"][: len(run["metrics"])] == run["metrics"]
    assert again.run_log(resumed_id).startswith(log)
    for run_id, (run, log) in before_kill.items():
        now = again.run(run_id)
        assert set(run.pop("checkpoints")) <= set(now.pop("checkpoints"))  # the resumed run adds its own
        before_progress, now_progress = run.pop("progress"), now.pop("progress")  # and so its last checkpoint
        run.pop("resume"), now.pop("resume")  # (what a resume would start from, too)
        assert before_progress["last_checkpoint_step"] <= now_progress["last_checkpoint_step"]
        assert now == run and again.run_log(run_id) == log
    with again.client() as client:
        listed = client.get("/api/v1/runs").json()["runs"]
    assert [(r["id"], r["state"]) for r in listed] == [
        (resumed_id, "succeeded"),
        (second["id"], "cancelled"),
        (first["id"], "succeeded"),
    ]
