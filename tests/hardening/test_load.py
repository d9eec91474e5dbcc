"""Bounded load on a real `grpo serve` (its own process) from a second process (fuzz/load_validate.py).

32 keep-alive connections for 10 s or 5,000 requests, whichever comes first, cycling through the corpus, JSON
copies and hostile bodies: every answer is status 200 and exactly grpo_schema's file object for that body, and the
service's peak resident memory stays bounded. The second test does the same while a run trains in the service.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.env import wait_for
from tests.support.run_config import run_yaml
from tests.support.service import Service, stop_runs

pytest.importorskip("uvicorn", reason="the service needs the web extra")

DRIVER = Path(__file__).resolve().parents[2] / "fuzz" / "load_validate.py"
LOAD = ["--connections", "32", "--seconds", "10", "--max-requests", "5000"]
PEAK_RSS_MB = 600  # the service alone peaks near 100 MB; runs train in processes of their own


def drive(url: str) -> dict:
    done = subprocess.run([sys.executable, str(DRIVER), url, *LOAD], capture_output=True, text=True, timeout=180)
    summary = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else {}
    assert done.returncode == 0, (summary, done.stderr[-2000:])
    return summary


def peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        pytest.skip("peak memory is read from /proc (Linux)")
    line = next(line for line in status.read_text().splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def report(what: str, summary: dict, rss: float) -> None:
    print(
        f"\n{what}: {summary['requests']} requests in {summary['seconds']} s = {summary['requests_per_s']} req/s, "
        f"latency ms {summary['latency_ms']}, peak RSS {rss:.0f} MB"
    )


@pytest.fixture
def service(tmp_path):
    started = Service(tmp_path / "runs", runs=False).start()
    yield started
    started.stop()


@pytest.mark.slow
def test_the_service_answers_correctly_under_load(service):
    summary = drive(service.url)
    rss = peak_rss_mb(service.process.pid)
    report("load", summary, rss)
    assert summary["requests"] > 0 and summary["server_errors"] == 0 and summary["wrong_answers"] == 0
    assert rss < PEAK_RSS_MB


@pytest.mark.slow
def test_the_service_answers_correctly_under_load_while_a_run_trains(tmp_path, assets):  # noqa: F811
    pytest.importorskip("torch", reason="runs train with grpo_runtime")
    trainer = Service(tmp_path / "runs").start()
    try:
        run = trainer.launch(run_yaml(assets, max_steps=10_000, save_steps=10_000))
        trainer.wait_state(run["id"], ("running",))
        wait_for(lambda: (trainer.run(run["id"])["step"] or 0) >= 1, 300, "the run's first optimizer step")
        before = trainer.run(run["id"])["step"]
        summary = drive(trainer.url)
        during = trainer.run(run["id"])
        rss = peak_rss_mb(trainer.process.pid)
        report("load while training", summary, rss)
        print(f"the run went from step {before} to step {during['step']} during the load")
        assert during["state"] == "running", during  # the run was not disturbed
        assert summary["requests"] > 0 and summary["server_errors"] == 0 and summary["wrong_answers"] == 0
        assert rss < PEAK_RSS_MB
        with trainer.client() as client:
            assert client.post(f"/api/v1/runs/{run['id']}/cancel").status_code == 202
        trainer.wait_state(run["id"], ("cancelled",))
    finally:
        trainer.stop()
        stop_runs(tmp_path / "runs")
