"""One real Ray cluster for every test of tests/ray (started once, stopped after the last): a head and a worker
node of one CPU each on this machine (`ray start`, CPU only), so a run of 2 processes needs both nodes. Every
port is chosen free, so suites running beside each other do not collide. The demo (`grpo demo`) to submit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.support.env import free_port, offline_env

pytest.importorskip("ray", reason="Ray is the `ray` extra (pip install -e '.[ray]')")

GRPO = [sys.executable, "-m", "grpo_schema"]
ENV = offline_env(RAY_USAGE_STATS_ENABLED="0")
RAY = str(Path(sys.executable).parent / "ray")


def node_ports() -> list[str]:
    """The ports of one node's own servers: fixed defaults would collide between two nodes of one machine."""
    names = (
        "--node-manager-port",
        "--object-manager-port",
        "--dashboard-agent-listen-port",
        "--dashboard-agent-grpc-port",
        "--runtime-env-agent-port",
        "--metrics-export-port",
    )
    return [item for name in names for item in (name, str(free_port()))]


@dataclass
class RayCluster:
    address: str  # the dashboard (Jobs API)
    gcs: str
    processes: list[subprocess.Popen]

    def nodes(self) -> list[dict]:
        from ray.util.state import list_nodes

        return [
            n.__dict__ if hasattr(n, "__dict__") else dict(n)
            for n in list_nodes(address=self.address, filters=[("state", "=", "ALIVE")])
        ]


def _start(arguments: list[str], log: Path) -> subprocess.Popen:
    """A node in the foreground (--block): ending its process ends the node."""
    with log.open("wb") as handle:
        return subprocess.Popen(
            [RAY, "start", "--block", "--num-cpus", "1", "--disable-usage-stats", *node_ports(), *arguments],
            env=ENV,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )


def _wait_for(check, processes: list[subprocess.Popen], what: str, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while True:
        try:
            if check():
                return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        if time.time() > deadline or any(p.poll() is not None for p in processes):
            raise RuntimeError(f"{what} in {timeout:.0f} s")
        time.sleep(1)


def _stop(processes: list[subprocess.Popen]) -> None:
    for process in reversed(processes):  # the worker first, then the head
        process.terminate()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()


def _start_worker(cluster: RayCluster, temp: Path, logs: Path) -> None:
    """The worker node, in a folder of its own as on another machine (nodes sharing one would each send every line
    to the job's log). `ray start` gives its raylet a fixed 30 s to register with the head, which two cores busy with
    the suite's other worker can exceed: a worker whose start failed is started once more."""
    for attempt in (1, 2):
        worker = _start(
            ["--address", cluster.gcs, "--node-ip-address", "127.0.0.1", "--temp-dir", f"{temp}-w"],
            logs / f"worker-{attempt}.log",
        )
        cluster.processes.append(worker)
        try:
            _wait_for(lambda: len(cluster.nodes()) == 2, cluster.processes, "the Ray worker did not join the head", 240)
            return
        except RuntimeError:
            if attempt == 2 or worker.poll() is None or cluster.processes[0].poll() is not None:
                raise
            cluster.processes.remove(worker)
            shutil.rmtree(f"{temp}-w", ignore_errors=True)


@pytest.fixture(scope="package")
def ray_cluster(tmp_path_factory):
    """The head (GCS, dashboard with the Jobs API) and one worker node, each with 1 CPU."""
    logs = tmp_path_factory.mktemp("ray-logs")
    dashboard, gcs = free_port(), free_port()
    temp = Path("/tmp") / f"grpo-ray-{os.getpid()}"  # short: Ray's socket paths must fit in 107 bytes
    head = _start(
        [
            "--head",
            "--port",
            str(gcs),
            "--dashboard-port",
            str(dashboard),
            "--include-dashboard",
            "true",
            "--ray-client-server-port",
            str(free_port()),  # the head's own: 10001 by default
            "--dashboard-host",
            "127.0.0.1",
            "--node-ip-address",
            "127.0.0.1",
            "--temp-dir",
            str(temp),
        ],
        logs / "head.log",
    )
    cluster = RayCluster(f"http://127.0.0.1:{dashboard}", f"127.0.0.1:{gcs}", [head])
    try:
        from ray.job_submission import JobSubmissionClient

        _wait_for(
            lambda: JobSubmissionClient(cluster.address).list_jobs() is not None,
            cluster.processes,
            "the Ray head did not start",
        )
        _start_worker(cluster, temp, logs)
    except RuntimeError as error:
        _stop(cluster.processes)
        for folder in (temp, Path(f"{temp}-w")):
            shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"{error}\n" + "\n".join(p.read_text(errors="replace")[-2000:] for p in logs.iterdir()))
    yield cluster
    _stop(cluster.processes)
    for folder in (temp, Path(f"{temp}-w")):
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def no_jobs_left(ray_cluster):
    """After the test, even a failed one: stop the cluster's jobs that still run, so none trains on."""
    yield
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(ray_cluster.address)
    running = [job.submission_id for job in client.list_jobs() if not job.status.is_terminal()]
    for job in running:
        client.stop_job(job)
    deadline = time.time() + 60
    while running and time.time() < deadline:
        running = [job for job in running if not client.get_job_status(job).is_terminal()]
        time.sleep(1)


@pytest.fixture(scope="package")
def demo(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("demo")
    subprocess.run([*GRPO, "demo", str(directory)], check=True, env=ENV, capture_output=True)
    return directory / "config.yaml"


def ray_service_env(cluster: RayCluster, **more: str) -> dict[str, str]:
    """A service whose runs are jobs of the test cluster (GRPO_WEB_RUNS_BACKEND=ray)."""
    return {
        "GRPO_WEB_RUNS_BACKEND": "ray",
        "GRPO_WEB_RUNS_RAY_ADDRESS": cluster.address,
        "GRPO_WEB_RUNS_MAX_PROCESSES": "4",
        "GRPO_WEB_RUNS_RAY_POLL_S": "1",
        **more,
    }


def demo_text(demo: Path, **overrides) -> str:
    """The demo's config for the service: its output_dir left for the service to place under its runs folder."""
    config = yaml.safe_load(demo.read_text())
    config.pop("output_dir")
    return yaml.safe_dump({**config, **overrides}, sort_keys=False)
